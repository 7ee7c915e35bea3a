package registry_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage/memory"
)

// BenchmarkFetchDocuments is a warm fetch of each table document with
// 1,000 group versions over a socket (httptest, Go's client and
// transport, as bench/compare fetches them), beside the floor: a static
// server sending the same bytes kapi sent in one Write with their
// Content-Length (and Content-Encoding), to the same client; and, for a
// document kapi compresses (/apis), a static server sending it
// uncompressed: what the client's fetch costs without its gunzip, the
// floor of any representation of the document.
//
//	go test -run XXX -bench FetchDocuments ./registry/
func BenchmarkFetchDocuments(b *testing.B) {
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Close()
	for i := range 1000 {
		if err := reg.Register(thingsIn(fmt.Sprintf("g%04d.many.example.org", i), "v1", "things")); err != nil {
			b.Fatal(err)
		}
	}
	kapi := httptest.NewServer(reg)
	defer kapi.Close()
	tests := []struct{ name, path, accept string }{
		{"apis-aggregated", "/apis", aggregatedAccept},
		{"openapi-v3-index", "/openapi/v3", ""},
		{"openapi-v3-gv", "/openapi/v3/apis/g0000.many.example.org/v1", ""},
	}
	for _, tt := range tests {
		get := func(b *testing.B, c *http.Client, url string) []byte {
			req, _ := http.NewRequest("GET", url+tt.path, nil)
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("GET %s: %v %d", tt.path, err, resp.StatusCode)
			}
			return body
		}
		// The bytes kapi sends, as they are on the wire.
		raw := &http.Client{Transport: &http.Transport{DisableCompression: true}}
		req, _ := http.NewRequest("GET", kapi.URL+tt.path, nil)
		if tt.accept != "" {
			req.Header.Set("Accept", tt.accept)
		}
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := raw.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		wire, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ct, ce := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding")
		serveStatic := func(body []byte, ce string) *httptest.Server {
			return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h := w.Header()
				h.Set("Content-Type", ct)
				if ce != "" {
					h.Set("Content-Encoding", ce)
				}
				h.Set("Content-Length", strconv.Itoa(len(body)))
				w.Write(body)
			}))
		}
		static := serveStatic(wire, ce)
		b.Run(tt.name, func(b *testing.B) {
			// The peers take turns, so that a busy machine slows both alike.
			peers := []struct {
				name, url string
				c         *http.Client
				took      time.Duration
			}{{"kapi", kapi.URL, &http.Client{Transport: &http.Transport{}}, 0}, {"static", static.URL, &http.Client{Transport: &http.Transport{}}, 0}}
			if ce == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(wire))
				if err != nil {
					b.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil {
					b.Fatal(err)
				}
				identity := serveStatic(plain, "")
				defer identity.Close()
				peers = append(peers, struct {
					name, url string
					c         *http.Client
					took      time.Duration
				}{"identity", identity.URL, &http.Client{Transport: &http.Transport{}}, 0})
			}
			var n int
			for b.Loop() {
				for i := range peers {
					p := &peers[i]
					t0 := time.Now()
					body := get(b, p.c, p.url)
					p.took += time.Since(t0)
					n = len(body)
				}
			}
			for _, p := range peers {
				p.c.CloseIdleConnections()
				b.ReportMetric(float64(p.took.Microseconds())/1000/float64(b.N), "ms/"+p.name)
			}
			b.ReportMetric(float64(n)/1024, "KiB")
		})
		static.Close()
	}
}
