package patch_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
)

// compareSchema is the openAPIV3Schema of bench/compare's widget CRD.
const compareSchema = `
type: object
properties:
  apiVersion: {type: string}
  kind: {type: string}
  metadata: {type: object}
  spec:
    type: object
    properties:
      color: {type: string}
      replicas: {type: integer}
      counter: {type: integer}
      sentAt: {type: integer}
      description: {type: string}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [port, protocol]
        items:
          type: object
          required: [port, protocol]
          properties:
            name: {type: string}
            port: {type: integer}
            protocol: {type: string}
  status:
    type: object
    properties:
      readyReplicas: {type: integer}
`

// compareWidget is bench/compare's ~2 KiB widget as the registry hands it
// to the field manager on create: JSON form, server fields set.
func compareWidget(counter string) map[string]any {
	return map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name":              "w-000001",
			"namespace":         "ns-1",
			"uid":               "00000000-0000-4000-8000-000000000001",
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"generation":        json.Number("1"),
			"labels":            map[string]any{"app": "bench", "shard": "s01"},
			"annotations":       map[string]any{"example.com/owner": "team-w-000001"},
		},
		"spec": map[string]any{
			"color":       "blue",
			"replicas":    json.Number("3"),
			"counter":     json.Number(counter),
			"sentAt":      json.Number("0"),
			"description": strings.Repeat("0123456789abcdef", (2048-560)/16),
			"ports": []any{
				map[string]any{"name": "http", "port": json.Number("80"), "protocol": "TCP"},
				map[string]any{"name": "https", "port": json.Number("443"), "protocol": "TCP"},
			},
		},
		"status": map[string]any{"readyReplicas": json.Number("3")},
	}
}

func compareManager(tb testing.TB) *patch.FieldManager {
	tb.Helper()
	s, err := schema.Parse([]byte(compareSchema))
	if err != nil {
		tb.Fatal(err)
	}
	fm, err := patch.NewFieldManager(s, "example.com/v1", patch.FieldManagerOptions{
		Kind:        "Widget",
		ResetFields: map[string][]string{"": {"status"}, "status": {"metadata", "spec"}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return fm
}

// BenchmarkUpdateCompareWidget measures managedFields tracking of
// bench/compare's widget: a create (live nil) and an update by the same
// manager that changes spec.counter, the object carrying the
// managedFields read back (as client-go's update sends them).
func BenchmarkUpdateCompareWidget(b *testing.B) {
	fm := compareManager(b)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opts := patch.UpdateOptions{Manager: "compare", Now: now}
	b.Run("create", func(b *testing.B) {
		obj := compareWidget("0")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := fm.Update(nil, obj, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update", func(b *testing.B) {
		live, err := fm.Update(nil, compareWidget("0"), opts)
		if err != nil {
			b.Fatal(err)
		}
		live = canonical(b, live).(map[string]any)
		var objs [2]map[string]any
		for i, c := range []string{"1", "2"} {
			o := compareWidget(c)
			o["metadata"].(map[string]any)["managedFields"] = entries(live)
			objs[i] = o
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := fm.Update(live, objs[i%2], opts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
