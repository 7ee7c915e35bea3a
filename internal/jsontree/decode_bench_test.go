package jsontree

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/internal/benchobj"
)

func BenchmarkDecode(b *testing.B) {
	for _, c := range []struct {
		name string
		in   []byte
		o    Options
	}{
		{"exact-dups", widgetJSON(), Options{Duplicates: true}},
		{"native", widgetJSON(), Options{Numbers: Native}},
		{"stored", storedWidgetJSON(), Options{}}, // managedFields' keys have escapes
	} {
		in := c.in
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Decode(in, c.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// storedWidgetJSON is the widget as stored after a create by client-go's
// dynamic client: with managedFields, whose list-map keys are JSON in
// JSON strings.
func storedWidgetJSON() []byte {
	var w map[string]any
	_ = json.Unmarshal(widgetJSON(), &w)
	w["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{
		"apiVersion": "example.com/v1", "fieldsType": "FieldsV1", "manager": "compare", "operation": "Update",
		"time": "2026-01-01T00:00:00Z",
		"fieldsV1": map[string]any{
			"f:metadata": map[string]any{"f:annotations": map[string]any{".": map[string]any{}, "f:example.com/owner": map[string]any{}},
				"f:labels": map[string]any{".": map[string]any{}, "f:app": map[string]any{}, "f:shard": map[string]any{}}},
			"f:spec": map[string]any{".": map[string]any{}, "f:color": map[string]any{}, "f:counter": map[string]any{}, "f:description": map[string]any{},
				"f:ports": map[string]any{".": map[string]any{},
					`k:{"port":80,"protocol":"TCP"}`:  map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:port": map[string]any{}, "f:protocol": map[string]any{}},
					`k:{"port":443,"protocol":"TCP"}`: map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:port": map[string]any{}, "f:protocol": map[string]any{}}},
				"f:replicas": map[string]any{}, "f:sentAt": map[string]any{}},
		},
	}}
	b, _ := json.Marshal(w)
	return b
}

// widgetJSON is bench/compare's ~2 KiB widget as client-go sends it.
func widgetJSON() []byte { return benchobj.Encode(benchobj.CompareWidget(1, "default")) }
