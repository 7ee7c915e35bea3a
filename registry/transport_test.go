package registry_test

import (
	"bufio"
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage/memory"
)

func TestTransport(t *testing.T) {
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(widgets()); err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: reg.Transport()}
	base := runtime.NumGoroutine()
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://kapi"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			b.WriteString(sc.Text())
		}
		return resp.StatusCode, b.String()
	}
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", widgetsPath, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"}}`, 201, `"name":"a"`},
		{"GET", widgetsPath + "/a", "", 200, `"kind":"Widget"`},
		{"GET", widgetsPath, "", 200, `"kind":"WidgetList"`},
		{"GET", widgetsPath + "/missing", "", 404, `"reason":"NotFound"`},
	} {
		if code, body := do(tc.method, tc.path, tc.body); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: %d %s; want %d with %s", tc.method, tc.path, code, body, tc.code, tc.want)
		}
	}

	// A watch streams events as the handler flushes them, and ends when
	// the caller cancels.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://kapi"+widgetsPath+"?watch=true&resourceVersion=0", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if l := <-lines; !strings.Contains(l, `"type":"ADDED"`) || !strings.Contains(l, `"name":"a"`) {
		t.Errorf("first watch event: %s", l)
	}
	do("POST", widgetsPath, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"b"}}`)
	if l := <-lines; !strings.Contains(l, `"name":"b"`) {
		t.Errorf("second watch event: %s", l)
	}
	cancel()
	for range lines {
	}
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base+2 {
		t.Errorf("%d goroutines after the watch ended; %d before", n, base)
	}
}
