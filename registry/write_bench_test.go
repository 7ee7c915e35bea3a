package registry_test

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/internal/benchobj"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage/memory"
)

// BenchmarkWriteSize creates and updates (PUT, alternating spec.replicas
// so that each update changes the object) objects of 2 KiB and 100 KiB
// through the registry's handler, without a socket: the request path
// whose JSON decode of the body (and, on update, of the old object) is
// the cost jsontree cuts.
func BenchmarkWriteSize(b *testing.B) {
	for _, s := range []struct {
		name string
		size int
	}{{"2KiB", 2 << 10}, {"100KiB", 100 << 10}} {
		body := bytes.Replace(benchobj.JSON(s.size), []byte(`,"uid":"6f1c2e7a-0d6b-4c8e-9a51-3b2f4d5e6a7b"`), nil, 1)
		newReg := func(b *testing.B) *registry.Registry {
			reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
			if err != nil {
				b.Fatal(err)
			}
			if err := reg.Register(widgets()); err != nil {
				b.Fatal(err)
			}
			return reg
		}
		serve := func(b *testing.B, reg *registry.Registry, method, path string, body []byte, want int) {
			w := httptest.NewRecorder()
			reg.ServeHTTP(w, request(method, path, "application/json", body))
			if w.Code != want {
				b.Fatalf("%s %s: got %d; want %d: %s", method, path, w.Code, want, w.Body)
			}
		}
		b.Run("create/"+s.name, func(b *testing.B) {
			reg := newReg(b)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				nb := bytes.Replace(body, []byte(`"name":"widget-sample"`), fmt.Appendf(nil, `"name":"w%d"`, i), 1)
				serve(b, reg, "POST", widgetsPath, nb, 201)
			}
		})
		b.Run("update/"+s.name, func(b *testing.B) {
			reg := newReg(b)
			serve(b, reg, "POST", widgetsPath, body, 201)
			bodies := [2][]byte{body, bytes.Replace(body, []byte(`"replicas":3`), []byte(`"replicas":4`), 1)}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				serve(b, reg, "PUT", widgetsPath+"/widget-sample", bodies[(i+1)%2], 200)
			}
		})
	}
}
