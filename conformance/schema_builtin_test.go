package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"

	kschema "github.com/kapi-dev/kapi/schema"
)

// kubeAuthOpenAPI holds kube's published OpenAPI v3 component schemas of the
// rbac.authorization.k8s.io, authorization.k8s.io and authentication.k8s.io
// v1 kinds and of the meta.v1 types they reference (k8s.io/kubernetes
// v1.37.2 api/openapi-spec/v3, descriptions removed).
const kubeAuthOpenAPI = "testdata/openapi/kube-v1.37.2-auth.json"

// TestSchemaBuiltinAuthMatchesKubeOpenAPI: kapi's hand-written schemas of
// the RBAC, authorization and authentication kinds equal kube's published
// ones, $refs inlined: property names, types, formats, required fields,
// list types, map types and patch strategies. Left out of the comparison:
// descriptions, the default of {} or "" that kube's generator writes on
// non-pointer fields (kube applies no OpenAPI defaults to built-in kinds;
// neither does kapi), x-kubernetes-group-version-kind (kapi's OpenAPI adds
// it), and FieldsV1, which kube publishes as {type: object} and kapi as
// the same with x-kubernetes-preserve-unknown-fields (its opaque form).
func TestSchemaBuiltinAuthMatchesKubeOpenAPI(t *testing.T) {
	b, err := os.ReadFile(kubeAuthOpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	defs := doc.Components.Schemas
	tests := []struct {
		name string
		kapi *kschema.Schema
	}{
		{"io.k8s.api.rbac.v1.Role", kschema.Role()},
		{"io.k8s.api.rbac.v1.ClusterRole", kschema.ClusterRole()},
		{"io.k8s.api.rbac.v1.RoleBinding", kschema.RoleBinding()},
		{"io.k8s.api.rbac.v1.ClusterRoleBinding", kschema.ClusterRoleBinding()},
		{"io.k8s.api.authorization.v1.SubjectAccessReview", kschema.SubjectAccessReview()},
		{"io.k8s.api.authorization.v1.LocalSubjectAccessReview", kschema.LocalSubjectAccessReview()},
		{"io.k8s.api.authorization.v1.SelfSubjectAccessReview", kschema.SelfSubjectAccessReview()},
		{"io.k8s.api.authorization.v1.SelfSubjectRulesReview", kschema.SelfSubjectRulesReview()},
		{"io.k8s.api.authentication.v1.SelfSubjectReview", kschema.SelfSubjectReview()},
		{"io.k8s.api.authentication.v1.TokenReview", kschema.TokenReview()},
	}
	for _, tt := range tests {
		t.Run(tt.name[strings.LastIndex(tt.name, ".")+1:], func(t *testing.T) {
			def, ok := defs[tt.name]
			if !ok {
				t.Fatalf("%s not in %s", tt.name, kubeAuthOpenAPI)
			}
			want := kubeSchemaInlined(t, defs, def, 0)
			gotJSON, err := json.Marshal(tt.kapi.JSON())
			if err != nil {
				t.Fatal(err)
			}
			got := kubeSchemaInlined(t, defs, generic(t, gotJSON), 0)
			var diffs []string
			schemaDiff(&diffs, "", got, want)
			if len(diffs) > 0 {
				t.Errorf("kapi's schema differs from kube's:\n%s", strings.Join(diffs, "\n"))
			}
		})
	}
}

// kubeSchemaInlined is an OpenAPI schema in comparable form: $refs (alone
// or as allOf's only member) replaced by the schemas they name, required
// sorted, and the keys the comparison leaves out dropped.
func kubeSchemaInlined(t *testing.T, defs map[string]any, v any, depth int) any {
	t.Helper()
	if depth > 20 {
		t.Fatal("schema nested too deeply (a $ref cycle?)")
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = kubeSchemaInlined(t, defs, e, depth+1)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = e
		}
		ref, _ := out["$ref"].(string)
		if all, ok := out["allOf"].([]any); ok && len(all) == 1 {
			if m, ok := all[0].(map[string]any); ok && len(m) == 1 {
				ref, _ = m["$ref"].(string)
				delete(out, "allOf")
			}
		}
		if ref != "" {
			delete(out, "$ref")
			name := ref[strings.LastIndex(ref, "/")+1:]
			def, ok := defs[name].(map[string]any)
			if !ok {
				t.Fatalf("$ref %s: no such schema", ref)
			}
			for k, e := range def {
				if _, set := out[k]; !set {
					out[k] = e
				}
			}
			if name == "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1" {
				out["x-kubernetes-preserve-unknown-fields"] = true
			}
		}
		for _, k := range []string{"description", "default", "x-kubernetes-group-version-kind"} {
			delete(out, k)
		}
		if req, ok := out["required"].([]any); ok {
			s := make([]string, len(req))
			for i, r := range req {
				s[i], _ = r.(string)
			}
			sort.Strings(s)
			out["required"] = s
		}
		for _, k := range []string{"properties", "additionalProperties", "items"} {
			if e, ok := out[k]; ok {
				if k == "properties" {
					props := map[string]any{}
					for name, p := range e.(map[string]any) {
						props[name] = kubeSchemaInlined(t, defs, p, depth+1)
					}
					out[k] = props
					continue
				}
				out[k] = kubeSchemaInlined(t, defs, e, depth+1)
			}
		}
		return out
	}
	return v
}

