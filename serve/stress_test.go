package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/serve"
)

// stressOps is how many creates each client makes: a few by default,
// many under `make stress` (KAPI_SERVE_STRESS_OPS).
func stressOps(t *testing.T) int {
	if v := os.Getenv("KAPI_SERVE_STRESS_OPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("KAPI_SERVE_STRESS_OPS=%s: %v", v, err)
		}
		return n
	}
	return 20
}

// concurrency measures how many requests its handler serves at once.
type concurrency struct {
	h        http.Handler
	now, max atomic.Int64
}

func (c *concurrency) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	n := c.now.Add(1)
	defer c.now.Add(-1)
	for m := c.max.Load(); n > m && !c.max.CompareAndSwap(m, n); m = c.max.Load() {
	}
	time.Sleep(time.Millisecond) // every request holds its slot a while
	c.h.ServeHTTP(w, req)
}

// TestStressMaxInFlight: 32 clients create configmaps against a mutating
// limit of 4, retrying each 429: the handler never serves more than 4 at
// once, some requests were refused, and every configmap is stored once,
// none lost or duplicated.
func TestStressMaxInFlight(t *testing.T) {
	const clients, limit = 32, 4
	ops := stressOps(t)
	c := &concurrency{h: newRegistry(t)}
	r := start(t, c, serve.Options{TLS: serve.TLS{Disabled: true}, Limits: serve.Limits{MaxRequestsInFlight: limit, MaxMutatingRequestsInFlight: limit}})
	var refused atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < ops; {
				body := fmt.Sprintf(`{"metadata":{"name":"c-%d-%d"}}`, i, j)
				resp, err := r.client.Post(r.url+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case 201:
					j++
				case 429:
					refused.Add(1)
					if resp.Header.Get("Retry-After") != "1" {
						errs <- fmt.Errorf("429 without Retry-After: 1: %v", resp.Header)
						return
					}
					time.Sleep(time.Millisecond) // not the second Retry-After asks: the test would take minutes
				default:
					errs <- fmt.Errorf("create %s: %d %s", body, resp.StatusCode, b)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if m := c.max.Load(); m > limit {
		t.Errorf("the handler served %d requests at once; want at most %d", m, limit)
	}
	if refused.Load() == 0 {
		t.Errorf("no request was refused: the limit was never reached")
	}
	resp, body := r.do(t, "GET", "/api/v1/namespaces/default/configmaps", "")
	if resp.StatusCode != 200 {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	var list struct {
		Items []struct{ Metadata struct{ Name string } }
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, it := range list.Items {
		seen[it.Metadata.Name]++
	}
	for i := range clients {
		for j := range ops {
			if n := seen[fmt.Sprintf("c-%d-%d", i, j)]; n != 1 {
				t.Errorf("c-%d-%d stored %d times; want once", i, j, n)
			}
		}
	}
	if len(list.Items) != clients*ops {
		t.Errorf("%d configmaps stored; want %d", len(list.Items), clients*ops)
	}
	t.Logf("%d creates, %d refusals with 429, at most %d at once", clients*ops, refused.Load(), c.max.Load())
}

// watches counts the long-running requests being served (an Observer).
type watches struct{ n atomic.Int64 }

func (w *watches) Request(serve.RequestMetric)              {}
func (w *watches) LongRunning(_ serve.RequestMetric, d int) { w.n.Add(int64(d)) }
func (w *watches) InFlight(string, int)                     {}

// TestSlowReaderCutOff: a watcher that stops reading while megabytes of
// events are written to it is cut off by the write timeout (its watch
// ends), while other clients are served meanwhile.
func TestSlowReaderCutOff(t *testing.T) {
	obs := &watches{}
	r := start(t, newRegistry(t), serve.Options{TLS: serve.TLS{Disabled: true}, Observer: obs, Limits: serve.Limits{WriteTimeout: 300 * time.Millisecond}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for obs.n.Load() == 0 {
		if ctx.Err() != nil {
			t.Fatal("the watch never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	data := strings.Repeat("x", 64<<10)
	for i := 0; obs.n.Load() > 0; i++ {
		if ctx.Err() != nil {
			t.Fatalf("the watch that does not read is still served after %d events of 64 KiB", i)
		}
		resp, body := r.do(t, "POST", "/api/v1/namespaces/default/configmaps", fmt.Sprintf(`{"metadata":{"name":"big-%d"},"data":{"d":%q}}`, i, data))
		if resp.StatusCode != 201 {
			t.Fatalf("another client's create: %d %s; want served", resp.StatusCode, body)
		}
	}
}
