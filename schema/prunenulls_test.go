package schema

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestPruneNulls(t *testing.T) {
	s, err := FromJSON(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": map[string]any{
				"a":     map[string]any{"type": "string"},
				"b":     map[string]any{"type": "string", "nullable": true},
				"c":     map[string]any{"type": "string", "default": "x"},
				"m":     map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
				"l":     map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}}},
				"any":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
				"plain": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, in, want string
	}{
		{"not nullable", `{"spec":{"a":null}}`, `{"spec":{}}`},
		{"nullable", `{"spec":{"b":null}}`, `{"spec":{"b":null}}`},
		{"with a default", `{"spec":{"c":null}}`, `{"spec":{"c":null}}`},
		{"a whole object", `{"spec":null}`, `{}`},
		{"a map value", `{"spec":{"m":{"k":null,"j":"v"}}}`, `{"spec":{"m":{"j":"v"}}}`},
		{"in list items", `{"spec":{"l":[{"x":null},null]}}`, `{"spec":{"l":[{},null]}}`},
		{"list items stay", `{"spec":{"plain":[null,"a"]}}`, `{"spec":{"plain":[null,"a"]}}`},
		{"unknown fields stay", `{"spec":{"any":{"k":null}},"other":null}`, `{"spec":{"any":{"k":null}},"other":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj, want any
			if err := json.Unmarshal([]byte(tt.in), &obj); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			s.PruneNulls(obj)
			if !reflect.DeepEqual(obj, want) {
				got, _ := json.Marshal(obj)
				t.Errorf("got %s; want %s", got, tt.want)
			}
		})
	}
}
