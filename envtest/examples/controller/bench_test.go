package controller_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest/examples/controller"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// The benchmarks run on whichever envtest the build tag picks (kapi's by
// default, controller-runtime's with -tags crenvtest and KUBEBUILDER_ASSETS
// holding kube-apiserver and etcd), so one command per tag gives the two
// columns of BENCHMARKS.md.

// Start to the first successful request (a typed GET of the default
// namespace), and the stop, per Environment.
func BenchmarkStartToFirstRequest(b *testing.B) {
	var startTotal, stopTotal time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		env := newEnvironment()
		cfg, err := env.Start()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
		startTotal += t1.Sub(t0)
		stopTotal += time.Since(t1)
	}
	b.ReportMetric(float64(startTotal.Microseconds())/1000/float64(b.N), "ms-to-first-request")
	b.ReportMetric(float64(stopTotal.Microseconds())/1000/float64(b.N), "ms-to-stop")
}

// The memory an Environment holds once started and served its first
// request: this process's live heap, and the resident memory of the
// processes it started (kube-apiserver and etcd for controller-runtime's
// envtest; none for kapi's), averaged over 5 Environments running at once.
func BenchmarkMemoryPerEnvironment(b *testing.B) {
	const n = 5
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		envs := make([]*Environment, n)
		for j := range envs {
			envs[j] = newEnvironment()
			cfg, err := envs[j].Start()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		rss := childrenRSS()
		for _, e := range envs {
			if err := e.Stop(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n/(1<<20), "heap-MiB/env")
		b.ReportMetric(float64(rss)/n/(1<<20), "child-RSS-MiB/env")
	}
}

// childrenRSS is the resident memory of this process's children, in
// bytes (Linux /proc; 0 elsewhere).
func childrenRSS() int64 {
	self := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var total int64
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		i := bytes.LastIndexByte(b, ')')
		if f := strings.Fields(string(b[i+1:])); i < 0 || len(f) < 2 || f[1] != self {
			continue
		}
		status, err := os.Open(filepath.Join(filepath.Dir(s), "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(status)
		for sc.Scan() {
			if kb, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				v, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
				total += v << 10
			}
		}
		status.Close()
	}
	return total
}

// A suite of 100 tests, each with its own Environment and manager, run
// GOMAXPROCS at a time (go test's default -parallel): each creates a
// Greeting and waits for its ConfigMap.
func BenchmarkSuite100(b *testing.B) {
	const tests = 100
	parallel := runtime.GOMAXPROCS(0)
	for i := 0; i < b.N; i++ {
		sem := make(chan struct{}, parallel)
		errs := make(chan error, tests)
		var wg sync.WaitGroup
		for j := 0; j < tests; j++ {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				t := &benchT{name: fmt.Sprintf("test-%d", j)}
				defer func() {
					t.cleanup()
					errs <- t.err
					<-sem
					wg.Done()
				}()
				oneTest(t) // may end the goroutine (Fatalf)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(parallel), "parallel")
}

// oneTest is one test of BenchmarkSuite100, as TestGreeting runs it.
func oneTest(t *benchT) {
	_, cfg := startEnvironment(t)
	c := startManager(t, cfg)
	ctx := ctxFor(t)
	g := greeting("default", "g", "hello")
	if err := c.Create(ctx, g); err != nil {
		t.Fatalf("create: %v", err)
	}
	waitConfigMap(ctx, t, c, client.ObjectKeyFromObject(g), "hello")
}

// Reconciling 1,000 new Greetings in a row (each: get, create the
// ConfigMap, update the status), with a client on the Environment (as
// Start configures it: QPS 1000, burst 2000, and without client-go's rate
// limiter) beside controller-runtime's fake client.
func BenchmarkReconcile1000(b *testing.B) {
	const objects = 1000
	clients := []struct {
		name string
		new  func(b *testing.B) client.Client
	}{
		{name: "envtest", new: func(b *testing.B) client.Client {
			_, cfg := startEnvironment(b)
			c, err := client.New(cfg, client.Options{Scheme: scheme})
			if err != nil {
				b.Fatal(err)
			}
			return c
		}},
		{name: "envtest-no-client-rate-limit", new: func(b *testing.B) client.Client {
			_, cfg := startEnvironment(b)
			cfg = rest.CopyConfig(cfg)
			cfg.QPS = -1 // client-go's token bucket off: the server's speed
			c, err := client.New(cfg, client.Options{Scheme: scheme})
			if err != nil {
				b.Fatal(err)
			}
			return c
		}},
		{name: "fake", new: func(*testing.B) client.Client {
			return fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&controller.Greeting{}).Build()
		}},
	}
	for _, cl := range clients {
		b.Run(cl.name, func(b *testing.B) {
			c := cl.new(b)
			r := &controller.Reconciler{Client: c}
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				ns := fmt.Sprintf("ns-%d", i)
				if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
					b.Fatal(err)
				}
				for j := 0; j < objects; j++ {
					if err := c.Create(ctx, greeting(ns, fmt.Sprintf("g-%d", j), "hello")); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				for j := 0; j < objects; j++ {
					req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("g-%d", j)}}
					if _, err := r.Reconcile(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(objects*b.N)/b.Elapsed().Seconds(), "reconciles/s")
		})
	}
}

// benchT is the testing.TB the suite's helpers take, for a test run by a
// benchmark: Fatalf records the error and ends the goroutine, Cleanup
// runs at cleanup.
type benchT struct {
	testing.TB // nil: only the methods below are called
	name       string
	mu         sync.Mutex
	err        error
	cleanups   []func()
}

func (t *benchT) Helper()      {}
func (t *benchT) Name() string { return t.name }
func (t *benchT) Cleanup(f func()) {
	t.mu.Lock()
	t.cleanups = append(t.cleanups, f)
	t.mu.Unlock()
}
func (t *benchT) Errorf(format string, args ...any) {
	t.mu.Lock()
	if t.err == nil {
		t.err = fmt.Errorf("%s: "+format, append([]any{t.name}, args...)...)
	}
	t.mu.Unlock()
}
func (t *benchT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}
func (t *benchT) Fatal(args ...any) { t.Fatalf("%s", fmt.Sprint(args...)) }
func (t *benchT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
