//go:build js && wasm

// The Capstan ApplicationSet template module: Argo CD's Go-side ApplicationSet functions, compiled to
// WebAssembly (GOOS=js GOARCH=wasm) and called in-process by @capstan/appset-engine. It registers one
// global function, capstanAppset(requestJSON) -> responseJSON, and then waits forever.
package main

import (
	"syscall/js"
)

func main() {
	js.Global().Set("capstanAppset", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 1 || args[0].Type() != js.TypeString {
			return `{"error":"capstanAppset takes one JSON string"}`
		}
		return handle(args[0].String())
	}))
	if ready := js.Global().Get("capstanAppsetReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}
