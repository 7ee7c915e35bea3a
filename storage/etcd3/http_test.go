package etcd3_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Plain HTTP helpers for the tests that drive the example server over
// the wire (this module does not depend on client-go).

const cmPath = "/api/v1/namespaces/default/configmaps"

// object is the little of a Kubernetes object (or Status) the tests read.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Data    map[string]string `json:"data"`
	Items   []object          `json:"items"`
	Code    int               `json:"code"`
	Reason  string            `json:"reason"`
	Message string            `json:"message"`
}

// event is one watch event.
type event struct {
	Type   string `json:"type"`
	Object object `json:"object"`
}

// response is an answer: its code, Retry-After and decoded body.
type response struct {
	code       int
	retryAfter string
	body       object
}

// do sends one request with body (nil: none) encoded as JSON, bounded by
// timeout, and decodes the answer.
func do(ctx context.Context, c *http.Client, method, url string, body any, timeout time.Duration) (response, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return response{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	r := response{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r.body); err != nil {
		return r, fmt.Errorf("%s %s: %d %q: %w", method, url, resp.StatusCode, b, err)
	}
	return r, nil
}

// tryDo is do that also fails on an unexpected code, for goroutines
// (which must not call t.Fatal).
func tryDo(t *testing.T, method, url string, body any, want int) (object, error) {
	r, err := do(t.Context(), http.DefaultClient, method, url, body, 10*time.Second)
	if err != nil {
		return object{}, fmt.Errorf("%s %s: %w", method, url, err)
	}
	if r.code != want {
		return r.body, fmt.Errorf("%s %s: got %d %+v; want %d", method, url, r.code, r.body, want)
	}
	return r.body, nil
}

// mustDo is do that fails the test on a transport error or an
// unexpected code.
func mustDo(t *testing.T, method, url string, body any, want int) object {
	t.Helper()
	o, err := tryDo(t, method, url, body, want)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func configMap(name, value string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name},
		"data":     map[string]any{"v": value},
	}
}

// watchStream is an open watch over HTTP; its events arrive on C, which
// is closed when the stream ends.
type watchStream struct {
	C    <-chan event
	stop context.CancelFunc
}

// startWatch opens a JSON watch of base+path from rv and fails the test
// unless the server answers 200.
func startWatch(t *testing.T, url, rv string) *watchStream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"?watch=true&resourceVersion="+rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("watch %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("watch %s: got %d %s; want 200", url, resp.StatusCode, b)
	}
	ch := make(chan event, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			var ev event
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				ev = event{Type: "DECODE", Object: object{Message: err.Error() + ": " + line}}
			}
			select {
			case ch <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	w := &watchStream{C: ch, stop: cancel}
	t.Cleanup(cancel)
	return w
}
