#!/usr/bin/env bash
# Builds the ApplicationSet template module (gotemplate/: Argo CD's Go-side ApplicationSet functions,
# Go text/template + sprig v3.3.0 as Argo CD v3.2 pins them) to WebAssembly (GOOS=js GOARCH=wasm)
# and places it, with the Go toolchain's matching wasm_exec.js, in dist/gotemplate/.
#
# The module is fetched through the Go module proxy and verified against gotemplate/go.sum; the
# build is cached in ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/appset-gotemplate/<key>/, keyed by the
# hash of the Go sources, go.mod, go.sum and the Go version, so only the first build on a machine
# (about 30 s on 2 cores) pays; later runs copy the cached file. Same conventions as
# test/scripts/obtain-*.sh (GOTOOLCHAIN=local, flock, atomic publish).
#
# Usage: libs/appset/scripts/build-gotemplate.sh [--check] [--force] [--print-path]
#   --check       exit 0 if the module is cached, 1 if not; never build
#   --force       rebuild even if cached
#   --print-path  print only the cached module's directory on stdout
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../../../test/scripts/lib/go-tool.sh
source "$here/../../test/scripts/lib/go-tool.sh"

GT_NAME=build-gotemplate
gt_parse_args --print-path "$@"
# An image build (deploy/Dockerfile) builds the module in its Go stage and places it in
# dist/gotemplate/ with a PREBUILT marker, so the Node.js build stage needs no Go toolchain.
if [[ -f "$here/dist/gotemplate/PREBUILT" ]]; then
  gt_say "using the module placed in $here/dist/gotemplate by the image build"
  exit 0
fi
gt_find_go
src="$here/gotemplate"
key="$(cd "$src" && { cat go.mod go.sum ./*.go; "$go_cmd" env GOVERSION; } | sha256sum | cut -c1-16)"
GT_KEY="$key"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/appset-gotemplate"
GT_BINDIR="$GT_DIR/$key"
GT_BINARIES=(appset.wasm)
GT_FILES=(wasm_exec.js)
GT_NOT_CACHED="not cached in $GT_BINDIR; run: bash libs/appset/scripts/build-gotemplate.sh"
GT_NO_GO="no Go toolchain found: the ApplicationSet template module is built from Go (install Go or set GO=/path/to/go)"

gt_build() {
  local work="$1" goroot
  goroot="$("$go_cmd" env GOROOT)"
  gt_say "building the ApplicationSet template module with $("$go_cmd" version)"
  GOOS=js GOARCH=wasm GOFLAGS=-mod=readonly gt_go_progress appset.wasm "$work/build.log" "$src" \
    build -v -trimpath -ldflags='-s -w' -o "$work/appset.wasm" .
  chmod +x "$work/appset.wasm"
  if [[ -f "$goroot/lib/wasm/wasm_exec.js" ]]; then cp "$goroot/lib/wasm/wasm_exec.js" "$work/"
  else cp "$goroot/misc/wasm/wasm_exec.js" "$work/"; fi
}
gt_finish() {
  mkdir -p "$here/dist/gotemplate"
  cp -f "$GT_BINDIR/appset.wasm" "$GT_BINDIR/wasm_exec.js" "$here/dist/gotemplate/"
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR"; else gt_say "ready: $here/dist/gotemplate/appset.wasm ($key)"; fi
}
gt_obtain
