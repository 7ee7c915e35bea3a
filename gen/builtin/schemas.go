package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	kubeopenapi "k8s.io/kubernetes/pkg/generated/openapi"
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
//	RawExtension (type object)                  →  x-kubernetes-preserve-unknown-fields: true
//	x-kubernetes-group-version-kind, -unions    →  dropped (kapi's OpenAPI adds the first)
//
// The committed documents lack what kube-apiserver adds when it serves
// them: the values of k8s.io/api's +enum types. Those come from the
// definitions kube-apiserver is built with (k8s.io/kubernetes
// pkg/generated/openapi): a property (or its items) whose definition has
// an enum takes that enum and its description, which ends with the
// values' meanings ("Possible enum values: ..."), as kube serves it:
//
//	Container.imagePullPolicy: {type: string, description: "Image pull
//	policy. ...\n\nPossible enum values:\n - `\"Always\"` means ...",
//	enum: [Always, IfNotPresent, Never]}
//
// The builtin package publishes enums in its OpenAPI documents only; it
// does not validate them (kube validates those fields in Go, with its
// own messages).

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
func schemaDefs(kube string, types map[string]reflect.Type) (map[string]any, map[string]string, error) {
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
		if err := collect(schemas, name, defs, types); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range publishedOnly {
		d, err := loadDoc(filepath.Join(kube, "api/openapi-spec/v3"), openAPIFile(p.group, p.version))
		if err != nil {
			return nil, nil, err
		}
		schemas := d["components"].(map[string]any)["schemas"].(map[string]any)
		for _, kind := range p.kinds {
			if err := collect(schemas, p.prefix+"."+p.version+"."+kind, defs, types); err != nil {
				return nil, nil, err
			}
		}
	}
	return defs, names, nil
}

// publishedOnly are the definitions of the kinds the registry serves
// itself (namespaces, configmaps, RBAC, reviews, webhook
// configurations), which its OpenAPI documents publish from the builtin
// package's definitions (registry.Options.Definitions).
var publishedOnly = []struct {
	group, version, prefix string
	kinds                  []string
}{
	{"", "v1", "io.k8s.api.core", []string{"Namespace", "ConfigMap"}},
	{"rbac.authorization.k8s.io", "v1", "io.k8s.api.rbac", []string{"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}},
	{"authorization.k8s.io", "v1", "io.k8s.api.authorization", []string{"SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview", "LocalSubjectAccessReview"}},
	{"authentication.k8s.io", "v1", "io.k8s.api.authentication", []string{"SelfSubjectReview", "TokenReview"}},
	{"admissionregistration.k8s.io", "v1", "io.k8s.api.admissionregistration", []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}},
}

func list(v any) []any { l, _ := v.([]any); return l }

// collect adds the rewritten definition name and those it references.
func collect(schemas map[string]any, name string, defs map[string]any, types map[string]reflect.Type) error {
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
	case "io.k8s.apimachinery.pkg.runtime.RawExtension":
		// Any JSON object, kept as it is (kube stores its bytes).
		defs[name] = map[string]any{"description": s["description"], "type": "object", "x-kubernetes-preserve-unknown-fields": true}
		return nil
	}
	out, err := rewrite(s, &refs, name)
	if err != nil {
		return err
	}
	if err := addEnums(out, name); err != nil {
		return err
	}
	if t, ok := types[name]; ok {
		dropInvisibleDefaults(out, t)
	}
	defs[name] = out
	slices.Sort(refs)
	for _, r := range slices.Compact(refs) {
		if err := collect(schemas, r, defs, types); err != nil {
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

// servedDefinitions are the OpenAPI definitions kube-apiserver is built
// with, by name.
var servedDefinitions = sync.OnceValue(func() map[string]common.OpenAPIDefinition {
	return kubeopenapi.GetOpenAPIDefinitions(func(path string) spec.Ref {
		return spec.MustCreateRef(refPrefix + path)
	})
})

// addEnums gives the properties of definition name (and their items) the
// enums, and the descriptions listing them, of the definition kube serves.
func addEnums(def map[string]any, name string) error {
	served, ok := servedDefinitions()[name]
	if !ok {
		return nil
	}
	props, _ := def["properties"].(map[string]any)
	for pname, ps := range served.Schema.Properties {
		p, ok := props[pname].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: property %s is served but not committed", name, pname)
		}
		enum(p, &ps)
		if ps.Items != nil && ps.Items.Schema != nil {
			if items, ok := p["items"].(map[string]any); ok {
				enum(items, ps.Items.Schema)
			}
		}
	}
	return nil
}

// enum copies s's enum and description to node when s has an enum.
func enum(node map[string]any, s *spec.Schema) {
	if len(s.Enum) == 0 {
		return
	}
	node["enum"] = slices.Clone(s.Enum)
	if s.Description != "" {
		node["description"] = s.Description
	}
}

// kindName is the Go type name of a kind's object.
func kindName(k kind) string { return typeOf(k.obj).Name() }

// dropInvisibleDefaults removes the defaults of a definition's
// properties that equal their Go field's zero value where the field is
// omitempty: kube's JSON never shows them (kube's OpenAPI publishes
// "default: 0" for ReplicationControllerSpec.minReadySeconds, which Go
// leaves out), so kapi must not write them either.
func dropInvisibleDefaults(def map[string]any, t reflect.Type) {
	props, _ := def["properties"].(map[string]any)
	omit := omitempty(t)
	for name, p := range props {
		pm, _ := p.(map[string]any)
		d, ok := pm["default"]
		if !ok || !omit[name] {
			continue
		}
		switch v := d.(type) {
		case float64:
			if v == 0 {
				delete(pm, "default")
			}
		case string:
			if v == "" {
				delete(pm, "default")
			}
		case bool:
			if !v {
				delete(pm, "default")
			}
		}
	}
}

// omitempty tells, by JSON name, the fields of struct t (inlined ones
// included) tagged omitempty.
func omitempty(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range omitempty(ft) {
					out[k] = v
				}
			}
			continue
		}
		if strings.Contains(opts, "omitempty") {
			out[name] = true
		}
	}
	return out
}
