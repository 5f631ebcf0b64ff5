// Argo CD v3.2's generator parameter rules that depend on Go's own formatting and libraries
// (fmt %v, path.Match, sigs.k8s.io/yaml, flatten, mergo), so that Capstan's parameters are Argo's.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"strconv"
	"strings"

	"dario.cat/mergo"
	"github.com/jeremywohl/flatten"
	"sigs.k8s.io/yaml"
)

// listParams is ListGenerator.GenerateParams.
func listParams(elements []json.RawMessage, elementsYaml string, goTemplate bool) ([]map[string]any, error) {
	res := make([]map[string]any, len(elements))
	for i, raw := range elements {
		params := map[string]any{}
		var element map[string]any
		if err := json.Unmarshal(raw, &element); err != nil {
			return nil, fmt.Errorf("error unmarshling list element %w", err)
		}
		if goTemplate {
			res[i] = element
			continue
		}
		for key, value := range element {
			if key == "values" {
				values, ok := value.(map[string]any)
				if !ok {
					return nil, errors.New("error parsing values map")
				}
				for k, v := range values {
					s, ok := v.(string)
					if !ok {
						return nil, fmt.Errorf("error parsing value as string %w", nil)
					}
					params["values."+k] = s
				}
			} else {
				s, ok := value.(string)
				if !ok {
					return nil, fmt.Errorf("error parsing value as string %w", nil)
				}
				params[key] = s
			}
			res[i] = params
		}
	}
	if elementsYaml != "" {
		var yamlElements []map[string]any
		if err := yaml.Unmarshal([]byte(elementsYaml), &yamlElements); err != nil {
			return nil, fmt.Errorf("error unmarshling decoded ElementsYaml %w", err)
		}
		res = append(res, yamlElements...)
	}
	return res, nil
}

// appendTemplatedValues is Argo's value interpolation for the clusters and git generators.
func appendTemplatedValues(r *Renderer, values map[string]string, params map[string]any) error {
	tmp := map[string]any{}
	for key, value := range values {
		result, err := r.Replace(value, params)
		if err != nil {
			return fmt.Errorf("failed to replace templated string: %w", fmt.Errorf("failed to replace templated string with rendered values: %w", err))
		}
		if r.GoTemplate {
			if tmp["values"] == nil {
				tmp["values"] = map[string]string{}
			}
			tmp["values"].(map[string]string)[key] = result
		} else {
			tmp["values."+key] = result
		}
	}
	maps.Copy(params, tmp)
	return nil
}

