package patch_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
)

// A create of a typed object is recorded from its type's zero value:
// the non-pointer structs (default {}), zero scalars (default "") and
// the fields without omitempty (required) it holds get no "." and are
// not owned when the object holds them as the zero value does.
func TestTypedCreateFields(t *testing.T) {
	s, err := schema.FromJSON(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string"},
			"kind":       map[string]any{"type": "string"},
			"metadata":   map[string]any{"type": "object", "default": map[string]any{}, "properties": map[string]any{"name": map[string]any{"type": "string"}}},
			"spec": map[string]any{"type": "object", "default": map[string]any{}, "required": []any{"items"}, "properties": map[string]any{
				"strategy": map[string]any{"type": "object", "default": map[string]any{}, "properties": map[string]any{
					"type":    map[string]any{"type": "string"},
					"rolling": map[string]any{"type": "object", "properties": map[string]any{"max": map[string]any{"type": "integer"}}},
				}},
				"items": map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
					"items": map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{"name": map[string]any{"type": "string"}}}},
				"labels":    map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
				"component": map[string]any{"type": "string", "default": ""},
				"when":      map[string]any{"type": "string", "format": "date-time", "nullable": true},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	obj := func() map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{
			"strategy":{"type":"Rolling","rolling":{"max":1}},"items":[{"name":"a"}],"labels":{"a":"b"},"component":"","when":null}}`), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tt := range []struct {
		name  string
		typed bool
		want  string
	}{
		{"typed", true, `{"f:spec":{"f:items":{"k:{\"name\":\"a\"}":{".":{},"f:name":{}}},"f:labels":{".":{},"f:a":{}},` +
			`"f:strategy":{"f:rolling":{".":{},"f:max":{}},"f:type":{}}}}`},
		{"untyped", false, `{"f:spec":{".":{},"f:component":{},"f:items":{".":{},"k:{\"name\":\"a\"}":{".":{},"f:name":{}}},"f:labels":{".":{},"f:a":{}},` +
			`"f:strategy":{".":{},"f:rolling":{".":{},"f:max":{}},"f:type":{}},"f:when":{}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := patch.NewFieldManager(s, "example.com/v1", patch.FieldManagerOptions{Kind: "Thing", Typed: tt.typed})
			if err != nil {
				t.Fatal(err)
			}
			out, err := fm.Update(nil, obj(), patch.UpdateOptions{Manager: "m", Now: time.Unix(0, 0)})
			if err != nil {
				t.Fatal(err)
			}
			mf := out["metadata"].(map[string]any)["managedFields"].([]any)
			got := mf[0].(map[string]any)["fieldsV1"]
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				g, _ := json.Marshal(got)
				t.Errorf("fieldsV1 = %s; want %s", g, tt.want)
			}
		})
	}
}
