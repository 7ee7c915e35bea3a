package envtest_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Start to the first successful request (a typed GET of the default
// namespace, protobuf) and Stop, over loopback TLS and in-process: what
// the in-process transport saves (no certificate, no listener, no TLS
// handshake). cpu-ms-per-start is the process's CPU time (user and
// system, every goroutine's) per start to first request: on a loaded
// machine it moves less than the wall time.
func BenchmarkStartToFirstRequest(b *testing.B) {
	for _, inProcess := range []bool{false, true} {
		b.Run(map[bool]string{false: "tls", true: "in-process"}[inProcess], func(b *testing.B) {
			var startTotal, stopTotal, cpuTotal time.Duration
			for b.Loop() {
				c0 := cpuTime()
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
				cpuTotal += cpuTime() - c0
				if err := e.Stop(); err != nil {
					b.Fatal(err)
				}
				startTotal += t1.Sub(t0)
				stopTotal += time.Since(t1)
			}
			b.ReportMetric(float64(startTotal.Microseconds())/1000/float64(b.N), "ms-to-first-request")
			b.ReportMetric(float64(stopTotal.Microseconds())/1000/float64(b.N), "ms-to-stop")
			b.ReportMetric(float64(cpuTotal.Microseconds())/1000/float64(b.N), "cpu-ms-per-start")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
