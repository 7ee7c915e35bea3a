package jsontree

import (
	"encoding/json"
	"strings"
	"testing"
)

func BenchmarkDecode(b *testing.B) {
	in := widgetJSON()
	for _, c := range []struct {
		name string
		o    Options
	}{{"exact-dups", Options{Duplicates: true}}, {"native", Options{Numbers: Native}}} {
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

// widgetJSON is bench/compare's ~2 KiB widget as client-go sends it.
func widgetJSON() []byte {
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{
			"name": "w-000001", "namespace": "default",
			"uid":               "00000000-0000-4000-8000-000000000001",
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"labels":            map[string]any{"app": "bench", "shard": "s01"},
			"annotations":       map[string]any{"example.com/owner": "team-w-000001"},
		},
		"spec": map[string]any{
			"color": "blue", "replicas": 3, "counter": 0, "sentAt": 0,
			"description": strings.Repeat("0123456789abcdef", (2048-560)/16),
			"ports": []any{
				map[string]any{"name": "http", "port": 80, "protocol": "TCP"},
				map[string]any{"name": "https", "port": 443, "protocol": "TCP"},
			},
		},
		"status": map[string]any{"readyReplicas": 3},
	})
	return b
}