// schemaDiff lists where got and want differ, by property path.
func schemaDiff(diffs *[]string, path string, got, want any) {
	g, gok := got.(map[string]any)
	w, wok := want.(map[string]any)
	if !gok || !wok {
		if !reflect.DeepEqual(got, want) {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %v; want %v", path, asJSON(got), asJSON(want)))
		}
		return
	}
	keys := map[string]bool{}
	for k := range g {
		keys[k] = true
	}
	for k := range w {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		schemaDiff(diffs, path+"/"+k, g[k], w[k])
	}
}

func asJSON(v any) string {
	if v == nil {
		return "(none)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSchemaBuiltinAuthFieldSets: the field sets server-side apply tracks
// for a realistic object of each RBAC kind are the same under kapi's schema
// as under client-go's (the structured-merge-diff schema k8s.io/client-go's
// apply configurations ship, generated from kube's OpenAPI): lists and
// structs are atomic or granular alike. (The review kinds are create-only;
// client-go has no apply schema for them.)
func TestSchemaBuiltinAuthFieldSets(t *testing.T) {
	tc := applyconfigurations.NewTypeConverter(scheme.Scheme)
	tests := []struct {
		name string
		kapi *kschema.Schema
		obj  runtime.Object
	}{
		{"Role", kschema.Role(), pbwRole()},
		{"ClusterRole", kschema.ClusterRole(), pbwClusterRole()},
		{"RoleBinding", kschema.RoleBinding(), pbwRoleBinding()},
		{"ClusterRoleBinding", kschema.ClusterRoleBinding(), pbwClusterRoleBinding()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gvks, _, err := scheme.Scheme.ObjectKinds(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			tt.obj.GetObjectKind().SetGroupVersionKind(gvks[0])
			ref, err := tc.ObjectToTyped(tt.obj)
			if err != nil {
				t.Fatalf("client-go: %v", err)
			}
			want, err := ref.ToFieldSet()
			if err != nil {
				t.Fatal(err)
			}
			pt, err := tt.kapi.SMD()
			if err != nil {
				t.Fatal(err)
			}
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			tv, err := pt.FromUnstructured(u)
			if err != nil {
				t.Fatalf("kapi: %v", err)
			}
			got, err := tv.ToFieldSet()
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equals(want) {
				t.Errorf("field sets differ:\nonly kapi's:\n%s\nonly client-go's:\n%s", got.Difference(want), want.Difference(got))
			}
			if want.Size() < 5 {
				t.Errorf("client-go's field set has %d fields; want a realistic object", want.Size())
			}
		})
	}
}
