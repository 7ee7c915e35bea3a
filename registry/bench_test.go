package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Each benchmark runs the same operation over HTTP (a loopback httptest
// server, JSON, the answer decoded into the Go type as a client would) and
// through the in-process Client with the same Go type, so the HTTP and
// codec overhead shows as the ratio of the two.

type benchEnv struct {
	reg    *registry.Registry
	url    string
	client *registry.Client[Widget]
	http   *http.Client
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	if err := reg.Register(widgets()); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	b.Cleanup(srv.Close)
	c, err := registry.NewClient[Widget](reg, "example.com/v1", "widgets")
	if err != nil {
		b.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 200}
	b.Cleanup(tr.CloseIdleConnections)
	return &benchEnv{reg: reg, url: srv.URL, client: c, http: &http.Client{Transport: tr}}
}

func benchWidget(name string) *Widget {
	var w Widget
	w.Metadata.Name = name
	w.Metadata.Labels = map[string]string{"app": "bench", "tier": "backend"}
	w.Spec.Color = "red"
	w.Spec.Replicas = 3
	return &w
}

var benchBody = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"%s","labels":{"app":"bench","tier":"backend"}},"spec":{"color":"red","replicas":3}}`

// request sends a request and, like a real client, decodes the answer
// into out (when not nil).
func (e *benchEnv) request(b *testing.B, method, path string, body []byte, want int, out any) {
	req, _ := http.NewRequest(method, e.url+path, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.http.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("%s %s: got %d; want %d", method, path, resp.StatusCode, want)
	}
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		b.Fatal(err)
	}
}

func (e *benchEnv) fill(b *testing.B, n int) {
	b.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		if _, err := e.client.Create(ctx, "default", benchWidget(fmt.Sprintf("w%06d", i))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreate(b *testing.B) {
	b.Run("http", func(b *testing.B) {
		e := newBenchEnv(b)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			e.request(b, "POST", widgetsPath, fmt.Appendf(nil, benchBody, fmt.Sprintf("w%d", i)), 201, new(Widget))
		}
	})
	b.Run("go", func(b *testing.B) {
		e := newBenchEnv(b)
		ctx := context.Background()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := e.client.Create(ctx, "default", benchWidget(fmt.Sprintf("w%d", i))); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGet(b *testing.B) {
	e := newBenchEnv(b)
	e.fill(b, 1000)
	b.Run("http", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			e.request(b, "GET", fmt.Sprintf("%s/w%06d", widgetsPath, i%1000), nil, 200, new(Widget))
		}
	})
	b.Run("http-bytes", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			e.request(b, "GET", fmt.Sprintf("%s/w%06d", widgetsPath, i%1000), nil, 200, nil)
		}
	})
	b.Run("go", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := e.client.Get(ctx, "default", fmt.Sprintf("w%06d", i%1000)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkList(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		e := newBenchEnv(b)
		e.fill(b, n)
		for _, limit := range []int{0, 500} {
			name := fmt.Sprintf("%dk/whole", n/1000)
			query := ""
			if limit > 0 {
				name = fmt.Sprintf("%dk/page500", n/1000)
				query = "?limit=500"
			}
			b.Run(name+"/http", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.request(b, "GET", widgetsPath+query, nil, 200, new(struct{ Items []Widget }))
				}
			})
			b.Run(name+"/http-bytes", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.request(b, "GET", widgetsPath+query, nil, 200, nil)
				}
			})
			b.Run(name+"/go", func(b *testing.B) {
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.client.List(ctx, "default", registry.ListOptions{Limit: int64(limit)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkWatch100 measures one write delivered to 100 watchers; ns/op is
// per write (all 100 deliveries), and ns/event per delivered event.
func BenchmarkWatch100(b *testing.B) {
	b.Run("http", func(b *testing.B) {
		benchWatchers(b, func(e *benchEnv, ctx context.Context, got chan<- struct{}) func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", e.url+widgetsPath+"?watch=true&resourceVersion=1", nil)
			resp, err := e.http.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			return func() {
				defer resp.Body.Close()
				d := json.NewDecoder(resp.Body)
				for {
					var ev struct {
						Type   string
						Object Widget
					}
					if d.Decode(&ev) != nil {
						return
					}
					if ev.Type == "ADDED" {
						got <- struct{}{}
					}
				}
			}
		})
	})
	b.Run("go", func(b *testing.B) {
		benchWatchers(b, func(e *benchEnv, ctx context.Context, got chan<- struct{}) func() {
			ch, err := e.client.Watch(ctx, "default", registry.ListOptions{ResourceVersion: "1"})
			if err != nil {
				b.Fatal(err)
			}
			return func() {
				for range ch {
					got <- struct{}{}
				}
			}
		})
	})
}

// benchWatchers starts 100 watchers with start (which returns the
// watcher's read loop), then times creates until every watcher saw each.
func benchWatchers(b *testing.B, start func(e *benchEnv, ctx context.Context, got chan<- struct{}) func()) {
	const watchers = 100
	e := newBenchEnv(b)
	var wg sync.WaitGroup
	got := make(chan struct{}, watchers*64)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); wg.Wait() }()
	for range watchers {
		read := start(e, ctx, got)
		wg.Add(1)
		go func() { defer wg.Done(); read() }()
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := e.client.Create(ctx, "default", benchWidget(fmt.Sprintf("w%d", i))); err != nil {
			b.Fatal(err)
		}
		i++
		for range watchers {
			<-got
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i*watchers), "ns/event")
}

// BenchmarkTransport serves a GET and a list of 10 widgets through
// reg.Transport() (in-process, no socket) and through a loopback TCP
// httptest.Server, both with net/http's client; bodies are read, not
// decoded, so the ratio is the transport's.
func BenchmarkTransport(b *testing.B) {
	e := newBenchEnv(b)
	e.fill(b, 10)
	clients := []struct {
		name string
		c    *http.Client
		base string
	}{
		{"tcp", e.http, e.url},
		{"inprocess", &http.Client{Transport: e.reg.Transport()}, "http://kapi"},
	}
	for _, op := range []struct{ name, path string }{
		{"get", widgetsPath + "/w000003"},
		{"list10", widgetsPath},
	} {
		for _, c := range clients {
			b.Run(op.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					resp, err := c.c.Get(c.base + op.path)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("GET %s: %d", op.path, resp.StatusCode)
					}
				}
			})
		}
	}
}
