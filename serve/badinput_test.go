package serve_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/serve"
	"github.com/kapi-dev/kapi/storage/memory"
)

// TestBadConnections: what is not a TLS client, a TLS client the server
// cannot agree with, and headers past the limit are refused without
// harm; the server serves the next client.
func TestBadConnections(t *testing.T) {
	r := start(t, newRegistry(t), serve.Options{Limits: serve.Limits{MaxHeaderBytes: 64 << 10}})
	addr := strings.TrimPrefix(r.url, "https://")
	tests := []struct {
		name string
		send func(t *testing.T) string // what the client got
		want string
	}{
		{"plain http to the https port", func(t *testing.T) string {
			return rawExchange(t, addr, "GET /api HTTP/1.1\r\nHost: x\r\n\r\n")
		}, "HTTP/1.0 400 Bad Request"},
		{"garbage", func(t *testing.T) string {
			got := rawExchange(t, addr, "\x16\x03\x01\x00\x05hello, not a handshake\r\n\r\n")
			if strings.HasPrefix(got, "\x15") { // a TLS alert, then the connection closed
				return ""
			}
			return got
		}, ""},
		{"TLS 1.0 only", func(t *testing.T) string {
			conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS10})
			if err == nil {
				conn.Close()
				return "handshake succeeded"
			}
			return ""
		}, ""},
		{"oversized headers", func(t *testing.T) string {
			req, _ := http.NewRequest("GET", r.url+"/api/v1/namespaces", nil)
			req.Header.Set("X-Big", strings.Repeat("a", 256<<10))
			resp, err := r.client.Do(req)
			if err != nil {
				return "" // HTTP/2: the stream or connection is refused
			}
			resp.Body.Close()
			return resp.Status
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.send(t)
			if !strings.HasPrefix(got, tt.want) || (tt.want == "" && got != "" && !strings.HasPrefix(got, "431")) {
				t.Errorf("got %q; want %q", got, tt.want)
			}
			if resp, body := r.do(t, "GET", "/api/v1/namespaces/default", ""); resp.StatusCode != 200 {
				t.Errorf("the next client: %d %s; want served", resp.StatusCode, body)
			}
		})
	}
}

// TestOversizedHeadersHTTP1 is kube's 431 over HTTP/1.1.
func TestOversizedHeadersHTTP1(t *testing.T) {
	r := start(t, newRegistry(t), serve.Options{TLS: serve.TLS{Disabled: true}, Limits: serve.Limits{MaxHeaderBytes: 64 << 10}})
	got := rawExchange(t, strings.TrimPrefix(r.url, "http://"), "GET /api HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 256<<10)+"\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 431") {
		t.Errorf("got %q; want 431", got)
	}
}

// rawExchange sends b on a new connection to addr and returns the first
// line the server answered ("" when it closed without one).
func rawExchange(t *testing.T, addr, b string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(conn, b)
	line, _ := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSpace(line)
}

// TestUntrustedFrontProxy: front-proxy headers count only from a client
// certificate the request-header CA signs: from another CA's the request
// is refused with kube's 401 Status; without a certificate the headers
// are ignored (anonymous).
func TestUntrustedFrontProxy(t *testing.T) {
	_, proxyCA, err := serve.SelfSigned("front-proxy-ca")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(proxyCA)
	au, err := authn.New(authn.Options{RequestHeader: &authn.RequestHeaderOptions{ClientCA: pool}, Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}), Authenticator: au})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	r := start(t, reg, serve.Options{})
	other, _, err := serve.SelfSigned("front-proxy-client") // another CA's certificate
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		certs    []tls.Certificate
		wantCode int
		wantBody string
	}{
		{"another CA's certificate", []tls.Certificate{other}, 401, `"reason":"Unauthorized"`},
		{"no certificate", nil, 201, `"username":"system:anonymous"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := r.client.Transport.(*http.Transport).Clone()
			tr.TLSClientConfig.Certificates = tt.certs
			c := &http.Client{Transport: tr}
			req, _ := http.NewRequest("POST", r.url+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
				strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Remote-User", "admin")
			req.Header.Set("X-Remote-Group", "system:masters")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode || !strings.Contains(string(b), tt.wantBody) {
				t.Errorf("got %d %s; want %d %s", resp.StatusCode, b, tt.wantCode, tt.wantBody)
			}
		})
	}
}

// FuzzFilters sends any path and query through the server's filters: the
// answer is never a 500 and nothing panics.
func FuzzFilters(f *testing.F) {
	for _, s := range []string{"/livez?verbose&exclude=ping", "/api/v1/namespaces?timeout=1s", "/api/v1/namespaces?timeout=-5m",
		"/readyz/shutdown", "/apis/g/v/watch/x?watch=1", "/api/v1/namespaces/a/configmaps?timeout=%zz", "/healthz?exclude=,,"} {
		f.Add(s)
	}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		f.Fatal(err)
	}
	defer reg.Close()
	s, err := serve.New(reg, serve.Options{TLS: serve.TLS{Disabled: true}, Limits: serve.Limits{RequestTimeout: time.Second}})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.Parse(target)
		if err != nil || !strings.HasPrefix(u.Path, "/") || strings.Contains(target, "watch") {
			return // not a request target; watches would wait for events
		}
		req, err := http.NewRequest("GET", "http://kapi"+u.RequestURI(), nil)
		if err != nil {
			return
		}
		w := &nullWriter{header: http.Header{}}
		h.ServeHTTP(w, req)
		if w.code >= 500 && !strings.HasPrefix(u.Path, "/livez") && !strings.HasPrefix(u.Path, "/readyz") && !strings.HasPrefix(u.Path, "/healthz") {
			t.Errorf("GET %s: %d", target, w.code)
		}
	})
}

type nullWriter struct {
	header http.Header
	code   int
}

func (n *nullWriter) Header() http.Header { return n.header }
func (n *nullWriter) WriteHeader(c int) {
	if n.code == 0 {
		n.code = c
	}
}
func (n *nullWriter) Write(b []byte) (int, error) {
	if n.code == 0 {
		n.code = 200
	}
	return len(b), nil
}
