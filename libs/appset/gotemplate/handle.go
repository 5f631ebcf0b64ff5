// The request protocol of the module: one JSON request, one JSON response, no state between calls.
package main

import (
	"encoding/json"
	"fmt"
)

type request struct {
	Op         string   `json:"op"`
	GoTemplate bool     `json:"goTemplate"`
	Options    []string `json:"options"`
	MaxBytes   int      `json:"maxBytes"`

	// replace, replaceTree, render
	Template string           `json:"template"`
	Tree     any              `json:"tree"`
	Params   map[string]any   `json:"params"`
	Batch    []map[string]any `json:"batch"`
	Preserve bool             `json:"preserve"`
	Patch    *string          `json:"patch"`

	// list
	Elements     []json.RawMessage `json:"elements"`
	ElementsYaml string            `json:"elementsYaml"`

	// clusters, git
	Values   map[string]string `json:"values"`
	Clusters []clusterEntry    `json:"clusters"`
	FlatList bool              `json:"flatList"`
	Paths    []string          `json:"paths"`
	Dirs     []pathItem        `json:"directories"`
	Files    []gitFile         `json:"files"`
	Prefix   string            `json:"pathParamPrefix"`

	// flatten, matrix, merge
	Pairs     [][2]map[string]any `json:"pairs"`
	Sets      [][]map[string]any  `json:"sets"`
	MergeKeys []string            `json:"mergeKeys"`
}

type itemResult struct {
	Value any    `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

type response struct {
	Value any          `json:"value,omitempty"`
	Items []itemResult `json:"items,omitempty"`
	Error string       `json:"error,omitempty"`
}

func handle(in string) (out string) {
	defer func() {
		if rec := recover(); rec != nil {
			out = encode(response{Error: fmt.Sprintf("%v", rec)})
		}
	}()
	var req request
	if err := json.Unmarshal([]byte(in), &req); err != nil {
		return encode(response{Error: "bad request: " + err.Error()})
	}
	r := &Renderer{GoTemplate: req.GoTemplate, Options: req.Options, MaxBytes: req.MaxBytes}
	value, items, err := dispatch(r, &req)
	if err != nil {
		return encode(response{Error: err.Error()})
	}
	return encode(response{Value: value, Items: items})
}

func dispatch(r *Renderer, req *request) (any, []itemResult, error) {
	switch req.Op {
	case "replace":
		v, err := r.Replace(req.Template, req.Params)
		return v, nil, err
	case "replaceTree":
		v, err := r.DeeplyReplace(req.Tree, req.Params)
		return v, nil, err
	case "render":
		tmpl, ok := req.Tree.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("application template is empty")
		}
		items := make([]itemResult, len(req.Batch))
		for i, params := range req.Batch {
			// Each Application renders from its own copy: DeeplyReplace never writes to its input,
			// but an unrendered template (no params) is shared, so copy it.
			app, err := renderApplication(r, deepCopy(tmpl).(map[string]any), params, req.Preserve, req.Patch)
			if err != nil {
				items[i] = itemResult{Error: err.Error()}
			} else {
				items[i] = itemResult{Value: app}
			}
		}
		return nil, items, nil
	case "list":
		v, err := listParams(req.Elements, req.ElementsYaml, req.GoTemplate)
		return v, nil, err
	case "clusters":
		v, err := clusterParams(r, req.Clusters, req.Values, req.FlatList)
		return v, nil, err
	case "gitDirectories":
		v, err := gitDirectoryParams(r, req.Paths, req.Dirs, req.Values, req.Prefix)
		return v, nil, err
	case "gitFiles":
		v, err := gitFileParams(r, req.Files, req.Values, req.Prefix)
		return v, nil, err
	case "flatten":
		items := make([]itemResult, len(req.Batch))
		for i, p := range req.Batch {
			f, err := flattenParameters(p)
			if err != nil {
				items[i] = itemResult{Error: err.Error()}
			} else {
				items[i] = itemResult{Value: f}
			}
		}
		return nil, items, nil
	case "matrix":
		out := make([]map[string]any, 0, len(req.Pairs))
		for _, pair := range req.Pairs {
			c, err := matrixCombine(pair[0], pair[1], req.GoTemplate)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, c)
		}
		return out, nil, nil
	case "merge":
		v, err := mergeSets(req.MergeKeys, req.Sets, req.GoTemplate)
		return v, nil, err
	case "normalize":
		return SanitizeName(req.Template), nil, nil
	}
	return nil, nil, fmt.Errorf("unknown op %q", req.Op)
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

func encode(r response) string {
	b, err := marshal(r)
	if err != nil {
		b, _ = marshal(response{Error: "cannot encode the result: " + err.Error()})
	}
	return string(b)
}
