package registry

import "testing"

func TestSelectablePath(t *testing.T) {
	s := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{
			"color":  map[string]any{"type": "string"},
			"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		}},
	}}
	for _, tc := range []struct {
		path, field, typ, err string
	}{
		{".spec.color", "spec.color", "string", ""},
		{".spec", "spec", "object", ""},
		{".spec.labels.app", "spec.labels[app]", "string", ""},
		{".spec.nope", "", "", "does not refer to a valid field"},
		{".spec.color.x", "", "", "does not refer to a valid field"},
		{".spec['color']", "", "", "array notation is not allowed"},
		{"spec.color", "", "", "expected [ or . but got: spec"},
		{".spec.", "", "", "unexpected end of JSON path"},
	} {
		field, typ, err := selectablePath(tc.path, s)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if field != tc.field || typ != tc.typ || gotErr != tc.err {
			t.Errorf("selectablePath(%q) = %q, %q, %v; want %q, %q, %q", tc.path, field, typ, err, tc.field, tc.typ, tc.err)
		}
	}
}
