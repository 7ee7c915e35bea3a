package inproc

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		w.Header().Set("X-Remote", req.RemoteAddr)
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, req.Method+" "+req.URL.Path+" "+string(b))
	})
	c := &http.Client{Transport: New(h, slog.New(slog.DiscardHandler))}
	resp, err := c.Post("http://kapi/a/b", "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := resp.StatusCode, http.StatusCreated; got != want {
		t.Errorf("status: got %d; want %d", got, want)
	}
	if got, want := string(b), "POST /a/b body"; got != want {
		t.Errorf("body: got %q; want %q", got, want)
	}
	if got, want := resp.Header.Get("X-Remote"), "127.0.0.1:0"; got != want {
		t.Errorf("RemoteAddr: got %q; want %q", got, want)
	}
}

// TestStreaming: RoundTrip returns at the first flush, before the handler
// is done, and closing the body makes the handler's writes fail.
func TestStreaming(t *testing.T) {
	writeErr := make(chan error, 1)
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-release
		var err error
		for err == nil {
			_, err = io.WriteString(w, "more\n")
		}
		writeErr <- err
	})
	resp, err := New(h, slog.New(slog.DiscardHandler)).RoundTrip(mustRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first\n" {
		t.Fatalf("first read: got %q, %v; want %q", buf, err, "first\n")
	}
	resp.Body.Close()
	close(release)
	select {
	case err := <-writeErr:
		if err == nil {
			t.Error("write after Close: got no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's writes block after the body was closed")
	}
}

func TestPanicBeforeHeader(t *testing.T) {
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	_, err := New(h, slog.New(slog.DiscardHandler)).RoundTrip(mustRequest(t))
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("got %v; want an error naming the panic", err)
	}
}

func mustRequest(t *testing.T) *http.Request {
	t.Helper()
	req, err := http.NewRequest("GET", "http://kapi/watch", nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
