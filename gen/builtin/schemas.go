package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The schemas come from the OpenAPI v3 documents kube-apiserver serves,
// as k8s.io/kubernetes commits them (api/openapi-spec/v3): descriptions,
// required fields, list types and map keys, map types, patch strategies
// and merge keys, and the defaults of kube's +default markers. They are
// rewritten to the few keywords the builtin package reads:
//
//	allOf: [{$ref: "#/components/schemas/X"}]  →  $ref: X (its siblings,
//	                                              description and default, kept)
//	IntOrString (format int-or-string, oneOf)   →  x-kubernetes-int-or-string: true
//	Quantity (oneOf string, number)             →  no type: any scalar
//	x-kubernetes-group-version-kind, -unions    →  dropped (kapi's OpenAPI adds the first)

// specDir finds api/openapi-spec and api/discovery in the k8s.io/kubernetes module.
func loadDoc(dir, name string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// openAPIFile is the name of a group-version's document.
func openAPIFile(group, version string) string {
	if group == "" {
		return "api__" + version + "_openapi.json"
	}
	return "apis__" + group + "__" + version + "_openapi.json"
}

const refPrefix = "#/components/schemas/"

// schemaDefs returns the rewritten definitions that the kinds reach, by
// name, and each kind's definition name.
func schemaDefs(kube string) (map[string]any, map[string]string, error) {
	defs := map[string]any{}
	names := map[string]string{}
	docs := map[string]map[string]any{}
	for _, k := range kinds {
		file := openAPIFile(k.group, k.version)
		if docs[file] == nil {
			d, err := loadDoc(filepath.Join(kube, "api/openapi-spec/v3"), file)
			if err != nil {
				return nil, nil, err
			}
			docs[file] = d["components"].(map[string]any)["schemas"].(map[string]any)
		}
		schemas := docs[file]
		name := ""
		for n, s := range schemas {
			for _, gvk := range list(s.(map[string]any)["x-kubernetes-group-version-kind"]) {
				m := gvk.(map[string]any)
				if m["group"] == k.group && m["version"] == k.version && m["kind"] == kindName(k) {
					name = n
				}
			}
		}
		if name == "" {
			return nil, nil, fmt.Errorf("%s: no schema for %s/%s %s", file, k.group, k.version, kindName(k))
		}
		names[k.id()] = name
		if err := collect(schemas, name, defs); err != nil {
			return nil, nil, err
		}
	}
	return defs, names, nil
}

func list(v any) []any { l, _ := v.([]any); return l }

// collect adds the rewritten definition name and those it references.
func collect(schemas map[string]any, name string, defs map[string]any) error {
	if _, ok := defs[name]; ok {
		return nil
	}
	s, ok := schemas[name].(map[string]any)
	if !ok {
		return fmt.Errorf("no definition %s", name)
	}
	var refs []string
	switch name {
	case "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
		defs[name] = map[string]any{"description": s["description"], "x-kubernetes-int-or-string": true}
		return nil
	case "io.k8s.apimachinery.pkg.api.resource.Quantity":
		defs[name] = map[string]any{"description": s["description"]}
		return nil
	}
	out, err := rewrite(s, &refs, name)
	if err != nil {
		return err
	}
	defs[name] = out
	slices.Sort(refs)
	for _, r := range slices.Compact(refs) {
		if err := collect(schemas, r, defs); err != nil {
			return err
		}
	}
	return nil
}

// rewrite is one node of a schema in the builtin package's form.
func rewrite(s map[string]any, refs *[]string, path string) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range s {
		switch k {
		case "description", "default", "format", "type", "required",
			"x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type",
			"x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy":
			out[k] = v
		case "x-kubernetes-group-version-kind", "x-kubernetes-unions":
		case "$ref":
			r := strings.TrimPrefix(v.(string), refPrefix)
			*refs = append(*refs, r)
			out["$ref"] = r
		case "allOf":
			l := list(v)
			if len(l) != 1 || len(l[0].(map[string]any)) != 1 || l[0].(map[string]any)["$ref"] == nil {
				return nil, fmt.Errorf("%s: allOf other than one $ref", path)
			}
			r := strings.TrimPrefix(l[0].(map[string]any)["$ref"].(string), refPrefix)
			*refs = append(*refs, r)
			out["$ref"] = r
		case "items", "additionalProperties":
			m, ok := v.(map[string]any)
			if !ok {
				out[k] = v
				continue
			}
			sub, err := rewrite(m, refs, path+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = sub
		case "properties":
			props := map[string]any{}
			for name, p := range v.(map[string]any) {
				sub, err := rewrite(p.(map[string]any), refs, path+"."+name)
				if err != nil {
					return nil, err
				}
				props[name] = sub
			}
			out[k] = props
		default:
			return nil, fmt.Errorf("%s: keyword %q", path, k)
		}
	}
	return out, nil
}

// kindName is the Go type name of a kind's object.
func kindName(k kind) string { return typeOf(k.obj).Name() }
