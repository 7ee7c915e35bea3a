package cbor

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// configMap returns a ConfigMap-like object whose JSON encoding is about
// size bytes.
func configMap(size int) map[string]any {
	data := map[string]any{}
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":              "settings",
			"namespace":         "default",
			"uid":               "6b1f6c4e-3c57-4f4e-9f0b-0d1d5c2f7a10",
			"resourceVersion":   "12345",
			"generation":        json.Number("3"),
			"creationTimestamp": "2024-05-01T10:00:00Z",
			"labels":            map[string]any{"app": "web", "tier": "frontend", "app.kubernetes.io/name": "shop"},
			"annotations":       map[string]any{"example.com/owner": "team-a", "note": "größe ✓"},
			"finalizers":        []any{"example.com/cleanup"},
		},
		"data": data,
		"spec": map[string]any{
			"replicas": json.Number("2"),
			"ratio":    json.Number("0.75"),
			"weight":   json.Number("1.0e-3"),
			"enabled":  true,
			"paused":   false,
			"selector": nil,
		},
	}
	for i := 0; ; i++ {
		b, _ := json.Marshal(obj)
		if len(b) >= size {
			return obj
		}
		data[fmt.Sprintf("key-%04d.properties", i)] = strings.Repeat("v", 40) + fmt.Sprint(i)
	}
}

func BenchmarkMarshal(b *testing.B) {
	for _, size := range []int{2 << 10, 100 << 10} {
		obj := configMap(size)
		enc, _ := Marshal(obj)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(enc)))
			for b.Loop() {
				if _, err := Marshal(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	for _, size := range []int{2 << 10, 100 << 10} {
		enc, err := Marshal(configMap(size))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(enc)))
			for b.Loop() {
				if _, err := Unmarshal(enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendList assembles a 500-item list from cached item bytes.
func BenchmarkAppendList(b *testing.B) {
	items := make([][]byte, 500)
	for i := range items {
		items[i], _ = AppendValue(nil, configMap(2<<10))
	}
	meta := map[string]any{"resourceVersion": "12345"}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = AppendList(dst[:0], "ConfigMapList", "v1", meta, items); err != nil {
			b.Fatal(err)
		}
	}
}
