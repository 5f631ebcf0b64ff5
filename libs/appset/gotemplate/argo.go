// Argo CD v3.2's ApplicationSet parameter and template functions (applicationset/utils/utils.go,
// applicationset/generators/*.go), restated over generic JSON values instead of Argo's typed structs.
// Same libraries at the same versions: text/template + sprig v3.3.0 with Argo's FuncMap changes,
// valyala/fasttemplate, sigs.k8s.io/yaml, jeremywohl/flatten, dario.cat/mergo, gosimple/slug.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/gosimple/slug"
	"github.com/valyala/fasttemplate"
	"sigs.k8s.io/yaml"
)

var sprigFuncMap = sprig.GenericFuncMap()

func init() {
	// As Argo CD: no way for a template to learn about the environment.
	delete(sprigFuncMap, "env")
	delete(sprigFuncMap, "expandenv")
	delete(sprigFuncMap, "getHostByName")
	sprigFuncMap["normalize"] = SanitizeName
	sprigFuncMap["slugify"] = SlugifyName
	sprigFuncMap["toYaml"] = toYAML
	sprigFuncMap["fromYaml"] = fromYAML
	sprigFuncMap["fromYamlArray"] = fromYAMLArray
}

var invalidDNSNameChars = regexp.MustCompile("[^-a-z0-9.]")

// SanitizeName is Argo's `normalize`.
func SanitizeName(name string) string {
	name = strings.ToLower(name)
	name = invalidDNSNameChars.ReplaceAllString(name, "-")
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}

// SlugifyName is Argo's `slugify` (maxSize, smartTruncate, name).
func SlugifyName(args ...any) string {
	maxSize := 50
	enableSmartTruncate := true
	name := ""
	for idx, arg := range args {
		switch idx {
		case len(args) - 1:
			name = arg.(string)
		case 0:
			maxSize = arg.(int)
		case 1:
			enableSmartTruncate = arg.(bool)
		}
	}
	slug.EnableSmartTruncate = enableSmartTruncate
	slug.MaxLength = maxSize
	return slug.Make(SanitizeName(name))
}

func toYAML(v any) (string, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(data), "\n"), nil
}

func fromYAML(str string) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(str), &m); err != nil {
		return nil, err
	}
	return m, nil
}

func fromYAMLArray(str string) ([]any, error) {
	a := []any{}
	if err := yaml.Unmarshal([]byte(str), &a); err != nil {
		return nil, err
	}
	return a, nil
}

// errOutputLimit is returned when a single rendered string would exceed the output bound.
var errOutputLimit = errors.New("template output exceeds the size limit")

type limitedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.limit > 0 && b.Len()+len(p) > b.limit {
		return 0, errOutputLimit
	}
	return b.Buffer.Write(p)
}

var isTemplatedRegex = regexp.MustCompile(".*{{.*}}.*")

// Renderer carries the per-request options of Argo's Render.Replace.
type Renderer struct {
	GoTemplate bool
	Options    []string
	// MaxBytes bounds each rendered string (0: unbounded).
	MaxBytes int
}

// Replace is Argo's Render.Replace: Go text/template + sprig, or fasttemplate `{{param}}`.
func (r *Renderer) Replace(tmpl string, replaceMap map[string]any) (string, error) {
	if r.GoTemplate {
		t, err := template.New("").Funcs(sprigFuncMap).Parse(tmpl)
		if err != nil {
			return "", fmt.Errorf("failed to parse template %s: %w", tmpl, err)
		}
		for _, option := range r.Options {
			t = t.Option(option)
		}
		buf := &limitedBuffer{limit: r.MaxBytes}
		if err = t.Execute(buf, replaceMap); err != nil {
			return "", fmt.Errorf("failed to execute go template %s: %w", tmpl, err)
		}
		return buf.String(), nil
	}
	if !isTemplatedRegex.MatchString(tmpl) {
		return tmpl, nil
	}
	fst, err := fasttemplate.NewTemplate(tmpl, "{{", "}}")
	if err != nil {
		return "", fmt.Errorf("invalid template: %w", err)
	}
	buf := &limitedBuffer{limit: r.MaxBytes}
	_, err = fst.ExecuteFunc(buf, func(w io.Writer, tag string) (int, error) {
		trimmed := strings.TrimSpace(tag)
		replacement, ok := replaceMap[trimmed].(string)
		if trimmed == "" || !ok {
			return fmt.Fprintf(w, "{{%s}}", tag)
		}
		return w.Write([]byte(replacement))
	})
	if err != nil {
		return "", err
	}
	return buf.String(), nil
}

// DeeplyReplace is Argo's deeplyReplace over a JSON value: every string and every map key is
// rendered; map entries whose value is null are dropped (as Argo skips nil map values).
func (r *Renderer) DeeplyReplace(v any, params map[string]any) (any, error) {
	switch t := v.(type) {
	case string:
		return r.Replace(t, params)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			rv, err := r.DeeplyReplace(e, params)
			if err != nil {
				return nil, err
			}
			out[i] = rv
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		// Sorted keys: the first error is the same on every run (Argo walks maps in random order).
		for _, k := range slices.Sorted(maps.Keys(t)) {
			e := t[k]
			if e == nil {
				continue
			}
			rv, err := r.DeeplyReplace(e, params)
			if err != nil {
				return nil, err
			}
			key, err := r.Replace(k, params)
			if err != nil {
				return nil, err
			}
			out[key] = rv
		}
		return out, nil
	default:
		return v, nil
	}
}

// ConvertYAMLToJSON is Argo's: a string starting with `{` is taken as JSON, anything else as YAML.
func ConvertYAMLToJSON(str string) (string, error) {
	trimmed := strings.TrimSpace(str)
	if trimmed != "" && trimmed[0] == '{' {
		return str, nil
	}
	j, err := yaml.YAMLToJSON([]byte(str))
	if err != nil {
		return str, err
	}
	return string(j), nil
}

// marshal encodes like encoding/json without HTML escaping of <, > and &.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
