package builtin_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec/protobuf"
)

// BenchmarkHandlerProtobuf is the server's share of
// conformance's BenchmarkBuiltinHTTP: a Pod and a Deployment created and
// read through the registry's handler, without a socket or a client, in
// protobuf both ways as client-go's typed clientset sends and asks for
// them. cpu-ns/op is the process's CPU time per operation (GC included),
// steadier than ns/op on a shared machine:
//
//	go test -run '^$' -bench BenchmarkHandlerProtobuf -benchmem ./builtin/
func BenchmarkHandlerProtobuf(b *testing.B) {
	const proto = "application/vnd.kubernetes.protobuf"
	template := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}},
	}
	kinds := []struct {
		name, path, apiVersion, kind, message string
		obj                                   func(name string) map[string]any
	}{
		{"pod", "/api/v1/namespaces/default/pods", "v1", "Pod", "k8s.io.api.core.v1.Pod", func(name string) map[string]any {
			return map[string]any{"metadata": map[string]any{"name": name, "labels": map[string]any{"app": "web"}}, "spec": template["spec"]}
		}},
		{"deployment", "/apis/apps/v1/namespaces/default/deployments", "apps/v1", "Deployment", "k8s.io.api.apps.v1.Deployment", func(name string) map[string]any {
			return map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}, "template": template}}
		}},
	}
	serve := func(b *testing.B, r http.Handler, method, path string, body []byte, want int) {
		req := httptest.NewRequestWithContext(context.Background(), method, path, bytes.NewReader(body))
		req.Header.Set("Accept", proto+", application/json")
		if body != nil {
			req.Header.Set("Content-Type", proto)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
	}
	for _, k := range kinds {
		d, err := protobuf.Files.FindDescriptorByName(protoreflect.FullName(k.message))
		if err != nil {
			b.Fatal(err)
		}
		body := func(name string) []byte {
			raw, err := protobuf.Marshal(d.(protoreflect.MessageDescriptor), k.obj(name))
			if err != nil {
				b.Fatal(err)
			}
			return protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: k.apiVersion, Kind: k.kind}, raw)
		}
		b.Run(k.name+"-create", func(b *testing.B) {
			r := newRegistry(b)
			serve(b, r, http.MethodPost, k.path, body("warm"), http.StatusCreated)
			bodies := make([][]byte, 0, 1024)
			var made time.Duration // CPU spent making bodies
			defer reportCPU(b)(&made)
			for i := 0; b.Loop(); i++ {
				if i%1024 == 0 { // the bodies made outside the timing
					b.StopTimer()
					start, _ := cpuTime()
					bodies = bodies[:0]
					for j := range 1024 {
						bodies = append(bodies, body(fmt.Sprint("o-", i+j)))
					}
					end, _ := cpuTime()
					made += end - start
					b.StartTimer()
				}
				serve(b, r, http.MethodPost, k.path, bodies[i%1024], http.StatusCreated)
			}
		})
		b.Run(k.name+"-get", func(b *testing.B) {
			r := newRegistry(b)
			serve(b, r, http.MethodPost, k.path, body("o"), http.StatusCreated)
			defer reportCPU(b)(new(time.Duration))
			for b.Loop() {
				serve(b, r, http.MethodGet, k.path+"/o", nil, http.StatusOK)
			}
		})
	}
}

// reportCPU starts measuring b's CPU time; the function it returns, called
// after the loop with the CPU time spent outside the timed work, reports
// it per operation as cpu-ns/op.
func reportCPU(b *testing.B) func(*time.Duration) {
	start, ok := cpuTime()
	return func(untimed *time.Duration) {
		end, _ := cpuTime()
		if ok && b.N > 0 {
			b.ReportMetric(float64(end-start-*untimed)/float64(b.N), "cpu-ns/op")
		}
	}
}
