package registry_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/memory"
)

// compareCRD is bench/compare's widgets CRD.
const compareCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
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

// compareWidgetJSON is bench/compare's widget i as client-go sends it.
func compareWidgetJSON(i int) []byte {
	name := fmt.Sprintf("w-%06d", i)
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{
			"name": name, "namespace": "default",
			"uid":               fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"labels":            map[string]any{"app": "bench", "shard": fmt.Sprintf("s%02d", i%100)},
			"annotations":       map[string]any{"example.com/owner": "team-" + name},
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

// BenchmarkWriteCompareWidget creates bench/compare's widget through the
// registry's handler (its CRD, so a schema, pruning and managedFields
// against it), and updates it as the bench's update scenario does: the
// object read back, spec.counter incremented, PUT.
func BenchmarkWriteCompareWidget(b *testing.B) {
	newReg := func(b *testing.B) *registry.Registry {
		defs, err := schema.ParseCRDs([]byte(compareCRD))
		if err != nil {
			b.Fatal(err)
		}
		reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
		if err != nil {
			b.Fatal(err)
		}
		for _, res := range registry.FromCRD(defs[0]) {
			if err := reg.Register(res); err != nil {
				b.Fatal(err)
			}
		}
		return reg
	}
	serve := func(b *testing.B, reg *registry.Registry, method, path string, body []byte, want int) []byte {
		w := httptest.NewRecorder()
		reg.ServeHTTP(w, request(method, path, "application/json", body))
		if w.Code != want {
			b.Fatalf("%s %s: got %d; want %d: %s", method, path, w.Code, want, w.Body)
		}
		return w.Body.Bytes()
	}
	b.Run("create", func(b *testing.B) {
		reg := newReg(b)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			serve(b, reg, "POST", widgetsPath, compareWidgetJSON(i), 201)
		}
	})
	b.Run("update", func(b *testing.B) {
		reg := newReg(b)
		cur := serve(b, reg, "POST", widgetsPath, compareWidgetJSON(0), 201)
		rv := regexp.MustCompile(`"resourceVersion":"[0-9]+"`)
		counter := regexp.MustCompile(`"counter":[0-9]+`)
		path := widgetsPath + "/w-000000"
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			body := counter.ReplaceAll(cur, fmt.Appendf(nil, `"counter":%d`, i+1))
			cur = bytes.Clone(serve(b, reg, "PUT", path, body, 200))
			if !rv.Match(cur) {
				b.Fatalf("no resourceVersion in %s", cur)
			}
		}
	})
}
