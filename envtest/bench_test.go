package envtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Start to the first successful request (a typed GET of the default
// namespace, protobuf) and Stop, over loopback TLS and in-process: what
// the in-process transport saves (no certificate, no listener, no TLS
// handshake).
func BenchmarkStartToFirstRequest(b *testing.B) {
	for _, inProcess := range []bool{false, true} {
		b.Run(map[bool]string{false: "tls", true: "in-process"}[inProcess], func(b *testing.B) {
			var startTotal, stopTotal time.Duration
			for b.Loop() {
				t0 := time.Now()
				e := &envtest.Environment{InProcess: inProcess}
				cfg, err := e.Start()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := e.Stop(); err != nil {
					b.Fatal(err)
				}
				startTotal += t1.Sub(t0)
				stopTotal += time.Since(t1)
			}
			b.ReportMetric(float64(startTotal.Microseconds())/1000/float64(b.N), "ms-to-first-request")
			b.ReportMetric(float64(stopTotal.Microseconds())/1000/float64(b.N), "ms-to-stop")
		})
	}
}
