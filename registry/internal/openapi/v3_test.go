package openapi

import (
	"reflect"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

// TestV3Definitions checks that a resource with definitions publishes
// its own definition (with its group-version-kind) and exactly those it
// reaches by $ref, and that one whose definition is missing falls back
// to its Schema.
func TestV3Definitions(t *testing.T) {
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	defs := map[string]map[string]any{
		"io.k8s.api.core.v1.Pod": {"type": "object", "properties": map[string]any{
			"metadata": map[string]any{"allOf": []any{ref(objectMetaName)}},
			"spec":     map[string]any{"allOf": []any{ref("io.k8s.api.core.v1.PodSpec")}, "description": "Spec."},
		}},
		"io.k8s.api.core.v1.PodSpec": {"type": "object", "properties": map[string]any{
			"containers": map[string]any{"type": "array", "items": ref("io.k8s.api.core.v1.Container")},
		}},
		"io.k8s.api.core.v1.Container": {"type": "object", "properties": map[string]any{
			"imagePullPolicy": map[string]any{"type": "string", "enum": []any{"Always", "IfNotPresent", "Never"}},
		}},
		objectMetaName:                   {"type": "object", "description": "kube's ObjectMeta"},
		"io.k8s.api.core.v1.Unreachable": {"type": "object"},
	}
	get := func() map[string]map[string]any { return defs }
	tests := []struct {
		name       string
		res        Resource
		wantNames  []string
		wantKubeOM bool // kube's ObjectMeta replaces kapi's
	}{{
		name:       "pod with definitions",
		res:        Resource{Version: "v1", Kind: "Pod", Plural: "pods", Namespaced: true, Definition: "io.k8s.api.core.v1.Pod", Definitions: get},
		wantNames:  []string{"io.k8s.api.core.v1.Container", "io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.PodSpec", objectMetaName},
		wantKubeOM: true,
	}, {
		name:      "definition missing: the schema",
		res:       Resource{Version: "v1", Kind: "Thing", Plural: "things", Schema: &schema.Schema{Type: "object"}, Definition: "io.k8s.api.core.v1.Thing", Definitions: get},
		wantNames: []string{"io.k8s.api.core.v1.Thing", objectMetaName},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := V3("v1.37.2", GroupVersion{Version: "v1", Resources: []Resource{tt.res}})
			schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
			var names []string
			for n := range schemas {
				names = append(names, n)
			}
			slices.Sort(names)
			if !reflect.DeepEqual(names, tt.wantNames) {
				t.Errorf("schemas %v; want %v", names, tt.wantNames)
			}
			kind := schemas["io.k8s.api.core.v1."+tt.res.Kind].(map[string]any)
			want := []any{map[string]any{"group": "", "version": "v1", "kind": tt.res.Kind}}
			if got := kind["x-kubernetes-group-version-kind"]; !reflect.DeepEqual(got, want) {
				t.Errorf("x-kubernetes-group-version-kind %v; want %v", got, want)
			}
			om := schemas[objectMetaName].(map[string]any)
			if got := om["description"] == "kube's ObjectMeta"; got != tt.wantKubeOM {
				t.Errorf("ObjectMeta is kube's definition: %v; want %v", got, tt.wantKubeOM)
			}
			get := doc["paths"].(map[string]any)["/api/v1/"+pathNS(tt.res)+tt.res.Plural+"/{name}"].(map[string]any)["get"].(map[string]any)
			gotRef := get["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["$ref"]
			if wantRef := "#/components/schemas/io.k8s.api.core.v1." + tt.res.Kind; gotRef != wantRef {
				t.Errorf("get's response $ref %v; want %v", gotRef, wantRef)
			}
		})
	}
	if _, ok := defs["io.k8s.api.core.v1.Pod"]["x-kubernetes-group-version-kind"]; ok {
		t.Errorf("V3 changed the shared definitions")
	}
}

func pathNS(res Resource) string {
	if res.Namespaced {
		return "namespaces/{namespace}/"
	}
	return ""
}
