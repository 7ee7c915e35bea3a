package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry/admission"
)

// BenchmarkCall is kapi's overhead per webhook call: a validating
// webhook called by the Dispatcher (matching, the review encoded, the
// answer decoded and checked) beside the same AdmissionReview POSTed to
// the same server by a bare HTTP/2 client with the same per-call
// deadline (timeoutSeconds), on loopback TLS. The server runs in the
// benchmark's process: B/op and allocs/op include its side.
//
//	go test -run '^$' -bench BenchmarkCall -benchmem ./registry/admission/webhook/
func BenchmarkCall(b *testing.B) {
	s := newServer(b, func(rv review) any { return allow(rv, "") })
	a := newAttrs(admission.Create, map[string]any{"app": "web"})
	b.Run("direct", func(b *testing.B) {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(s.ca)
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
		defer c.CloseIdleConnections()
		obj, _ := json.Marshal(a.Object)
		body, _, err := reviewFor(a, &invocation{"", "v1", "ConfigMap", "", "v1"}, obj, nil, "v1")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/hook?timeout=10s", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			cancel()
		}
	})
	b.Run("dispatcher", func(b *testing.B) {
		d := New(Options{})
		defer d.Close()
		_ = d.Set(ValidatingKind, configuration("c", hookOn(s, "v.example.com")))
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := d.Validate(ctx, a); err != nil {
				b.Fatal(err)
			}
		}
	})
}
