package protobuf

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchConfigMap is a ConfigMap in JSON form of about size bytes: typical
// metadata and data entries of 100 bytes.
func benchConfigMap(size int) map[string]any {
	data := map[string]any{}
	for i := 0; len(data)*128 < size-500; i++ {
		data[fmt.Sprintf("key-%05d.properties", i)] = strings.Repeat("v", 100)
	}
	return map[string]any{
		"metadata": map[string]any{
			"name": "settings", "namespace": "default", "uid": "6b1f6c4e-3c57-4f4e-9f0b-0d1d5c2f7a10",
			"resourceVersion": "12345", "creationTimestamp": "2026-11-23T07:38:04Z",
			"labels":      map[string]any{"app": "web", "tier": "frontend"},
			"annotations": map[string]any{"example.com/owner": "team-a"},
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
				"time": "2026-11-23T07:38:04Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}}},
			"generation": json.Number("1"),
		},
		"data": data,
	}
}

func BenchmarkMarshal(b *testing.B) {
	for _, size := range []int{2 << 10, 100 << 10} {
		cm := benchConfigMap(size)
		raw, _ := Marshal(ConfigMap, cm)
		b.Run(fmt.Sprintf("ConfigMap-%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := Marshal(ConfigMap, cm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	for _, size := range []int{2 << 10, 100 << 10} {
		raw, _ := Marshal(ConfigMap, benchConfigMap(size))
		b.Run(fmt.Sprintf("ConfigMap-%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := Unmarshal(ConfigMap, raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendWatchFrame(b *testing.B) {
	raw, _ := Marshal(ConfigMap, benchConfigMap(2<<10))
	tm := TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	buf := make([]byte, 0, 4<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		buf = AppendWatchFrame(buf[:0], "MODIFIED", tm, raw)
	}
}
