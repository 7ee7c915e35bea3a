package registry_test

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/kapi-dev/kapi/internal/benchobj"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/memory"
)

// compareWidgetJSON is bench/compare's widget i as client-go sends it.
func compareWidgetJSON(i int) []byte { return benchobj.Encode(benchobj.CompareWidget(i, "default")) }

// BenchmarkWriteCompareWidget creates bench/compare's widget through the
// registry's handler (its CRD, so a schema, pruning and managedFields
// against it), and updates it as the bench's update scenario does: the
// object read back, spec.counter incremented, PUT.
func BenchmarkWriteCompareWidget(b *testing.B) {
	newReg := func(b *testing.B) *registry.Registry {
		defs, err := schema.ParseCRDs([]byte(benchobj.CompareCRD))
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

// compareCRD is bench/compare's BenchmarkCRDMany CRD of group g: one
// version with a small schema and a printer column.
func compareCRD(g string) []byte {
	return []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"things.` + g + `"},
"spec":{"group":"` + g + `","scope":"Namespaced","names":{"plural":"things","kind":"Thing"},"versions":[{"name":"v1","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"},"color":{"type":"string"}}}}}},
"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}]}]}}`)
}

// BenchmarkWriteCRD creates a CRD through the registry's handler, each
// of its own group, as BenchmarkCRDMany does: validated, stored,
// reconciled by the CRD feed (names accepted, Established, its kind
// served) before the 201.
func BenchmarkWriteCRD(b *testing.B) {
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w := httptest.NewRecorder()
		reg.ServeHTTP(w, request("POST", crdsPath, "application/json", compareCRD(fmt.Sprintf("g%06d.bench.example.org", i))))
		if w.Code != 201 {
			b.Fatalf("create CRD %d: got %d: %s", i, w.Code, w.Body)
		}
	}
}
