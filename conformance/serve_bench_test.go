package conformance

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	agg "github.com/kapi-dev/kapi/examples/aggregated/server"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/serve"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Benchmarks of issue 23, side by side in one run (BENCHMARKS.md):
// client-go's typed client (protobuf) over TLS and HTTP/2 against kapi's
// example server behind serve and against the real kube-apiserver; and
// the aggregated server's gizmos read through kube-aggregator beside the
// same kind served by kube-apiserver itself as a CRD.

const benchList = 100 // objects in each listed collection

// BenchmarkServeTLSHTTP2 gets, lists (100 configmaps) and creates
// configmaps with client-go over TLS and HTTP/2.
func BenchmarkServeTLSHTTP2(b *testing.B) {
	ctx := context.Background()
	reg, err := server.New(server.Options{Auth: server.Auth{TokenAuthFile: writeTempB(b, "tokens.csv", []byte(tokenFile))}})
	if err != nil {
		b.Fatal(err)
	}
	sv := startServed(b, reg, serve.Options{})
	ref := kubeAPIServer(b)
	targets := []struct {
		name string
		cfg  *rest.Config
	}{
		{"kapi", &rest.Config{Host: sv.url(), BearerToken: "admin-token", TLSClientConfig: rest.TLSClientConfig{CAData: sv.ca}}},
		{"kube-apiserver", refREST(ref)},
	}
	for _, tg := range targets {
		tg.cfg.QPS, tg.cfg.Burst = -1, 0 // no client-side rate limit
		cs := kubernetes.NewForConfigOrDie(tg.cfg)
		ns := fmt.Sprintf("bench-serve-%d", time.Now().UnixNano())
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		cms := cs.CoreV1().ConfigMaps(ns)
		for i := range benchList {
			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": strings.Repeat("v", 256)}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("get/"+tg.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := cms.Get(ctx, "cm-0", metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("list100/"+tg.name, func(b *testing.B) {
			for b.Loop() {
				l, err := cms.List(ctx, metav1.ListOptions{})
				if err != nil || len(l.Items) != benchList {
					b.Fatal(err, len(l.Items))
				}
			}
		})
		b.Run("create/"+tg.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("new-%d", i)}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAggregated gets and lists (100) gizmos with client-go's
// dynamic client through kube-aggregator to examples/aggregated, beside
// the same kind (the same schema, in a group of its own) served by
// kube-apiserver as a CRD; and the aggregated server's heap per stored
// gizmo, without etcd.
func BenchmarkAggregated(b *testing.B) {
	ctx := context.Background()
	ref := kubeAPIServer(b)
	sv, _ := aggregated(b, ref)
	registerAPIService(b, ref, sv)
	crd := strings.ReplaceAll(string(agg.GizmosManifest()), "fleet.example.com", "fleetcrd.example.com")
	crdJSON := map[string]any{}
	if err := yaml.Unmarshal([]byte(crd), &crdJSON); err != nil {
		b.Fatal(err)
	}
	if code, body := rawJSON(b, ref, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crdJSON); code != 201 && code != 409 {
		b.Fatalf("create the CRD: %d %s", code, body)
	}
	dyn := dynamic.NewForConfigOrDie(func() *rest.Config { c := refREST(ref); c.QPS, c.Burst = -1, 0; return c }())
	ns := "default"
	for _, tg := range []struct {
		name, group string
	}{{"aggregated", "fleet.example.com"}, {"crd", "fleetcrd.example.com"}} {
		gvr := gizmosGVR
		gvr.Group = tg.group
		res := dyn.Resource(gvr).Namespace(ns)
		// The CRD is served once established.
		waitForB(b, func() bool {
			_, err := res.List(ctx, metav1.ListOptions{Limit: 1})
			return err == nil
		})
		for i := range benchList {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": tg.group + "/v1", "kind": "Gizmo",
				"metadata": map[string]any{"name": fmt.Sprintf("g-%d", i)}, "spec": map[string]any{"size": int64(i), "label": strings.Repeat("l", 256)}}}
			if _, err := res.Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				b.Fatal(err)
			}
		}
		b.Run("get/"+tg.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := res.Get(ctx, "g-0", metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("list100/"+tg.name, func(b *testing.B) {
			for b.Loop() {
				l, err := res.List(ctx, metav1.ListOptions{})
				if err != nil || len(l.Items) != benchList {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("heap-per-object/aggregated", func(b *testing.B) {
		for b.Loop() {
			b.ReportMetric(heapPerGizmo(b, 2000), "B/object")
		}
	})
}

// heapPerGizmo is the heap a fresh aggregated registry (memory store)
// holds per gizmo after n creates of the benchmark's gizmo, through its
// handler in-process.
func heapPerGizmo(b *testing.B, n int) float64 {
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Close()
	if err := reg.Register(agg.Gizmos()); err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		body := fmt.Sprintf(`{"apiVersion":"fleet.example.com/v1","kind":"Gizmo","metadata":{"name":"g-%d"},"spec":{"size":%d,"label":%q}}`, i, i, strings.Repeat("l", 256))
		req, _ := http.NewRequest("POST", "/apis/fleet.example.com/v1/namespaces/default/gizmos", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := &discard{h: http.Header{}}
		reg.ServeHTTP(w, req)
		if w.code != 201 {
			b.Fatalf("create: %d", w.code)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(reg)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

type discard struct {
	h    http.Header
	code int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) WriteHeader(c int)   { d.code = c }
func (d *discard) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = 200
	}
	return len(p), nil
}

func writeTempB(b *testing.B, name string, data []byte) string {
	b.Helper()
	p := b.TempDir() + "/" + name
	if err := os.WriteFile(p, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

func waitForB(b *testing.B, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatal("timed out")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
