package metrics_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/metrics"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/serve"
	"github.com/kapi-dev/kapi/storage/memory"
)

// server is a registry served with metrics; deny lists the non-resource
// paths its authorizer refuses.
func server(t *testing.T, deny ...string) string {
	t.Helper()
	m := metrics.New(metrics.Options{})
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}), Metrics: m,
		Authorizer: authz.Func(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
			for _, p := range deny {
				if a.Path == p {
					return authz.NoOpinion, "", nil
				}
			}
			return authz.Allow, "", nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	if err := reg.Register(&registry.Resource{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(reg, serve.Options{TLS: serve.TLS{Disabled: true}, Observer: m, Metrics: m.Handler()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetrics: requests, a watch and its events show under kube's
// metric names and labels.
func TestMetrics(t *testing.T) {
	url := server(t)
	get(t, "POST", url+"/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"}}`)
	get(t, "GET", url+"/api/v1/namespaces/default/configmaps/a", "")
	get(t, "GET", url+"/api/v1/namespaces/default/configmaps/missing", "")
	get(t, "GET", url+"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0&timeoutSeconds=1", "")
	code, body := get(t, "GET", url+"/metrics", "")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	for _, want := range []string{
		`apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 1`,
		`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 1`,
		`apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 1`,
		`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="WATCH",version="v1"} 1`,
		`apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 1`,
		`apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="namespace",subresource="",verb="WATCH",version="v1"} 0`,
		`apiserver_current_inflight_requests{request_kind="readOnly"} 1`, // the scrape itself
		`apiserver_current_inflight_requests{request_kind="mutating"} 0`,
		`apiserver_watch_events_total{group="",resource="configmaps",version="v1"} 1`,
		`apiserver_watch_events_sizes_count{group="",resource="configmaps",version="v1"} 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestMetricsAuthorized: /metrics is a non-resource URL the registry's
// authorizer decides.
func TestMetricsAuthorized(t *testing.T) {
	url := server(t, "/metrics")
	code, body := get(t, "GET", url+"/metrics", "")
	if code != 403 || !strings.Contains(body, `cannot get path \"/metrics\"`) {
		t.Errorf("got %d %s; want 403", code, body)
	}
}

// TestStorageObjects counts the stored objects at each scrape.
func TestStorageObjects(t *testing.T) {
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	m := metrics.New(metrics.Options{Objects: reg.CountObjects, ObjectsTimeout: time.Second})
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if want := `apiserver_storage_objects{resource="namespaces"} 1`; !strings.Contains(w.Body.String(), want) {
		t.Errorf("/metrics lacks %s:\n%s", want, w.Body.String())
	}
}
