package schema

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestPrune checks what the corpus cannot show: a nil schema, non-object
// roots and the sorting of reported paths.
func TestPrune(t *testing.T) {
	s := mustParse(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"l":{"type":"array"}}}}}`)
	tests := []struct {
		name   string
		schema *Schema
		obj    any
		want   string
		pruned []string
	}{
		{name: "nil schema keeps type and metadata only", schema: nil,
			obj:  map[string]any{"kind": "A", "metadata": map[string]any{"x": 1}, "spec": 1},
			want: `{"kind":"A","metadata":{"x":1}}`, pruned: []string{"spec"}},
		{name: "array without items schema prunes objects in it", schema: s,
			obj:  map[string]any{"spec": map[string]any{"l": []any{map[string]any{"b": 1, "a": 2}, 1}}},
			want: `{"spec":{"l":[{},1]}}`, pruned: []string{"spec.l[0].a", "spec.l[0].b"}},
		{name: "sorted paths", schema: s,
			obj:  map[string]any{"z": 1, "spec": map[string]any{"y": 1, "b": 2}, "a": 3},
			want: `{"spec":{}}`, pruned: []string{"a", "spec.b", "spec.y", "z"}},
		{name: "scalar root", schema: s, obj: "x", want: `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pruned := tt.schema.Prune(tt.obj)
			b, _ := json.Marshal(tt.obj)
			if string(b) != tt.want {
				t.Errorf("got %s; want %s", b, tt.want)
			}
			if !slices.Equal(pruned, tt.pruned) {
				t.Errorf("pruned %q; want %q", pruned, tt.pruned)
			}
		})
	}
}
