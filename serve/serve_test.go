package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry"
	kreq "github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/serve"
	"github.com/kapi-dev/kapi/storage/memory"
)

// newRegistry is a registry serving core v1 configmaps.
func newRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	if err := reg.Register(&registry.Resource{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// running is a started Server and a client that trusts it.
type running struct {
	s      *serve.Server
	url    string
	client *http.Client
	done   chan error
}

// start serves h on loopback; the server is shut down when the test ends.
func start(t *testing.T, h http.Handler, opts serve.Options) *running {
	t.Helper()
	s, err := serve.New(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &running{s: s, done: make(chan error, 1), url: "https://" + ln.Addr().String()}
	tr := &http.Transport{ForceAttemptHTTP2: true}
	if opts.TLS.Disabled {
		r.url = "http://" + ln.Addr().String()
	} else {
		pool := x509.NewCertPool()
		ca := s.CertificateAuthority()
		if ca == nil {
			ca, _ = os.ReadFile(opts.TLS.CertFile)
		}
		if !pool.AppendCertsFromPEM(ca) {
			t.Fatal("no CA to trust")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	r.client = &http.Client{Transport: tr}
	go func() { r.done <- s.Serve(ln) }()
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-r.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return r
}

func (r *running) do(t *testing.T, method, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, r.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestTLSAndHTTP2 serves a registry over TLS with a self-signed
// certificate (its CA trusted by the client), on HTTP/2, watch included.
func TestTLSAndHTTP2(t *testing.T) {
	r := start(t, newRegistry(t), serve.Options{})
	resp, body := r.do(t, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"}}`)
	if resp.StatusCode != 201 || resp.ProtoMajor != 2 {
		t.Fatalf("create: %s %d %s; want HTTP/2.0 201", resp.Proto, resp.StatusCode, body)
	}
	resp, err := r.client.Get(r.url + "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ev struct {
		Type   string
		Object struct{ Metadata struct{ Name string } }
	}
	if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 || ev.Type != "ADDED" || ev.Object.Metadata.Name != "a" {
		t.Errorf("watch: %s, first event %+v; want HTTP/2.0, ADDED a", resp.Proto, ev)
	}
}

// TestCertificateFiles serves the certificate of --tls-cert-file, and
// the new one once the files change; a file that does not load keeps the
// one served before.
func TestCertificateFiles(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	write := func(host string) *x509.Certificate {
		t.Helper()
		cert, _, err := serve.SelfSigned(host)
		if err != nil {
			t.Fatal(err)
		}
		key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
		if err != nil {
			t.Fatal(err)
		}
		var chain bytes.Buffer
		for _, der := range cert.Certificate {
			chain.Write(pemEncode("CERTIFICATE", der))
		}
		os.WriteFile(keyFile, pemEncode("PRIVATE KEY", key), 0o600)
		os.WriteFile(certFile, chain.Bytes(), 0o644)
		leaf, _ := x509.ParseCertificate(cert.Certificate[0])
		return leaf
	}
	first := write("first.example")
	r := start(t, http.NotFoundHandler(), serve.Options{TLS: serve.TLS{CertFile: certFile, KeyFile: keyFile, ReloadInterval: time.Nanosecond}})
	served := func() *x509.Certificate {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(r.url, "https://"), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	if got := served(); !got.Equal(first) {
		t.Fatalf("served %v; want the first certificate", got.DNSNames)
	}
	second := write("second.example")
	later := time.Now().Add(time.Minute) // a new modification time even on a coarse clock
	os.Chtimes(certFile, later, later)
	if got := served(); !got.Equal(second) {
		t.Errorf("after the files changed, served %v; want the second certificate", got.DNSNames)
	}
	os.WriteFile(certFile, []byte("not a certificate"), 0o644)
	if got := served(); !got.Equal(second) {
		t.Errorf("after a broken file, served %v; want the second certificate still", got.DNSNames)
	}
}

// TestCertDir keeps the self-signed certificate in --cert-dir and reuses
// it on the next start.
func TestCertDir(t *testing.T) {
	dir := t.TempDir()
	s1, err := serve.New(http.NotFoundHandler(), serve.Options{TLS: serve.TLS{CertDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"apiserver.crt", "apiserver.key", "ca.crt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	s2, err := serve.New(http.NotFoundHandler(), serve.Options{TLS: serve.TLS{CertDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s1.CertificateAuthority(), s2.CertificateAuthority()) || len(s1.CertificateAuthority()) == 0 {
		t.Errorf("the second start made a new CA; want the one in --cert-dir")
	}
}

// blocking is a handler whose requests wait until released (or their
// context ends), after telling entered.
type blocking struct {
	entered chan string
	release chan struct{}
	hold    chan struct{} // releases the requests with ?hold instead
}

func newBlocking() *blocking {
	return &blocking{entered: make(chan string, 16), release: make(chan struct{}), hold: make(chan struct{})}
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b.entered <- req.Method + " " + req.URL.RequestURI()
	w.Header().Set("X-Handler", "yes")
	release := b.release
	if req.URL.Query().Has("hold") {
		release = b.hold
	}
	select {
	case <-release:
		io.WriteString(w, "done")
	case <-req.Context().Done():
	}
}

// TestMaxInFlight: at a limit of 1 each, a second read-only request is
// refused with 429, Retry-After: 1 and a TooManyRequests Status, while a
// mutating request and a watch are served.
func TestMaxInFlight(t *testing.T) {
	b := newBlocking()
	r := start(t, b, serve.Options{TLS: serve.TLS{Disabled: true}, Limits: serve.Limits{MaxRequestsInFlight: 1, MaxMutatingRequestsInFlight: 1}})
	held := make(chan string)
	go func() {
		_, body := r.do(t, "GET", "/api/v1/namespaces/a/configmaps?hold", "")
		held <- body
	}()
	<-b.entered
	tests := []struct {
		method, path string
		wantCode     int
		wantBody     string
	}{
		{"GET", "/api/v1/namespaces/a/configmaps/x", 429, `"reason":"TooManyRequests"`},
		{"GET", "/version", 429, `"retryAfterSeconds":1`},
		{"POST", "/api/v1/namespaces/a/configmaps", 200, "done"},
		{"GET", "/api/v1/namespaces/a/configmaps?watch=true", 200, "done"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			got := make(chan *http.Response, 1)
			go func() {
				resp, body := r.do(t, tt.method, tt.path, "")
				resp.Header.Set("X-Body", body)
				got <- resp
			}()
			var resp *http.Response
			select {
			case resp = <-got: // refused without reaching the handler
			case <-b.entered:
				b.release <- struct{}{}
				resp = <-got
			}
			if resp.StatusCode != tt.wantCode || !strings.Contains(resp.Header.Get("X-Body"), tt.wantBody) {
				t.Errorf("got %d %s; want %d %s", resp.StatusCode, resp.Header.Get("X-Body"), tt.wantCode, tt.wantBody)
			}
			if tt.wantCode == 429 && resp.Header.Get("Retry-After") != "1" {
				t.Errorf("Retry-After %q; want 1", resp.Header.Get("Retry-After"))
			}
		})
	}
	b.hold <- struct{}{}
	if body := <-held; body != "done" {
		t.Errorf("the request holding the slot got %q; want done", body)
	}
	// The slot is free again.
	go func() { <-b.entered; b.release <- struct{}{} }()
	if resp, body := r.do(t, "GET", "/api/v1/namespaces/a/configmaps", ""); resp.StatusCode != 200 {
		t.Errorf("after the slot was freed: %d %s; want 200", resp.StatusCode, body)
	}
}

// TestTimeout: a request not answered by its deadline gets kube's 504
// Status; ?timeout= shortens the deadline and a malformed one is 400; a
// watch has none.
func TestTimeout(t *testing.T) {
	b := newBlocking()
	r := start(t, b, serve.Options{TLS: serve.TLS{Disabled: true}, Limits: serve.Limits{RequestTimeout: 200 * time.Millisecond}})
	tests := []struct {
		name, path string
		wantCode   int
		wantBody   string
	}{
		{"default deadline", "/api/v1/namespaces/a/configmaps", 504, `"message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout"`},
		{"shorter timeout", "/api/v1/namespaces/a/configmaps?timeout=10ms", 504, `"code":504`},
		{"bad timeout", "/api/v1/namespaces/a/configmaps?timeout=soon", 400, `invalid timeout specified in the request URL - time: invalid duration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// the handler never answers
			resp, body := r.do(t, "GET", tt.path, "")
			if resp.StatusCode != tt.wantCode || !strings.Contains(body, tt.wantBody) {
				t.Errorf("got %d %s; want %d %s", resp.StatusCode, body, tt.wantCode, tt.wantBody)
			}
			if resp.Header.Get("X-Handler") != "" {
				t.Errorf("the 504 carries the handler's headers: %v", resp.Header)
			}
		})
	}
	t.Run("watch", func(t *testing.T) {
		got := make(chan string, 1)
		go func() {
			_, body := r.do(t, "GET", "/api/v1/namespaces/a/configmaps?watch=1", "")
			got <- body
		}()
		for e := <-b.entered; !strings.Contains(e, "watch"); e = <-b.entered {
		}
		time.Sleep(400 * time.Millisecond) // past RequestTimeout: a watch is not timed out
		b.release <- struct{}{}
		if body := <-got; body != "done" {
			t.Errorf("the watch got %q; want the handler's done", body)
		}
	})
}

// TestHealth serves kube's health endpoints with named checks.
func TestHealth(t *testing.T) {
	var mu sync.Mutex
	var storageErr error
	storage := serve.Check{Name: "etcd", Check: func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		return storageErr
	}}
	synced := serve.Check{Name: "informer-sync", Check: func(context.Context) error { return nil }}
	r := start(t, newRegistry(t), serve.Options{TLS: serve.TLS{Disabled: true}, Checks: []serve.Check{storage}, ReadyChecks: []serve.Check{synced}})
	tests := []struct {
		name, path string
		broken     bool
		wantCode   int
		wantBody   string
	}{
		{"livez", "/livez", false, 200, "ok"},
		{"livez verbose", "/livez?verbose", false, 200, "[+]ping ok\n[+]etcd ok\nlivez check passed\n"},
		{"readyz verbose", "/readyz?verbose", false, 200, "[+]ping ok\n[+]etcd ok\n[+]informer-sync ok\n[+]shutdown ok\nreadyz check passed\n"},
		{"healthz", "/healthz?verbose=1", false, 200, "[+]ping ok\n[+]etcd ok\nhealthz check passed\n"},
		{"one check", "/livez/ping", false, 200, "ok"},
		{"unknown check", "/livez/nope", false, 404, "404 page not found\n"},
		{"exclude", "/readyz?verbose&exclude=etcd&exclude=nope", true, 200, "[+]ping ok\n[+]etcd excluded: ok\n[+]informer-sync ok\n[+]shutdown ok\nwarn: some health checks cannot be excluded: no matches for \"nope\"\nreadyz check passed\n"},
		{"failing", "/livez", true, 500, "[+]ping ok\n[-]etcd failed: reason withheld\nlivez check failed\n"},
		{"failing one", "/readyz/etcd", true, 500, "internal server error: etcd is down\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			storageErr = nil
			if tt.broken {
				storageErr = errString("etcd is down")
			}
			mu.Unlock()
			resp, body := r.do(t, "GET", tt.path, "")
			if resp.StatusCode != tt.wantCode || body != tt.wantBody {
				t.Errorf("got %d %q; want %d %q", resp.StatusCode, body, tt.wantCode, tt.wantBody)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestShutdown: /readyz fails during the shutdown delay while requests
// are still served; then a watch ends cleanly (the stream is complete, no
// error), Serve returns nil, and new connections are refused.
func TestShutdown(t *testing.T) {
	reg := newRegistry(t)
	s, err := serve.New(reg, serve.Options{ShutdownDelay: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CertificateAuthority())
	client := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := "https://" + ln.Addr().String()
	resp, err := client.Get(url + "/api/v1/namespaces/default/configmaps?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	for {
		r, err := client.Get(url + "/readyz?verbose")
		if err != nil {
			t.Fatalf("during the delay: %v; want served", err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode == 500 {
			if !strings.Contains(string(b), "[-]shutdown failed: reason withheld\n") {
				t.Errorf("readyz: %s; want shutdown failed", b)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Errorf("the watch ended with %v; want a clean end", err)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("watch over %s; want HTTP/2", resp.Proto)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Errorf("a connection was accepted after Shutdown")
	}
}

// TestLog writes a line per request with its verb, resource, user, code
// and latency, and the error with its cause; without a logger nothing.
func TestLog(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
	r := start(t, newRegistry(t), serve.Options{TLS: serve.TLS{Disabled: true}, Logger: log})
	r.do(t, "GET", "/api/v1/namespaces/default/configmaps/missing", "")
	r.do(t, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"}}`)
	mu.Lock()
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	mu.Unlock()
	want := []map[string]any{
		{"msg": "request", "verb": "get", "resource": "configmaps", "namespace": "default", "name": "missing", "user": "system:anonymous", "code": 404.0, "err": `configmaps "missing" not found`},
		{"msg": "request", "verb": "create", "resource": "configmaps", "namespace": "default", "user": "system:anonymous", "code": 201.0},
	}
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines; want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		var got map[string]any
		if err := json.Unmarshal(lines[i], &got); err != nil {
			t.Fatal(err)
		}
		for k, v := range w {
			if got[k] != v {
				t.Errorf("line %d: %s = %v; want %v (%s)", i, k, got[k], v, lines[i])
			}
		}
		if _, ok := got["latency"]; !ok {
			t.Errorf("line %d has no latency: %s", i, lines[i])
		}
		if _, ok := got["err"]; !ok && w["err"] == nil {
			continue
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// TestStalledClients: a client that stalls in its headers, or in its
// body, is cut off by the server, while another is served meanwhile.
func TestStalledClients(t *testing.T) {
	r := start(t, newRegistry(t), serve.Options{TLS: serve.TLS{Disabled: true}, Limits: serve.Limits{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond}})
	addr := strings.TrimPrefix(r.url, "http://")
	tests := []struct {
		name, sent string
	}{
		{"slow header", "GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nX-Slow: "},
		{"stalled body", "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"metadata\":"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			io.WriteString(conn, tt.sent)
			if resp, _ := r.do(t, "GET", "/livez", ""); resp.StatusCode != 200 {
				t.Errorf("another client: %d; want served", resp.StatusCode)
			}
			conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound for the test, far beyond the server's
			rd := bufio.NewReader(conn)
			var got []byte
			for {
				line, err := rd.ReadBytes('\n')
				got = append(got, line...)
				if err != nil {
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						t.Fatalf("the server kept the connection open; read %q", got)
					}
					break // closed by the server
				}
			}
			if bytes.Contains(got, []byte(" 201 ")) || bytes.Contains(got, []byte(" 500 ")) {
				t.Errorf("the stalled request got %q; want it cut off", got)
			}
		})
	}
}

func pemEncode(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// TestTimeoutLogs: a registry request past its deadline answers 504 and
// is logged while its handler, still running, records its user and
// error (the race detector watches the two).
func TestTimeoutLogs(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	r := start(t, newRegistry(t), serve.Options{TLS: serve.TLS{Disabled: true}, Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))})
	timedOut := 0
	for range 20 {
		resp, body := r.do(t, "GET", "/api/v1/namespaces/default/configmaps?timeout=1ns", "")
		switch resp.StatusCode {
		case 504:
			timedOut++
		case 200: // the handler won the race with the deadline
		default:
			t.Fatalf("got %d %s; want 504", resp.StatusCode, body)
		}
	}
	if timedOut == 0 {
		t.Errorf("no request timed out")
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(buf.String(), "code=504") {
		t.Errorf("no 504 logged:\n%s", buf.String())
	}
}

// TestIdleWatch: a watch that sends nothing for longer than WriteTimeout
// is not cut off (the deadline bounds writes, not silence), over HTTP/2
// and HTTP/1.1.
func TestIdleWatch(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		r := start(t, newRegistry(t), serve.Options{TLS: serve.TLS{Disabled: disabled}, Limits: serve.Limits{WriteTimeout: 100 * time.Millisecond}})
		resp, err := r.client.Get(r.url + "/api/v1/namespaces/default/configmaps?watch=true")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // idle, five times WriteTimeout
		r.do(t, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"late"}}`)
		var ev struct {
			Type   string
			Object struct{ Metadata struct{ Name string } }
		}
		if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Name != "late" {
			t.Errorf("%s: after an idle while the watch got %+v, %v; want ADDED late", resp.Proto, ev, err)
		}
		resp.Body.Close()
	}
}

// authBlocking is blocking with an authenticator: "Bearer admin" is in
// system:masters.
type authBlocking struct{ *blocking }

func (authBlocking) Authenticate(req *http.Request) (*kreq.User, error) {
	if req.Header.Get("Authorization") == "Bearer admin" {
		return &kreq.User{Name: "admin", Groups: []string{kreq.SystemPrivileged}}, nil
	}
	return &kreq.User{Name: "alice"}, nil
}

// TestMaxInFlightSparesMasters: over the limit, a member of
// system:masters is served, as in kube; anyone else gets 429.
func TestMaxInFlightSparesMasters(t *testing.T) {
	b := newBlocking()
	r := start(t, authBlocking{b}, serve.Options{TLS: serve.TLS{Disabled: true}, Limits: serve.Limits{MaxRequestsInFlight: 1}})
	held := make(chan struct{})
	go func() {
		r.do(t, "GET", "/api/v1/namespaces?hold", "")
		close(held)
	}()
	<-b.entered
	for _, tt := range []struct {
		token    string
		wantCode int
	}{{"admin", 200}, {"alice", 429}} {
		got := make(chan int, 1)
		go func() {
			req, _ := http.NewRequest("GET", r.url+"/api/v1/namespaces/default", nil)
			req.Header.Set("Authorization", "Bearer "+tt.token)
			resp, err := r.client.Do(req)
			if err != nil {
				got <- 0
				return
			}
			resp.Body.Close()
			got <- resp.StatusCode
		}()
		var code int
		select {
		case code = <-got:
		case <-b.entered:
			b.release <- struct{}{}
			code = <-got
		}
		if code != tt.wantCode {
			t.Errorf("%s over the limit: %d; want %d", tt.token, code, tt.wantCode)
		}
	}
	b.hold <- struct{}{}
	<-held
}
