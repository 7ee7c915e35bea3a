package conformance

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/serve"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd3"
)

// Serving as kube-apiserver does (issue 23): real clients over TLS and
// HTTP/2, the in-flight limit, graceful shutdown.

// served is the example server behind serve.Server on loopback.
type served struct {
	s    *serve.Server
	addr string
	ca   []byte
	done chan error
}

// startServed serves reg with opts (TLS self-signed unless opts say
// otherwise); it is shut down when the test ends.
func startServed(t testing.TB, h http.Handler, opts serve.Options) *served {
	t.Helper()
	s, err := serve.New(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sv := &served{s: s, addr: ln.Addr().String(), ca: s.CertificateAuthority(), done: make(chan error, 1)}
	go func() { sv.done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		s.Shutdown(ctx)
		<-sv.done
	})
	return sv
}

func (sv *served) url() string { return "https://" + sv.addr }

// protocols records the protocol of each response a client-go client
// got.
type protocols struct {
	mu    sync.Mutex
	seen  map[string]int
	inner http.RoundTripper
}

func (p *protocols) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.inner.RoundTrip(req)
	if err == nil {
		p.mu.Lock()
		p.seen[resp.Proto]++
		p.mu.Unlock()
	}
	return resp, err
}

// TestServeTLSHTTP2: kubectl and client-go, in their default
// configurations, over TLS (the self-signed certificate's CA in the
// kubeconfig) and HTTP/2, a watch included.
func TestServeTLSHTTP2(t *testing.T) {
	// Without credentials kubectl asks for a password over https: it
	// presents a token.
	reg, err := server.New(withStorage(t, server.Options{Auth: server.Auth{TokenAuthFile: writeTemp(t, "tokens.csv", []byte(tokenFile))}}))
	if err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logBuf}, nil))
	sv := startServed(t, reg, serve.Options{Logger: log})

	k := kubectlAs(t, sv.url(), server.Credentials{Token: "alice-token", CertificateAuthPEM: sv.ca})
	k.mustRun(t, "create", "configmap", "c1", "--from-literal=a=b")
	if out := k.mustRun(t, "get", "configmap", "c1", "-o", "jsonpath={.data.a}"); out != "b" {
		t.Errorf("kubectl get: %q; want b", out)
	}
	logMu.Lock()
	kubectlLog := logBuf.String()
	logMu.Unlock()
	if !strings.Contains(kubectlLog, "verb=create resource=configmaps namespace=default user=alice code=201") || !strings.Contains(kubectlLog, "proto=HTTP/2.0") || strings.Contains(kubectlLog, "proto=HTTP/1.1") {
		t.Errorf("kubectl's requests: want create 201 over HTTP/2.0 only; the server logged:\n%s", kubectlLog)
	}

	p := &protocols{seen: map[string]int{}}
	cfg := &rest.Config{Host: sv.url(), TLSClientConfig: rest.TLSClientConfig{CAData: sv.ca},
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper { p.inner = rt; return p }}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := testContext(t)
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for len(names) < 2 {
		select {
		case ev := <-w.ResultChan():
			names = append(names, string(ev.Type)+" "+ev.Object.(*corev1.ConfigMap).Name)
		case <-ctx.Done():
			t.Fatalf("watch: got %v; want c1 and c2 added", names)
		}
	}
	if fmt.Sprint(names) != "[ADDED c1 ADDED c2]" {
		t.Errorf("watch: got %v; want [ADDED c1 ADDED c2]", names)
	}
	p.mu.Lock()
	if p.seen["HTTP/2.0"] < 2 || len(p.seen) != 1 {
		t.Errorf("client-go's responses by protocol: %v; want HTTP/2.0 only", p.seen)
	}
	p.mu.Unlock()

	// kubectl get -w over TLS and HTTP/2 prints the list, then a change;
	// the server's graceful shutdown ends its watch cleanly, and kubectl
	// returns.
	watching := k.start("get", "configmaps", "-w", "--output-watch-events", "-o", "custom-columns=EVENT:.type,NAME:.object.metadata.name")
	watching.waitOutput(t, "c2")
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c3"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	watching.waitOutput(t, "c3")
	if err := sv.s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := watching.wait(t); err != nil {
		t.Errorf("kubectl get -w after the server's shutdown: %v; want a clean end\nstderr:\n%s", err, watching.errOut.String())
	}
	if got := strings.Fields(watching.out.String()); fmt.Sprint(got) != "[EVENT NAME ADDED c1 ADDED c2 ADDED c3]" {
		t.Errorf("kubectl get -w printed %q; want the two configmaps, then c3 added", got)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logBuf.String(), "verb=watch resource=configmaps namespace=default user=alice code=200") {
		t.Errorf("kubectl's watch was not logged as alice's:\n%s", logBuf.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// gate holds the requests that carry ?hold until released.
type gate struct {
	h       http.Handler
	entered chan struct{}
	release chan struct{}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Query().Has("hold") {
		g.entered <- struct{}{}
		<-g.release
	}
	g.h.ServeHTTP(w, req)
}

// refusals counts the responses of each code (a serve.Observer).
type refusals struct{ n429 atomic.Int64 }

func (r *refusals) Request(m serve.RequestMetric) {
	if m.Code == http.StatusTooManyRequests {
		r.n429.Add(1)
	}
}
func (r *refusals) LongRunning(serve.RequestMetric, int) {}
func (r *refusals) InFlight(string, int)                 {}

// TestServeMaxInFlight: with --max-requests-inflight=1 held by one
// request, client-go's get is refused with 429 and Retry-After, and
// retries it until it is served once the slot is free; a watch is not
// limited.
func TestServeMaxInFlight(t *testing.T) {
	reg, err := server.New(withStorage(t, server.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{h: reg, entered: make(chan struct{}), release: make(chan struct{})}
	obs := &refusals{}
	sv := startServed(t, g, serve.Options{Observer: obs, Limits: serve.Limits{MaxRequestsInFlight: 1, MaxMutatingRequestsInFlight: 1}})
	cfg := &rest.Config{Host: sv.url(), TLSClientConfig: rest.TLSClientConfig{CAData: sv.ca}}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := testContext(t)

	held := make(chan error, 1)
	go func() {
		_, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces").Param("hold", "1").DoRaw(ctx)
		held <- err
	}()
	<-g.entered

	// A watch is long-running: served while the slot is taken.
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch while the read-only slot is taken: %v", err)
	}
	w.Stop()

	got := make(chan error, 1)
	go func() {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		got <- err
	}()
	for obs.n429.Load() == 0 {
		select {
		case err := <-got:
			t.Fatalf("the get was answered (%v) while the only slot was taken; want 429 and a retry", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	// A raw request sees kube's 429.
	resp, err := clientFor(sv).Get(sv.url() + "/api/v1/namespaces/default")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("raw get: %d Retry-After %q; want 429 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	g.release <- struct{}{}
	if err := <-held; err != nil {
		t.Errorf("the held request: %v", err)
	}
	if err := <-got; err != nil {
		t.Errorf("client-go's get after its retries: %v; want served", err)
	}
}

// clientFor is an http.Client trusting sv's CA.
func clientFor(sv *served) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(sv.ca)
	return &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// sameEtcd returns n stores on one etcd under one key prefix: the
// storage of n replicas of a server.
func sameEtcd(t *testing.T, n int) []storage.Interface {
	t.Helper()
	srv := sharedEtcd(t)
	prefix := fmt.Sprintf("/conformance/%d", prefixes.Add(1))
	var out []storage.Interface
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		s, err := etcd3.New(ctx, etcd3.Options{Client: srv.Client, Prefix: prefix})
		cancel()
		if err != nil {
			t.Fatalf("etcd3.New: %v", err)
		}
		t.Cleanup(s.Close)
		out = append(out, cached(t, s, 0))
	}
	return out
}

// TestServeShutdownRewatch: two servers on one etcd; an informer watching
// through the first is moved to the second by the first's graceful
// shutdown (its watch ends cleanly, the client re-watches from its last
// resourceVersion), and sees every object once, nothing lost.
func TestServeShutdownRewatch(t *testing.T) {
	stores := sameEtcd(t, 2)
	var svs []*served
	for _, st := range stores {
		reg, err := server.New(server.Options{Storage: st})
		if err != nil {
			t.Fatal(err)
		}
		svs = append(svs, startServed(t, reg, serve.Options{}))
	}
	// The client trusts both servers' CAs and dials whichever is current,
	// as a load balancer would send it.
	var current atomic.Int64
	var caData []byte
	for _, sv := range svs {
		caData = append(caData, sv.ca...)
	}
	cfg := &rest.Config{Host: "https://127.0.0.1", TLSClientConfig: rest.TLSClientConfig{CAData: caData},
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, svs[current.Load()].addr)
		}}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := testContext(t)

	var mu sync.Mutex
	adds := map[string]int{}
	var deletes int
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
	inf := f.Core().V1().ConfigMaps().Informer()
	inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			mu.Lock()
			adds[obj.(*corev1.ConfigMap).Name]++
			mu.Unlock()
		},
		DeleteFunc: func(any) { mu.Lock(); deletes++; mu.Unlock() },
	})
	stop := make(chan struct{})
	defer close(stop)
	f.Start(stop)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	create := func(i int, name string) {
		c := kubernetes.NewForConfigOrDie(&rest.Config{Host: svs[i].url(), TLSClientConfig: rest.TLSClientConfig{CAData: svs[i].ca}})
		if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s on server %d: %v", name, i, err)
		}
	}
	waitAdds := func(want ...string) {
		t.Helper()
		for {
			mu.Lock()
			n := 0
			for _, w := range want {
				n += adds[w]
			}
			mu.Unlock()
			if n >= len(want) {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the informer saw %v; want %v", adds, want)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	create(0, "before")
	waitAdds("before")

	current.Store(1)
	create(1, "during") // written while the informer still watches the first server
	shut, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	if err := svs[0].s.Shutdown(shut); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	create(1, "after")
	waitAdds("before", "during", "after")
	mu.Lock()
	defer mu.Unlock()
	for name, n := range adds {
		if n != 1 {
			t.Errorf("%s added %d times; want once", name, n)
		}
	}
	if len(adds) != 3 || deletes != 0 {
		t.Errorf("adds %v, %d deletes; want before, during, after once each and no delete", adds, deletes)
	}
}