type clusterEntry struct {
	Name        string            `json:"name"`
	Server      string            `json:"server"`
	Project     string            `json:"project"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	// Local: the in-cluster entry Argo adds when no registered cluster has its server.
	Local bool `json:"local"`
}

// clusterParams is ClusterGenerator.GenerateParams after selection (the caller selects).
func clusterParams(r *Renderer, clusters []clusterEntry, values map[string]string, flatList bool) ([]map[string]any, error) {
	out := []map[string]any{}
	for _, c := range clusters {
		params := map[string]any{}
		params["name"] = c.Name
		params["server"] = c.Server
		params["project"] = c.Project
		if c.Local {
			params["nameNormalized"] = c.Name
		} else {
			params["nameNormalized"] = SanitizeName(c.Name)
			if r.GoTemplate {
				meta := map[string]any{}
				if len(c.Annotations) > 0 {
					meta["annotations"] = c.Annotations
				}
				if len(c.Labels) > 0 {
					meta["labels"] = c.Labels
				}
				params["metadata"] = meta
			} else {
				for k, v := range c.Annotations {
					params["metadata.annotations."+k] = v
				}
				for k, v := range c.Labels {
					params["metadata.labels."+k] = v
				}
			}
		}
		if err := appendTemplatedValues(r, values, params); err != nil {
			if c.Local {
				return nil, fmt.Errorf("error appending templated values for local cluster: %w", err)
			}
			return nil, fmt.Errorf("error appending templated values for cluster: %w", err)
		}
		out = append(out, params)
	}
	if flatList {
		return []map[string]any{{"clusters": out}}, nil
	}
	return out, nil
}

type pathItem struct {
	Path    string `json:"path"`
	Exclude bool   `json:"exclude"`
}

// gitDirectoryParams is filterApps + generateParamsFromApps (Go's path.Match, as Argo).
func gitDirectoryParams(r *Renderer, allPaths []string, dirs []pathItem, values map[string]string, prefix string) ([]map[string]any, error) {
	res := []map[string]any{}
	for _, appPath := range allPaths {
		include, exclude := false, false
		for _, d := range dirs {
			match, err := path.Match(d.Path, appPath)
			if err != nil {
				continue
			}
			if match && !d.Exclude {
				include = true
			}
			if match && d.Exclude {
				exclude = true
			}
		}
		if !include || exclude {
			continue
		}
		params := make(map[string]any, 5)
		if r.GoTemplate {
			p := map[string]any{
				"path":               appPath,
				"basename":           path.Base(appPath),
				"basenameNormalized": SanitizeName(path.Base(appPath)),
				"segments":           strings.Split(appPath, "/"),
			}
			if prefix != "" {
				params[prefix] = map[string]any{"path": p}
			} else {
				params["path"] = p
			}
		} else {
			name := "path"
			if prefix != "" {
				name = prefix + "." + name
			}
			params[name] = appPath
			params[name+".basename"] = path.Base(appPath)
			params[name+".basenameNormalized"] = SanitizeName(path.Base(appPath))
			for k, v := range strings.Split(appPath, "/") {
				if v != "" {
					params[name+"["+strconv.Itoa(k)+"]"] = v
				}
			}
		}
		if err := appendTemplatedValues(r, values, params); err != nil {
			return nil, fmt.Errorf("error generating params from apps: %w", fmt.Errorf("failed to append templated values: %w", err))
		}
		res = append(res, params)
	}
	return res, nil
}

type gitFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// gitFileParams is generateParamsFromGitFile for each file (already sorted and filtered by the caller).
func gitFileParams(r *Renderer, files []gitFile, values map[string]string, prefix string) ([]map[string]any, error) {
	all := []map[string]any{}
	for _, f := range files {
		ps, err := gitFileParamsOne(r, f, values, prefix)
		if err != nil {
			return nil, fmt.Errorf("unable to process file '%s': %w", f.Path, err)
		}
		all = append(all, ps...)
	}
	return all, nil
}

func gitFileParamsOne(r *Renderer, f gitFile, values map[string]string, prefix string) ([]map[string]any, error) {
	objects := []map[string]any{}
	single := map[string]any{}
	if err := yaml.Unmarshal([]byte(f.Content), &single); err == nil {
		objects = append(objects, single)
	} else if err = yaml.Unmarshal([]byte(f.Content), &objects); err != nil {
		return nil, fmt.Errorf("unable to parse file: %w", err)
	}
	res := []map[string]any{}
	for _, obj := range objects {
		params := map[string]any{}
		dir := path.Dir(f.Path)
		if r.GoTemplate {
			maps.Copy(params, obj)
			p := map[string]any{
				"path":               dir,
				"basename":           path.Base(dir),
				"filename":           path.Base(f.Path),
				"basenameNormalized": SanitizeName(path.Base(dir)),
				"filenameNormalized": SanitizeName(path.Base(path.Base(f.Path))),
				"segments":           strings.Split(dir, "/"),
			}
			if prefix != "" {
				params[prefix] = map[string]any{"path": p}
			} else {
				params["path"] = p
			}
		} else {
			flat, err := flatten.Flatten(obj, "", flatten.DotStyle)
			if err != nil {
				return nil, fmt.Errorf("error flattening object: %w", err)
			}
			for k, v := range flat {
				params[k] = fmt.Sprintf("%v", v)
			}
			name := "path"
			if prefix != "" {
				name = prefix + "." + name
			}
			params[name] = dir
			params[name+".basename"] = path.Base(dir)
			params[name+".filename"] = path.Base(f.Path)
			params[name+".basenameNormalized"] = SanitizeName(path.Base(dir))
			params[name+".filenameNormalized"] = SanitizeName(path.Base(f.Path))
			for k, v := range strings.Split(dir, "/") {
				if v != "" {
					params[name+"["+strconv.Itoa(k)+"]"] = v
				}
			}
		}
		if err := appendTemplatedValues(r, values, params); err != nil {
			return nil, fmt.Errorf("failed to append templated values: %w", err)
		}
		res = append(res, params)
	}
	return res, nil
}

// flattenParameters is Transform's flattening for the post-selector.
func flattenParameters(in map[string]any) (map[string]string, error) {
	flat, err := flatten.Flatten(in, "", flatten.DotStyle)
	if err != nil {
		return nil, fmt.Errorf("error flatenning parameters: %w", err)
	}
	out := make(map[string]string, len(flat))
	for k, v := range flat {
		out[k] = fmt.Sprintf("%v", v)
	}
	return out, nil
}

func toStringMap(in map[string]any) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = fmt.Sprintf("%v", v)
	}
	return out
}

// matrixCombine is the matrix generator's combination of one pair of parameter sets.
func matrixCombine(a, b map[string]any, goTemplate bool) (map[string]any, error) {
	if goTemplate {
		tmp := map[string]any{}
		if err := mergo.Merge(&tmp, b, mergo.WithOverride); err != nil {
			return nil, fmt.Errorf("failed to merge params from the second generator in the matrix generator with temp map: %w", err)
		}
		if err := mergo.Merge(&tmp, a, mergo.WithOverride); err != nil {
			return nil, fmt.Errorf("failed to merge params from the second generator in the matrix generator with the first: %w", err)
		}
		return tmp, nil
	}
	sa, sb := toStringMap(a), toStringMap(b)
	res := map[string]any{}
	for k, v := range sa {
		res[k] = v
	}
	for k, v := range sb {
		current, present := res[k]
		if present && current != v {
			return nil, fmt.Errorf("failed to combine string maps with merging params for the matrix generator: %w",
				fmt.Errorf("found duplicate key %s with different value, a: %s ,b: %s", k, current, v))
		}
		res[k] = v
	}
	return res, nil
}

// mergeOverride is the merge generator's override of a base parameter set.
func mergeOverride(base, override map[string]any, goTemplate bool) (map[string]any, error) {
	if goTemplate {
		if err := mergo.Merge(&base, override, mergo.WithOverride); err != nil {
			return nil, fmt.Errorf("error merging base param set with override param set: %w", err)
		}
		return base, nil
	}
	maps.Copy(base, override)
	return base, nil
}

// mergeKey is the JSON of the merge keys' values, as Argo keys param sets.
func mergeKey(keys []string, params map[string]any) (string, error) {
	k := make(map[string]any, len(keys))
	for _, key := range keys {
		k[key] = params[key]
	}
	j, err := json.Marshal(k)
	if err != nil {
		return "", fmt.Errorf("error marshalling param set key json: %w", err)
	}
	return string(j), nil
}

var (
	errNoMergeKeys        = fmt.Errorf("no merge keys were specified, Merge requires at least one")
	errNonUniqueParamSets = fmt.Errorf("the parameters from a generator were not unique by the given mergeKeys, Merge requires all param sets to be unique")
)

// mergeSets is MergeGenerator.GenerateParams over the children's parameter sets. Argo returns the
// merged sets in Go map order (random); Capstan keeps the first generator's order.
func mergeSets(keys []string, sets [][]map[string]any, goTemplate bool) ([]map[string]any, error) {
	byKey := func(paramSets []map[string]any) (map[string]map[string]any, []string, error) {
		if len(keys) < 1 {
			return nil, nil, errNoMergeKeys
		}
		dedup := []string{}
		seen := map[string]bool{}
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				dedup = append(dedup, k)
			}
		}
		out := make(map[string]map[string]any, len(paramSets))
		order := []string{}
		for _, ps := range paramSets {
			k, err := mergeKey(dedup, ps)
			if err != nil {
				return nil, nil, err
			}
			if _, exists := out[k]; exists {
				return nil, nil, fmt.Errorf("%w. Duplicate key was %s", errNonUniqueParamSets, k)
			}
			out[k] = ps
			order = append(order, k)
		}
		return out, order, nil
	}
	base, order, err := byKey(sets[0])
	if err != nil {
		return nil, fmt.Errorf("error getting param sets by merge key: %w", err)
	}
	for _, other := range sets[1:] {
		over, _, err := byKey(other)
		if err != nil {
			return nil, fmt.Errorf("error getting param sets by merge key: %w", err)
		}
		for k, b := range base {
			if o, ok := over[k]; ok {
				m, err := mergeOverride(b, o, goTemplate)
				if err != nil {
					return nil, err
				}
				base[k] = m
			}
		}
	}
	out := make([]map[string]any, 0, len(order))
	for _, k := range order {
		out = append(out, base[k])
	}
	return out, nil
}
