package builtin

import (
	"reflect"
	"strings"
	"testing"
)

// TestDefinitionsPublished checks the published definitions: every $ref
// is kube's form and names a definition, every kind (and the kinds the
// registry serves itself) has its definition, and enums are there.
func TestDefinitionsPublished(t *testing.T) {
	defs := Definitions()
	if defs == nil {
		t.Fatal("Definitions() is nil")
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if k != "$ref" {
					walk(path+"."+k, e)
					continue
				}
				name, ok := strings.CutPrefix(e.(string), "#/components/schemas/")
				if !ok || defs[name] == nil {
					t.Errorf("%s: $ref %v names no definition", path, e)
				}
				if len(v) != 1 {
					t.Errorf("%s: $ref with siblings %v; want them beside allOf", path, v)
				}
			}
		case []any:
			for _, e := range v {
				walk(path, e)
			}
		}
	}
	for name, d := range defs {
		walk(name, d)
	}
	names := []string{"io.k8s.api.core.v1.Namespace", "io.k8s.api.core.v1.ConfigMap", "io.k8s.api.rbac.v1.Role", "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration"}
	for _, k := range kinds {
		names = append(names, k.Schema)
	}
	for _, n := range names {
		if defs[n] == nil {
			t.Errorf("no definition %s", n)
		}
	}

	prop := func(def, name string) map[string]any {
		return defs[def]["properties"].(map[string]any)[name].(map[string]any)
	}
	tests := []struct {
		name string
		node map[string]any
		want map[string]any
	}{{
		name: "Pod.spec",
		node: prop("io.k8s.api.core.v1.Pod", "spec"),
		want: map[string]any{"allOf": []any{map[string]any{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}}, "default": map[string]any{}},
	}, {
		name: "Container.imagePullPolicy",
		node: prop("io.k8s.api.core.v1.Container", "imagePullPolicy"),
		want: map[string]any{"type": "string", "enum": []any{"Always", "IfNotPresent", "Never"}},
	}, {
		name: "PersistentVolumeClaimSpec.accessModes items",
		node: prop("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "accessModes")["items"].(map[string]any),
		want: map[string]any{"type": "string", "enum": []any{"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"}},
	}}
	for _, tt := range tests {
		for k, want := range tt.want {
			if got := tt.node[k]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s is %v; want %v", tt.name, k, got, want)
			}
		}
	}
	if d, _ := prop("io.k8s.api.core.v1.Container", "imagePullPolicy")["description"].(string); !strings.Contains(d, "Possible enum values:\n - `\"Always\"` means") {
		t.Errorf("Container.imagePullPolicy's description %q; want the enum values' meanings", d)
	}
}
