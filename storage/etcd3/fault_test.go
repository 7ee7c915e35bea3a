package etcd3_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	apiserver "github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/storage/etcd3"
)

// freePort returns a port of 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// etcdAt starts a single-member etcd on dir with fixed client and peer
// ports, so that it can be stopped and started again where its clients
// expect it. Unlike the pool's servers it syncs its writes.
func etcdAt(t *testing.T, dir, clientPort, peerPort string) *embed.Etcd {
	t.Helper()
	cu := url.URL{Scheme: "http", Host: "127.0.0.1:" + clientPort}
	pu := url.URL{Scheme: "http", Host: "127.0.0.1:" + peerPort}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{os.DevNull}
	// Short raft ticks: a quick election after the restart, and a
	// shorter graceful stop (which waits 5s + 2 elections for the open
	// watch streams).
	cfg.TickMs, cfg.ElectionMs = 10, 100
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(10 * time.Second):
		e.Close()
		t.Fatalf("etcd not ready within 10s")
	}
	return e
}

// outcome is what one request answered, or how it failed.
type outcome struct {
	name string
	resp response
	took time.Duration
	err  error
}

// TestFaultEtcdRestart stops the etcd under a running server and starts
// it again on the same data directory:
//   - requests during the outage answer 503 (reads, and the read a
//     delete or a namespaced create starts with: nothing changed,
//     Retry-After) or 504 (a write sent to etcd, such as an update
//     tried on the state the store remembers: it may or may not have
//     happened) with a Status,
//     within the store's timeout, instead of hanging;
//   - a watch open across the outage resumes from its last
//     resourceVersion (or ends with 410 Expired, which the test accepts
//     as kube's reflector does) and sees every acknowledged write once;
//   - every write acknowledged before, during or after the outage is
//     readable afterwards.
func TestFaultEtcdRestart(t *testing.T) {
	const storeTimeout = time.Second
	dir := t.TempDir()
	clientPort, peerPort := freePort(t), freePort(t)
	e := etcdAt(t, dir, clientPort, peerPort)
	defer func() { e.Close() }()
	c := faultClient(t, "127.0.0.1:"+clientPort)
	defer c.Close()
	st, err := etcd3.New(t.Context(), etcd3.Options{Client: c, Prefix: "/fault", Timeout: storeTimeout})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := apiserver.New(apiserver.Options{Storage: st})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(reg)
	defer hs.Close()
	defer st.Close() // ends the watch before hs.Close waits for it
	base := hs.URL + cmPath

	for i := range 3 {
		mustDo(t, http.MethodPost, base, configMap(fmt.Sprintf("before-%d", i), "x"), http.StatusCreated)
	}
	start := mustDo(t, http.MethodGet, base, nil, http.StatusOK).Metadata.ResourceVersion
	ws := startWatch(t, base, start)

	// A writer creates objects before, during and after the outage.
	var (
		mu      sync.Mutex
		acked   = map[string]string{} // name → resourceVersion
		failed  []outcome             // answers other than 201
		stopped = make(chan struct{})
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stopped:
				return
			default:
			}
			name := fmt.Sprintf("w-%d", i)
			t0 := time.Now()
			r, err := do(t.Context(), http.DefaultClient, http.MethodPost, base, configMap(name, "x"), 5*time.Second)
			mu.Lock()
			if err == nil && r.code == http.StatusCreated {
				acked[name] = r.body.Metadata.ResourceVersion
			} else {
				failed = append(failed, outcome{name, r, time.Since(t0), err})
			}
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	waitAcked := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			got := len(acked)
			mu.Unlock()
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the writer has %d acknowledged writes after 10s; want %d", got, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitAcked(5)

	t0 := time.Now()
	e.Close() // the outage
	t.Logf("etcd stopped in %v", time.Since(t0).Round(time.Millisecond))
	mu.Lock()
	ackedBefore := len(acked)
	mu.Unlock()

	upd := configMap("before-0", "y")
	tests := []struct {
		name, method, url string
		body              any
		want              int
	}{
		{"get", http.MethodGet, base + "/before-0", nil, http.StatusServiceUnavailable},
		{"list", http.MethodGet, base, nil, http.StatusServiceUnavailable},
		{"list exact", http.MethodGet, base + "?resourceVersion=" + start + "&resourceVersionMatch=Exact", nil, http.StatusServiceUnavailable},
		{"watch", http.MethodGet, base + "?watch=true&resourceVersion=" + start, nil, http.StatusServiceUnavailable},
		// A namespaced create first reads its namespace: nothing written.
		{"create", http.MethodPost, base, configMap("during", "x"), http.StatusServiceUnavailable},
		// A namespace's create is a bare write: its outcome is unknown.
		{"create namespace", http.MethodPost, hs.URL + "/api/v1/namespaces",
			map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "during"}}, http.StatusGatewayTimeout},
		// An update of a key the store knows the state of (it created
		// before-0) is a bare write too, as in kube-apiserver with its
		// watch cache: its outcome is unknown.
		{"update", http.MethodPut, base + "/before-0", upd, http.StatusGatewayTimeout},
		{"delete", http.MethodDelete, base + "/before-1", nil, http.StatusServiceUnavailable},
	}
	outcomes := make([]outcome, len(tests))
	var wg sync.WaitGroup
	for i, tc := range tests {
		wg.Go(func() {
			t0 := time.Now()
			r, err := do(t.Context(), http.DefaultClient, tc.method, tc.url, tc.body, 5*time.Second)
			outcomes[i] = outcome{tc.name, r, time.Since(t0), err}
		})
	}
	wg.Wait()
	for i, tc := range tests {
		t.Run("outage/"+tc.name, func(t *testing.T) {
			o := outcomes[i]
			if o.err != nil {
				t.Fatalf("got %v (after %v); want an answer within the store's timeout", o.err, o.took)
			}
			if o.resp.code != tc.want || o.resp.body.Kind != "Status" || o.resp.body.Code != tc.want {
				t.Errorf("got %d %+v; want %d with a Status of code %d", o.resp.code, o.resp.body, tc.want, tc.want)
			}
			if wantRA := tc.want == http.StatusServiceUnavailable; (o.resp.retryAfter != "") != wantRA {
				t.Errorf("got Retry-After %q; want one: %v", o.resp.retryAfter, wantRA)
			}
			t.Logf("%d %s %q in %v", o.resp.code, o.resp.body.Reason, o.resp.body.Message, o.took.Round(time.Millisecond))
		})
	}

	t0 = time.Now()
	e = etcdAt(t, dir, clientPort, peerPort) // the same data, the same address
	t.Logf("etcd restarted in %v", time.Since(t0).Round(time.Millisecond))
	waitAcked(ackedBefore + 5)
	t.Logf("writes acknowledged again after %v", time.Since(t0).Round(time.Millisecond))
	close(stopped)
	<-done

	mu.Lock()
	defer mu.Unlock()
	for _, o := range failed {
		switch {
		case o.err != nil:
			t.Errorf("writer, %s: got %v after %v; want an answer", o.name, o.err, o.took)
		case o.resp.code != http.StatusServiceUnavailable && o.resp.code != http.StatusGatewayTimeout:
			t.Errorf("writer, %s: got %d %+v; want 201, 503 or 504", o.name, o.resp.code, o.resp.body)
		}
	}
	t.Logf("writer: %d acknowledged, %d refused during the outage", len(acked), len(failed))

	// No acknowledged write is lost.
	for name, rv := range acked {
		got := mustDo(t, http.MethodGet, base+"/"+name, nil, http.StatusOK)
		if got.Metadata.ResourceVersion != rv {
			t.Errorf("get %s: got rv %s; want the acknowledged %s", name, got.Metadata.ResourceVersion, rv)
		}
	}

	// The watch saw each acknowledged write once, in order, across the
	// outage; writes refused with 504 may or may not show.
	seen := map[string]int{}
	var last uint64
	deadline := time.After(10 * time.Second)
	for missing := len(acked); missing > 0; {
		select {
		case ev, ok := <-ws.C:
			switch {
			case !ok:
				t.Fatalf("the watch ended with %d acknowledged writes unseen; want a resumed stream or a 410 ERROR", missing)
			case ev.Type == "ERROR" && ev.Object.Code == http.StatusGone:
				t.Logf("the watch ended with 410 Expired: %s", ev.Object.Message)
				return
			case ev.Type != "ADDED":
				t.Fatalf("watch: got %s %+v; want ADDED only", ev.Type, ev.Object)
			}
			n, err := strconv.ParseUint(ev.Object.Metadata.ResourceVersion, 10, 64)
			if err != nil || n <= last {
				t.Fatalf("watch: got rv %q after %d; want strictly increasing", ev.Object.Metadata.ResourceVersion, last)
			}
			last = n
			name := ev.Object.Metadata.Name
			if seen[name]++; seen[name] > 1 {
				t.Errorf("watch: %s seen %d times; want once", name, seen[name])
			}
			if rv, ok := acked[name]; ok {
				missing--
				if rv != ev.Object.Metadata.ResourceVersion {
					t.Errorf("watch: %s at rv %s; want the acknowledged %s", name, ev.Object.Metadata.ResourceVersion, rv)
				}
			}
		case <-deadline:
			t.Fatalf("watch: acknowledged writes still unseen after 10s")
		}
	}
	t.Logf("the watch resumed across the outage: %d events", len(seen))
}
