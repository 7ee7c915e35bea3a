package etcd3_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	apiserver "github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/storage/etcd3"
)

// faultClient is an etcd client of addr that reconnects
// quickly once etcd is back (gRPC's default backoff grows to two
// minutes).
func faultClient(t *testing.T, addr string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{addr},
		DialTimeout: 2 * time.Second,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 500 * time.Millisecond},
			MinConnectTimeout: time.Second,
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// proxy forwards TCP connections from 127.0.0.1:port to target, and can
// cut them all (down) and accept again on the same port (up): an outage
// as the proxy's clients see it, whatever target does meanwhile.
type proxy struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, addr: "127.0.0.1:" + freePort(t), target: target, conns: map[net.Conn]bool{}}
	p.up()
	t.Cleanup(p.down)
	return p
}

func (p *proxy) up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns[in], p.conns[out] = true, true
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close(); in.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close(); out.Close() }()
		}
	}()
}

// down closes the listener and every connection.
func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// faultServer is the example server on a Store of c under prefix.
type faultServer struct {
	st *etcd3.Store
	hs *httptest.Server
}

func newFaultServer(t *testing.T, c *clientv3.Client, prefix string) *faultServer {
	t.Helper()
	st, err := etcd3.New(t.Context(), etcd3.Options{Client: c, Prefix: prefix, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := apiserver.New(apiserver.Options{Storage: st})
	if err != nil {
		t.Fatal(err)
	}
	return &faultServer{st: st, hs: httptest.NewServer(reg)}
}

// Close ends the watches, then the server.
func (s *faultServer) Close() {
	s.st.Close()
	s.hs.Close()
}

// nextEvent is the next event of ws, or fails the test after d.
func nextEvent(t *testing.T, ws *watchStream, d time.Duration) (event, bool) {
	t.Helper()
	select {
	case ev, ok := <-ws.C:
		return ev, ok
	case <-time.After(d):
		t.Fatalf("watch: no event within %v", d)
		return event{}, false
	}
}

// isExpired tells whether ev is the ERROR event kube-apiserver ends a
// watch with when etcd compacted its next revision: a Status of code 410
// and reason Expired.
func isExpired(ev event) bool {
	return ev.Type == "ERROR" && ev.Object.Kind == "Status" && ev.Object.Code == http.StatusGone && ev.Object.Reason == "Expired"
}

// TestFaultExpiredAcrossOutage: a watch is open over HTTP when etcd
// stops. This server reaches etcd through a proxy, which is down first:
// while its client cannot reach etcd, etcd stops, starts again on the
// same data, and another replica writes and compacts it past the watch's
// last resourceVersion; then the proxy is up again. The watch must end
// with an ERROR event carrying a 410 Expired Status (as kube-apiserver's
// etcd3 watcher sends for ErrCompacted), a watch from the old
// resourceVersion must get the same, and a fresh list and watch must see
// every acknowledged write.
func TestFaultExpiredAcrossOutage(t *testing.T) {
	dir := t.TempDir()
	port, peerPort := freePort(t), freePort(t)
	e := etcdAt(t, dir, port, peerPort)
	defer func() { e.Close() }()
	px := newProxy(t, "127.0.0.1:"+port)
	c := faultClient(t, px.addr)
	defer c.Close()
	srv := newFaultServer(t, c, "/expired")
	defer srv.Close()
	base := srv.hs.URL + cmPath

	acked := map[string]string{} // name → resourceVersion
	create := func(base, name string) {
		t.Helper()
		acked[name] = mustDo(t, http.MethodPost, base, configMap(name, "x"), http.StatusCreated).Metadata.ResourceVersion
	}
	create(base, "before-0")
	start := mustDo(t, http.MethodGet, base, nil, http.StatusOK).Metadata.ResourceVersion
	ws := startWatch(t, base, start)
	create(base, "before-1")
	create(base, "before-2")
	var last string
	for last != acked["before-2"] {
		ev, ok := nextEvent(t, ws, 5*time.Second)
		if !ok || ev.Type != "ADDED" {
			t.Fatalf("watch before the outage: got %s %+v (open: %v); want ADDED", ev.Type, ev.Object, ok)
		}
		last = ev.Object.Metadata.ResourceVersion
	}

	// The outage: this server is cut off, etcd stops and starts again,
	// another replica writes and compacts.
	px.down()
	e.Close()
	e = etcdAt(t, dir, port, peerPort)
	c2 := faultClient(t, "127.0.0.1:"+port)
	other := newFaultServer(t, c2, "/expired")
	for i := range 3 {
		create(other.hs.URL+cmPath, fmt.Sprintf("during-%d", i))
	}
	rev, err := other.st.Revision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := other.st.Compact(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	other.Close()
	c2.Close()
	t.Logf("compacted at %d, past the watch's last resourceVersion %s", rev, last)

	t0 := time.Now()
	px.up()

	// The open watch ends with 410 Expired, and sees nothing else first:
	// the writes it missed are gone from etcd's history.
	ev, ok := nextEvent(t, ws, 10*time.Second)
	if !ok || !isExpired(ev) {
		t.Fatalf("open watch after the outage: got %s %+v (open: %v); want ERROR with a 410 Expired Status", ev.Type, ev.Object, ok)
	}
	t.Logf("the watch ended %v after the proxy came back: %s", time.Since(t0).Round(time.Millisecond), ev.Object.Message)
	if ev, ok := nextEvent(t, ws, 5*time.Second); ok {
		t.Errorf("open watch after its ERROR: got %s %+v; want the stream closed", ev.Type, ev.Object)
	}

	// A watch from the old resourceVersion: 200, then the same ERROR.
	ws2 := startWatch(t, base, last)
	ev, ok = nextEvent(t, ws2, 5*time.Second)
	if !ok || !isExpired(ev) {
		t.Fatalf("watch from %s: got %s %+v (open: %v); want ERROR with a 410 Expired Status", last, ev.Type, ev.Object, ok)
	}

	// A fresh list sees every acknowledged write, a watch from its
	// resourceVersion the next one.
	l := mustDo(t, http.MethodGet, base, nil, http.StatusOK)
	got := map[string]string{}
	for _, it := range l.Items {
		got[it.Metadata.Name] = it.Metadata.ResourceVersion
	}
	for name, rv := range acked {
		if got[name] != rv {
			t.Errorf("list after the outage: %s at %q; want the acknowledged %s", name, got[name], rv)
		}
	}
	if len(got) != len(acked) {
		t.Errorf("list after the outage: got %d items; want %d", len(got), len(acked))
	}
	ws3 := startWatch(t, base, l.Metadata.ResourceVersion)
	create(base, "after")
	ev, ok = nextEvent(t, ws3, 5*time.Second)
	if !ok || ev.Type != "ADDED" || ev.Object.Metadata.Name != "after" || ev.Object.Metadata.ResourceVersion != acked["after"] {
		t.Fatalf("watch from the fresh list: got %s %+v (open: %v); want ADDED after at %s", ev.Type, ev.Object, ok, acked["after"])
	}
	if n, _ := strconv.ParseUint(acked["after"], 10, 64); n <= rev {
		t.Errorf("write after the outage at %d; want past the compaction at %d", n, rev)
	}
}
