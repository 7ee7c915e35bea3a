package schema

import (
	"encoding/json"
	"testing"
)

// TestApplyDefaults checks what the corpus cannot show: Go number types
// in objects, copies of defaults, and nil schemas.
func TestApplyDefaults(t *testing.T) {
	s := mustParse(t, `{"type":"object","properties":{
		"n": {"type":"integer","default":1},
		"o": {"type":"object","default":{"a":[1]},"properties":{"a":{"type":"array","items":{"type":"integer"}}}},
		"l": {"type":"array","items":{"type":"string","nullable":true,"default":"d"}}}}`)
	tests := []struct {
		name   string
		schema *Schema
		obj    any
		want   string
	}{
		{name: "int64 kept", schema: s, obj: map[string]any{"n": int64(5)}, want: `{"n":5,"o":{"a":[1]}}`},
		{name: "null nullable items kept", schema: s, obj: map[string]any{"l": []any{nil, "x"}}, want: `{"l":[null,"x"],"n":1,"o":{"a":[1]}}`},
		{name: "nil schema", schema: nil, obj: map[string]any{"x": nil}, want: `{"x":null}`},
		{name: "scalar object", schema: s, obj: "x", want: `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.schema.ApplyDefaults(tt.obj)
			b, _ := json.Marshal(tt.obj)
			if string(b) != tt.want {
				t.Errorf("got %s; want %s", b, tt.want)
			}
		})
	}
	t.Run("defaults are copies", func(t *testing.T) {
		a, b := map[string]any{}, map[string]any{}
		s.ApplyDefaults(a)
		s.ApplyDefaults(b)
		a["o"].(map[string]any)["a"].([]any)[0] = int64(9)
		if got, _ := json.Marshal(b); string(got) != `{"n":1,"o":{"a":[1]}}` {
			t.Errorf("changing one defaulted object changed another: %s", got)
		}
		if got, _ := json.Marshal(s.Properties["o"].Default); string(got) != `{"a":[1]}` {
			t.Errorf("changing a defaulted object changed the schema's default: %s", got)
		}
	})
}

func mustParse(t testing.TB, src string) *Schema {
	t.Helper()
	s, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
