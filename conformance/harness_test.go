package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// The resources the example server serves (issue 3, point 10).
var (
	widgetsGVR    = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// waitTimeout bounds every wait for an asynchronous outcome (an event, a
// namespace going away). It is a deadline for failure, not a timing assertion.
const waitTimeout = 30 * time.Second

// env is one example server running in-process, plus clients pointed at it.
type env struct {
	srv *httptest.Server
	// log records every request the server answered (server side).
	log *requestLog
	cfg *rest.Config
	dyn dynamic.Interface
}

// newEnv starts a fresh example server (empty store, see withStorage) for
// one test.
// It is closed when the test ends.
func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvFor(t, newServerHandler(t))
}

// newEnvFor is newEnv for a handler the test built itself (its own store
// or extra resources).
func newEnvFor(t *testing.T, h http.Handler) *env {
	t.Helper()
	log := &requestLog{}
	srv := httptest.NewServer(log.wrap(h))
	t.Cleanup(func() {
		// Ends watches a test left open (a background kubectl, say), so
		// that Close does not wait for them.
		srv.CloseClientConnections()
		srv.Close()
	})
	cfg := &rest.Config{Host: srv.URL, QPS: -1}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("dynamic.NewForConfig: %v", err)
	}
	return &env{srv: srv, log: log, cfg: cfg, dyn: dyn}
}

// config returns a copy of the env's rest config, safe to modify.
func (e *env) config() *rest.Config {
	return rest.CopyConfig(e.cfg)
}

// widgets returns the dynamic client for widgets in namespace ns.
func (e *env) widgets(ns string) dynamic.ResourceInterface {
	return e.dyn.Resource(widgetsGVR).Namespace(ns)
}

// configMaps returns the dynamic client for configmaps in namespace ns.
func (e *env) configMaps(ns string) dynamic.ResourceInterface {
	return e.dyn.Resource(configMapsGVR).Namespace(ns)
}

// namespace creates a namespace with the given name and returns the name.
func (e *env) namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"name": name},
	}}
	if _, err := e.dyn.Resource(namespacesGVR).Create(testContext(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %q: %v", name, err)
	}
	return name
}

// create creates obj through the dynamic client for gvr and fails the test
// on error.
func (e *env) create(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got, err := e.dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(testContext(t), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s/%s: %v", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
	}
	return got
}

// testContext returns a context that ends with the test (or after
// waitTimeout, whichever is first).
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// widget builds a Widget object. labels may be nil.
func widget(ns, name, color string, replicas int64, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"color":    color,
			"replicas": replicas,
			"ports": []any{
				map[string]any{"name": "http", "port": int64(80), "protocol": "TCP"},
			},
		},
	}}
	if labels != nil {
		u.SetLabels(labels)
	}
	return u
}

// configMap builds a ConfigMap object with one data entry.
func configMap(ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"data":       map[string]any{"key": "value"},
	}}
	if labels != nil {
		u.SetLabels(labels)
	}
	return u
}

// nestedString reads a string field and fails the test if it is not one.
func nestedString(t *testing.T, u *unstructured.Unstructured, fields ...string) string {
	t.Helper()
	v, found, err := unstructured.NestedString(u.Object, fields...)
	if err != nil || !found {
		t.Fatalf("%s %s: field %s: found=%v err=%v; want a string", u.GetKind(), u.GetName(), strings.Join(fields, "."), found, err)
	}
	return v
}

// nestedInt reads an integer field; missing fields read as (0, false).
func nestedInt(t *testing.T, u *unstructured.Unstructured, fields ...string) (int64, bool) {
	t.Helper()
	v, found, err := unstructured.NestedInt64(u.Object, fields...)
	if err != nil {
		t.Fatalf("%s %s: field %s: %v; want an integer", u.GetKind(), u.GetName(), strings.Join(fields, "."), err)
	}
	return v, found
}

// names returns the names of the items, in order.
func names(items []unstructured.Unstructured) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.GetName())
	}
	return out
}

// poll calls cond until it returns true, failing the test with what after
// waitTimeout.
func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, waitTimeout, true, cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// request is one HTTP exchange seen by a requestLog.
type request struct {
	Method      string
	Path        string
	Query       string
	Accept      string
	UserAgent   string
	Status      int
	ContentType string
}

func (r request) String() string {
	return fmt.Sprintf("%s %s?%s -> %d %s", r.Method, r.Path, r.Query, r.Status, r.ContentType)
}

// requestLog records requests. It wraps the server handler (server side) or
// a client transport (client side) and is safe for concurrent use.
type requestLog struct {
	mu   sync.Mutex
	reqs []request
}

func (l *requestLog) add(r request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r)
}

// all returns a copy of the recorded requests.
func (l *requestLog) all() []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]request(nil), l.reqs...)
}

// matching returns the recorded requests for which keep is true.
func (l *requestLog) matching(keep func(request) bool) []request {
	var out []request
	for _, r := range l.all() {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// waitFor waits until a request for which keep is true has been recorded.
func (l *requestLog) waitFor(t *testing.T, what string, keep func(request) bool) {
	t.Helper()
	poll(t, what, func(context.Context) (bool, error) {
		return len(l.matching(keep)) > 0, nil
	})
}

// wrap returns h recording every request when its handler starts writing
// the response (watch requests are recorded as soon as the stream starts).
func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &recordingWriter{ResponseWriter: w, log: l, req: request{
			Method:    r.Method,
			Path:      r.URL.Path,
			Query:     r.URL.RawQuery,
			Accept:    r.Header.Get("Accept"),
			UserAgent: r.UserAgent(),
		}}
		h.ServeHTTP(rw, r)
		rw.record(http.StatusOK)
	})
}

// recordingWriter records the request on the first WriteHeader or Write.
type recordingWriter struct {
	http.ResponseWriter
	log  *requestLog
	req  request
	once sync.Once
}

func (w *recordingWriter) record(status int) {
	w.once.Do(func() {
		w.req.Status = status
		w.req.ContentType = w.Header().Get("Content-Type")
		w.log.add(w.req)
	})
}

func (w *recordingWriter) WriteHeader(code int) {
	w.record(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.record(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Flush keeps watch streams flushing through the wrapper.
func (w *recordingWriter) Flush() {
	w.record(http.StatusOK)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// recordingTransport records requests on the client side.
type recordingTransport struct {
	next http.RoundTripper
	log  *requestLog
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	req := request{
		Method:    r.Method,
		Path:      r.URL.Path,
		Query:     r.URL.RawQuery,
		Accept:    r.Header.Get("Accept"),
		UserAgent: r.UserAgent(),
	}
	resp, err := rt.next.RoundTrip(r)
	if resp != nil {
		req.Status = resp.StatusCode
		req.ContentType = resp.Header.Get("Content-Type")
	}
	rt.log.add(req)
	return resp, err
}

// recordClientRequests makes cfg's clients record their requests in a new
// log, which it returns.
func recordClientRequests(cfg *rest.Config) *requestLog {
	log := &requestLog{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &recordingTransport{next: rt, log: log}
	})
	return log
}
