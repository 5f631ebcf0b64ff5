// capstan-jsonnet evaluates one Argo CD directory application's .jsonnet file with go-jsonnet (the
// Go implementation Argo CD links), confined to the repository: every import, importstr and
// importbin is resolved (symbolic links included) and refused unless it stays inside --root.
// Variables come from a JSON file (--vars), never from the command line, since they may hold
// secrets. The evaluated JSON goes to stdout.
//
// Usage: capstan-jsonnet --root <repo> --file <file.jsonnet> [--vars <vars.json>] [-J <dir>]...
// vars.json: {"extVars":[{"name":"n","value":"v","code":false}],"tlas":[...]}
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-jsonnet"
)

type variable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Code  bool   `json:"code"`
}

type variables struct {
	ExtVars []variable `json:"extVars"`
	Tlas    []variable `json:"tlas"`
}

type jpaths []string

func (j *jpaths) String() string     { return strings.Join(*j, ",") }
func (j *jpaths) Set(v string) error { *j = append(*j, v); return nil }

// confinedImporter resolves imports like go-jsonnet's FileImporter (next to the importing file,
// then each library path) but only inside root.
type confinedImporter struct {
	root   string
	jpaths []string
	cache  map[string]jsonnet.Contents
}

func (c *confinedImporter) inside(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if real != c.root && !strings.HasPrefix(real, c.root+string(os.PathSeparator)) {
		return "", errors.New("outside the repository")
	}
	return real, nil
}

func (c *confinedImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	var candidates []string
	if filepath.IsAbs(importedPath) {
		candidates = []string{importedPath}
	} else {
		candidates = append(candidates, filepath.Join(filepath.Dir(importedFrom), importedPath))
		for _, j := range c.jpaths {
			candidates = append(candidates, filepath.Join(j, importedPath))
		}
	}
	for _, candidate := range candidates {
		real, err := c.inside(candidate)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return jsonnet.Contents{}, "", fmt.Errorf("import %q: %v", importedPath, err)
		}
		if contents, ok := c.cache[real]; ok {
			return contents, real, nil
		}
		data, err := os.ReadFile(real)
		if err != nil {
			return jsonnet.Contents{}, "", fmt.Errorf("import %q: %v", importedPath, err)
		}
		contents := jsonnet.MakeContentsRaw(data)
		c.cache[real] = contents
		return contents, real, nil
	}
	return jsonnet.Contents{}, "", fmt.Errorf("import %q: not found in the repository", importedPath)
}

func run() error {
	var root, file, varsFile string
	var libs jpaths
	flag.StringVar(&root, "root", "", "repository root")
	flag.StringVar(&file, "file", "", "the .jsonnet file")
	flag.StringVar(&varsFile, "vars", "", "JSON file with extVars and tlas")
	flag.Var(&libs, "J", "library directory (repeatable)")
	flag.Parse()
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	importer := &confinedImporter{root: realRoot, cache: map[string]jsonnet.Contents{}}
	for _, j := range libs {
		importer.jpaths = append(importer.jpaths, j)
	}
	vm := jsonnet.MakeVM()
	vm.Importer(importer)
	if varsFile != "" {
		data, err := os.ReadFile(varsFile)
		if err != nil {
			return err
		}
		var vars variables
		if err := json.Unmarshal(data, &vars); err != nil {
			return err
		}
		for _, v := range vars.ExtVars {
			if v.Code {
				vm.ExtCode(v.Name, v.Value)
			} else {
				vm.ExtVar(v.Name, v.Value)
			}
		}
		for _, v := range vars.Tlas {
			if v.Code {
				vm.TLACode(v.Name, v.Value)
			} else {
				vm.TLAVar(v.Name, v.Value)
			}
		}
	}
	realFile, err := importer.inside(file)
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	// Through the importer, so that imports are resolved next to the file's real location.
	out, err := vm.EvaluateFile(realFile)
	if err != nil {
		return err
	}
	_, err = os.Stdout.WriteString(out)
	return err
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
