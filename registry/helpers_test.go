package registry_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage/memory"
)

func widgets() *registry.Resource {
	return &registry.Resource{
		Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets",
		ShortNames: []string{"wd"}, Namespaced: true, Status: true, Generation: true,
		Scale:            &registry.Scale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.readyReplicas"},
		SelectableFields: []string{"spec.color"},
	}
}

func configMaps() *registry.Resource {
	return &registry.Resource{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", ShortNames: []string{"cm"}, Namespaced: true}
}

type server struct {
	t     *testing.T
	reg   *registry.Registry
	store *memory.Store
	url   string
}

func newServer(t *testing.T, extra ...*registry.Resource) *server {
	t.Helper()
	store := memory.New(memory.Options{Wait: 200 * time.Millisecond})
	reg, err := registry.New(registry.Options{
		Storage:                store,
		BookmarkBeforeDeadline: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range append([]*registry.Resource{widgets(), configMaps()}, extra...) {
		if err := reg.Register(res); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	return &server{t: t, reg: reg, store: store, url: srv.URL}
}

type response struct {
	code   int
	header http.Header
	body   []byte
}

func (r response) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// do sends a request; body may be a string, []byte or any JSON value.
func (s *server) do(method, path string, body any, header ...string) response {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: b}
}

// must sends a request and fails unless it answers code.
func (s *server) must(code int, method, path string, body any, header ...string) map[string]any {
	s.t.Helper()
	r := s.do(method, path, body, header...)
	if r.code != code {
		s.t.Fatalf("%s %s: got %d; want %d: %s", method, path, r.code, code, r.body)
	}
	return r.obj(s.t)
}

func widget(name string, labels map[string]string, spec map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": spec}
}

const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"

// path reads a dotted path from a decoded object.
func path(m map[string]any, p string) any {
	var cur any = m
	for _, k := range strings.Split(p, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

func str(m map[string]any, p string) string {
	s, _ := path(m, p).(string)
	return s
}

// watchStream reads a watch response line by line.
type watchStream struct {
	t    *testing.T
	resp *http.Response
	sc   *bufio.Scanner
	ch   chan map[string]any
}

func (s *server) watch(path string, header ...string) *watchStream {
	s.t.Helper()
	req, err := http.NewRequest("GET", s.url+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.t.Fatalf("watch %s: got %d: %s", path, resp.StatusCode, b)
	}
	ws := &watchStream{t: s.t, resp: resp, sc: bufio.NewScanner(resp.Body), ch: make(chan map[string]any, 100)}
	ws.sc.Buffer(make([]byte, 1<<20), 1<<20)
	go func() {
		defer close(ws.ch)
		for ws.sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(ws.sc.Bytes(), &ev) == nil {
				ws.ch <- ev
			}
		}
	}()
	s.t.Cleanup(func() { resp.Body.Close() })
	return ws
}

// next returns the next event, failing after a deadline.
func (w *watchStream) next() map[string]any {
	w.t.Helper()
	select {
	case ev, ok := <-w.ch:
		if !ok {
			w.t.Fatal("watch stream ended; want another event")
		}
		return ev
	case <-time.After(5 * time.Second):
		w.t.Fatal("no watch event within 5s")
	}
	return nil
}

// ended reports whether the stream closes (within a deadline) without
// further events.
func (w *watchStream) ended() bool {
	w.t.Helper()
	select {
	case ev, ok := <-w.ch:
		if ok {
			w.t.Fatalf("got event %v; want the stream to end", ev)
		}
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

func evType(ev map[string]any) string { t, _ := ev["type"].(string); return t }
func evObj(ev map[string]any) map[string]any {
	o, _ := ev["object"].(map[string]any)
	return o
}
