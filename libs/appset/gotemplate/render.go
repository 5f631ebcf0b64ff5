// Rendering of generated Applications: RenderTemplateParams, templatePatch and the finalizer rule of
// Argo CD v3.2 (applicationset/utils/utils.go, applicationset/controllers/template/*.go).
package main

import (
	"encoding/json"
	"fmt"
)

const resourcesFinalizer = "resources-finalizer.argocd.argoproj.io"

// renderApplication renders one Application from the template (an object with metadata and spec).
func renderApplication(r *Renderer, tmpl map[string]any, params map[string]any, preserve bool, patch *string) (map[string]any, error) {
	app := tmpl
	if len(params) > 0 {
		rendered, err := r.DeeplyReplace(tmpl, params)
		if err != nil {
			return nil, err
		}
		app = rendered.(map[string]any)
		meta, _ := app["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			app["metadata"] = meta
		}
		if fins, _ := meta["finalizers"].([]any); !preserve && len(fins) == 0 {
			meta["finalizers"] = []any{resourcesFinalizer}
		}
	}
	if patch == nil {
		return app, nil
	}
	replaced, err := r.Replace(*patch, params)
	if err != nil {
		return nil, fmt.Errorf("error replacing values in templatePatch: %w", err)
	}
	return applyTemplatePatch(app, replaced)
}

func applyTemplatePatch(app map[string]any, templatePatch string) (map[string]any, error) {
	converted, err := ConvertYAMLToJSON(templatePatch)
	if err != nil {
		return nil, fmt.Errorf("error while converting template to json %q: %w", converted, err)
	}
	var patch map[string]any
	if err := json.Unmarshal([]byte(converted), &patch); err != nil {
		return nil, fmt.Errorf("invalid templatePatch %q: %w", converted, err)
	}
	// Round-trip the Application so the patch never aliases the template.
	raw, err := json.Marshal(app)
	if err != nil {
		return nil, fmt.Errorf("error while marhsalling Application %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	project := getPath(doc, "spec", "project")
	out := mergePatch(doc, patch).(map[string]any)
	// As Argo: a templatePatch can never change the project.
	if spec, ok := out["spec"].(map[string]any); ok {
		if project == nil {
			delete(spec, "project")
		} else {
			spec["project"] = project
		}
	}
	return out, nil
}

// mergePatch applies a patch as a strategic merge patch does on a type without patch strategies:
// objects merge key by key, null deletes, anything else (lists included) replaces.
func mergePatch(target any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

func getPath(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}
