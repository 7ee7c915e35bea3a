package registry_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// spyStore hands the test each watch the registry opens on widgets (the
// garbage collector's own watch is not sent).
type spyStore struct {
	storage.Interface
	watches chan watch.Interface
}

func (s *spyStore) Watch(ctx context.Context, key string, opts storage.WatchOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err == nil && strings.Contains(key, "widgets") {
		s.watches <- w
	}
	return w, err
}

// countingWriter counts a handler's Writes and Flushes. Its first Flush
// (the watch's response header) returns only once gate is closed.
type countingWriter struct {
	http.ResponseWriter
	gate            chan struct{}
	writes, flushes atomic.Int32
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.writes.Add(1)
	return w.ResponseWriter.Write(b)
}

func (w *countingWriter) Flush() {
	w.ResponseWriter.(http.Flusher).Flush()
	if w.flushes.Add(1) == 1 {
		<-w.gate
	}
}

// TestWatchBatchesPendingEvents queues n events on a watch before its
// handler reads any: they reach the client, in order and once each, in
// one Write and one Flush, byte for byte as a watcher that got them one
// at a time.
func TestWatchBatchesPendingEvents(t *testing.T) {
	const n = 20 // under the watcher's channel buffer, so all can wait
	spy := &spyStore{Interface: memory.New(memory.Options{}), watches: make(chan watch.Interface, 2)}
	reg, err := registry.New(registry.Options{Storage: spy})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(widgets()); err != nil {
		t.Fatal(err)
	}
	cw := &countingWriter{gate: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("batched") != "" {
			cw.ResponseWriter = w
			w = cw
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	closeGate := sync.OnceFunc(func() { close(cw.gate) })
	defer closeGate() // before srv.Close, should the test fail early

	open := func(query string) (*bufio.Scanner, watch.Interface, func()) {
		resp, err := http.Get(srv.URL + widgetsPath + "?watch=true&timeoutSeconds=30" + query)
		if err != nil {
			t.Fatal(err)
		}
		return bufio.NewScanner(resp.Body), <-spy.watches, func() { resp.Body.Close() }
	}
	plain, _, closePlain := open("")
	defer closePlain()
	batched, wi, closeBatched := open("&batched=1")
	defer closeBatched()
	for i := range n {
		body := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w%02d"}}`, i)
		resp, err := http.Post(srv.URL+widgetsPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for deadline := time.Now().Add(5 * time.Second); len(wi.ResultChan()) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d events pending on the watch; want %d", len(wi.ResultChan()), n)
		}
	}
	closeGate()

	for i := range n {
		if !plain.Scan() || !batched.Scan() {
			t.Fatalf("event %d: stream ended", i)
		}
		got, want := batched.Text(), plain.Text()
		if got != want {
			t.Errorf("event %d: got %s; want %s", i, got, want)
		}
		if name := fmt.Sprintf(`"name":"w%02d"`, i); !strings.Contains(got, `{"type":"ADDED"`) || !strings.Contains(got, name) {
			t.Errorf("event %d: got %s; want ADDED with %s", i, got, name)
		}
	}
	wi.Stop() // the handler returns: the counts are final once the client sees the end
	if batched.Scan() {
		t.Errorf("got %s after the watch stopped; want the end", batched.Text())
	}
	if w, f := cw.writes.Load(), cw.flushes.Load(); w != 1 || f != 2 {
		t.Errorf("%d events: got %d writes, %d flushes; want 1 write, 2 flushes (header, batch)", n, w, f)
	}
}
