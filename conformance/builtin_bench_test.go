package conformance

import (
	"fmt"
	"net/http/httptest"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
)

// Pods and Deployments created and read over HTTP by the typed clientset
// in its default configuration (protobuf), kapi's example server beside
// the real kube-apiserver (on its etcd), in one run:
//
//	cd conformance && go test -run '^$' -bench 'BenchmarkBuiltin' -benchmem
func BenchmarkBuiltinHTTP(b *testing.B) {
	servers := []struct {
		name string
		cfg  func(b *testing.B) *rest.Config
	}{
		{"kapi", func(b *testing.B) *rest.Config {
			reg, err := server.New(server.Options{}) // the memory store
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(reg)
			b.Cleanup(srv.Close)
			return &rest.Config{Host: srv.URL, QPS: -1}
		}},
		{"kube-apiserver", func(b *testing.B) *rest.Config {
			refAPIServer.once.Do(func() {
				refAPIServer.srv, refAPIServer.etcd, refAPIServer.err = startKubeAPIServer()
			})
			if refAPIServer.err != nil {
				b.Fatalf("reference kube-apiserver: %v", refAPIServer.err)
			}
			s := refAPIServer.srv
			return &rest.Config{Host: s.URL, BearerToken: "admin-token", TLSClientConfig: rest.TLSClientConfig{CAData: s.CA}, QPS: -1}
		}},
	}
	for _, s := range servers {
		cfg := s.cfg(b)
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		ns := benchNamespace(b, cfg)
		pods, deps := cs.CoreV1().Pods(ns), cs.AppsV1().Deployments(ns)
		// Names are unique across rounds (-count) and sub-benchmarks.
		pod := func(int) *corev1.Pod {
			benchSeq++
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", benchSeq), Labels: app}, Spec: podSpec()}
		}
		dep := func(int) *appsv1.Deployment {
			benchSeq++
			return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d-%d", benchSeq)},
				Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: app}, Template: podTemplate(app)}}
		}
		b.Run("pod-create/"+s.name, func(b *testing.B) {
			ctx := b.Context()
			for i := 0; b.Loop(); i++ {
				if _, err := pods.Create(ctx, pod(i), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("pod-get/"+s.name, func(b *testing.B) {
			ctx := b.Context()
			p, err := pods.Create(ctx, pod(0), metav1.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := pods.Get(ctx, p.Name, metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("deployment-create/"+s.name, func(b *testing.B) {
			ctx := b.Context()
			for i := 0; b.Loop(); i++ {
				if _, err := deps.Create(ctx, dep(i), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("deployment-get/"+s.name, func(b *testing.B) {
			ctx := b.Context()
			d, err := deps.Create(ctx, dep(0), metav1.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := deps.Get(ctx, d.Name, metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var benchRuns, benchSeq int

// benchNamespace creates a namespace of its own for one server's rounds.
func benchNamespace(b *testing.B, cfg *rest.Config) string {
	b.Helper()
	benchRuns++
	name := fmt.Sprintf("bench-builtin-%d", benchRuns)
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := d.Resource(namespacesGVR).Create(b.Context(), ns, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	return name
}
