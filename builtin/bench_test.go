package builtin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkPodHeap is the heap a stored Pod costs in the memory store,
// written as kubectl run writes one (defaults, managedFields and all):
//
//	go test -run '^$' -bench BenchmarkPodHeap -benchtime 5000x ./builtin/
func BenchmarkPodHeap(b *testing.B) {
	r := newRegistry(b)
	const pod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"labels":{"run":"p"}},"spec":{"containers":[{"name":"p","image":"busybox:1.36","resources":{}}],"restartPolicy":"Never","dnsPolicy":"ClusterFirst"}}`
	create := func(i int) {
		req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/api/v1/namespaces/default/pods?fieldManager=kubectl-run", strings.NewReader(fmt.Sprintf(pod, fmt.Sprint("p-", i))))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusCreated {
			b.Fatalf("create: %d %s", w.Code, w.Body)
		}
	}
	create(-1) // the schemas and tables built once
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := range b.N {
		create(i)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "heap-B/pod")
	runtime.KeepAlive(r)
}
