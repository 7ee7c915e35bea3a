package conformance

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	agg "github.com/kapi-dev/kapi/examples/aggregated/server"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/reference/kubeapiserver"
	"github.com/kapi-dev/kapi/serve"
)

// kapi as an aggregated API server (issue 23): examples/aggregated behind
// the real kube-apiserver's kube-aggregator, through an APIService.

const aggNamespace = "kapi-aggregated"

var gizmosGVR = schema.GroupVersionResource{Group: "fleet.example.com", Version: "v1", Resource: "gizmos"}

// aggregated starts examples/aggregated in-process for the reference
// kube-apiserver: trusting its front-proxy CA, delegating to it, serving
// a certificate for the Service name kube-aggregator checks. It returns
// the server's address and CA, and its log.
func aggregated(t testing.TB, ref *kubeapiserver.Server) (*served, *lockedBuffer) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ref.FrontProxyCA) {
		t.Fatal("the reference kube-apiserver has no front-proxy CA")
	}
	logBuf := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logBuf, nil))
	reg, err := agg.New(agg.Options{
		RequestHeaderCA: pool, AllowedNames: []string{kubeapiserver.FrontProxyClientName},
		Main: agg.Delegate{URL: ref.URL, Client: agg.BearerClient(ref.CA, ref.AdminToken)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	sv := startServed(t, reg, serve.Options{Logger: log, TLS: serve.TLS{Hosts: []string{"gizmo-api." + aggNamespace + ".svc", "localhost", "127.0.0.1"}}})
	return sv, logBuf
}

// lockedBuffer is a log written by a server and read by its test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// refREST is a client of the reference server as its admin.
func refREST(ref *kubeapiserver.Server) *rest.Config {
	return &rest.Config{Host: ref.URL, BearerToken: ref.AdminToken, TLSClientConfig: rest.TLSClientConfig{CAData: ref.CA}}
}

// rawJSON sends a request with a JSON body (nil: none) to the reference
// server as its admin.
func rawJSON(t testing.TB, ref *kubeapiserver.Server, method, path string, body any, header ...string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, ref.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ref.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := agg.BearerClient(ref.CA, "").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// registerAPIService points the reference server's kube-aggregator at
// sv: an ExternalName Service (localhost: no kube-proxy here) and the
// APIService of fleet.example.com/v1 with sv's CA; it waits until the
// APIService is Available.
func registerAPIService(t testing.TB, ref *kubeapiserver.Server, sv *served) {
	t.Helper()
	_, port, _ := net.SplitHostPort(sv.addr)
	p, _ := strconv.Atoi(port)
	// An earlier registration in this process (a test, then a benchmark)
	// points at a server that is gone.
	rawJSON(t, ref, "DELETE", "/apis/apiregistration.k8s.io/v1/apiservices/v1.fleet.example.com", nil)
	rawJSON(t, ref, "DELETE", "/api/v1/namespaces/"+aggNamespace+"/services/gizmo-api", nil)
	for _, obj := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": aggNamespace}}},
		{"/api/v1/namespaces/" + aggNamespace + "/services", map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "gizmo-api"},
			"spec":     map[string]any{"type": "ExternalName", "externalName": "localhost", "ports": []any{map[string]any{"port": p}}}}},
		{"/apis/apiregistration.k8s.io/v1/apiservices", map[string]any{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": "v1.fleet.example.com"},
			"spec": map[string]any{"group": "fleet.example.com", "version": "v1", "groupPriorityMinimum": 1000, "versionPriority": 15,
				"service":  map[string]any{"namespace": aggNamespace, "name": "gizmo-api", "port": p},
				"caBundle": sv.ca}}},
	} {
		if code, b := rawJSON(t, ref, "POST", obj.path, obj.body); code != 201 && code != 409 {
			t.Fatalf("POST %s: %d %s", obj.path, code, b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for {
		_, b := rawJSON(t, ref, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1.fleet.example.com", nil)
		var as struct {
			Status struct {
				Conditions []struct{ Type, Status, Reason, Message string }
			}
		}
		json.Unmarshal(b, &as)
		for _, c := range as.Status.Conditions {
			if c.Type == "Available" && c.Status == "True" {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the APIService did not become Available: %s", b)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestAggregatedServer: kubectl and client-go through kube-aggregator
// list, create and watch the aggregated kind, kubectl explain reads its
// fields, discovery lists it; requests that reach the aggregated server
// without kube-aggregator's certificate are refused.
func TestAggregatedServer(t *testing.T) {
	ref := kubeAPIServer(t)
	sv, logBuf := aggregated(t, ref)
	registerAPIService(t, ref, sv)
	defer func() {
		if t.Failed() {
			t.Logf("the aggregated server's log:\n%s", logBuf)
		}
	}()
	k := kubectlAs(t, ref.URL, server.Credentials{Token: ref.AdminToken, CertificateAuthPEM: ref.CA})
	dyn := dynamic.NewForConfigOrDie(refREST(ref))
	ctx := testContext(t)

	// Discovery: kubectl's (aggregated discovery) and the v2 document.
	waitFor(t, ctx, "gizmos in kubectl api-resources", func() (bool, string) {
		out, errOut, err := k.run("api-resources", "--api-group=fleet.example.com")
		return err == nil && strings.Contains(out, "gizmos") && strings.Contains(out, "Gizmo"), out + errOut
	})
	code, b := rawJSON(t, ref, "GET", "/apis", nil, "Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	if code != 200 || !strings.Contains(string(b), `"fleet.example.com"`) || !strings.Contains(string(b), `"gizmos"`) {
		t.Errorf("aggregated discovery: %d; want fleet.example.com with gizmos in it:\n%.2000s", code, b)
	}

	// A watch through the aggregator sees a create made with kubectl.
	w, err := dyn.Resource(gizmosGVR).Namespace("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch through the aggregator: %v", err)
	}
	defer w.Stop()
	manifest := writeTemp(t, "gizmo.yaml", []byte("apiVersion: fleet.example.com/v1\nkind: Gizmo\nmetadata:\n  name: g1\n  namespace: default\nspec:\n  size: 3\n  label: first\n"))
	k.mustRun(t, "create", "-f", manifest)
	select {
	case ev := <-w.ResultChan():
		u, _ := ev.Object.(*unstructured.Unstructured)
		if ev.Type != "ADDED" || u == nil || u.GetName() != "g1" {
			t.Errorf("watch: got %s %v; want ADDED g1", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("watch: no event")
	}
	if out := k.mustRun(t, "get", "gizmos", "-n", "default"); !strings.Contains(out, "g1") || !strings.Contains(out, "SIZE") {
		t.Errorf("kubectl get gizmos: %s; want g1 in the Size column's table", out)
	}
	list, err := dyn.Resource(gizmosGVR).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("list through the aggregator: %v, %v; want g1", err, list)
	}
	// Validation is the aggregated server's.
	bad := writeTemp(t, "bad.yaml", []byte("apiVersion: fleet.example.com/v1\nkind: Gizmo\nmetadata:\n  name: g2\n  namespace: default\nspec:\n  size: -1\n"))
	if _, errOut, err := k.run("create", "-f", bad); err == nil || !strings.Contains(err.Error()+errOut, "spec.size") {
		t.Errorf("kubectl create with size -1: err %v, %s; want refused on spec.size", err, errOut)
	}
	// kubectl explain reads the fields from the aggregated OpenAPI.
	waitFor(t, ctx, "kubectl explain gizmo.spec", func() (bool, string) {
		out, errOut, err := k.run("explain", "gizmos.spec")
		return err == nil && strings.Contains(out, "size") && strings.Contains(out, "How big the gizmo is."), out + errOut
	})

	// The user the aggregated server saw is the one kube-apiserver
	// authenticated, by the front proxy's headers.
	if !strings.Contains(logBuf.String(), "user=kapi-reference-admin") {
		t.Errorf("the aggregated server never saw the admin through the front proxy:\n%s", logBuf)
	}

	t.Run("refused without the front-proxy certificate", func(t *testing.T) {
		other, _, err := serve.SelfSigned("front-proxy-client") // a client certificate of another CA
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(sv.ca)
		for _, tc := range []struct {
			name  string
			certs []tls.Certificate
			want  []int
		}{
			{"no certificate", nil, []int{401, 403}},
			{"untrusted certificate", []tls.Certificate{other}, []int{401}},
		} {
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: tc.certs}}}
			req, _ := http.NewRequest("POST", sv.url()+"/apis/fleet.example.com/v1/namespaces/default/gizmos",
				strings.NewReader(`{"apiVersion":"fleet.example.com/v1","kind":"Gizmo","metadata":{"name":"sneaky"}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Remote-User", "admin")
			req.Header.Set("X-Remote-Group", "system:masters")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !containsInt(tc.want, resp.StatusCode) || !strings.Contains(string(body), `"kind":"Status"`) {
				t.Errorf("%s: %d %s; want %v with a Status", tc.name, resp.StatusCode, body, tc.want)
			}
		}
		if _, err := dyn.Resource(gizmosGVR).Namespace("default").Get(ctx, "sneaky", metav1.GetOptions{}); err == nil {
			t.Errorf("the refused create stored sneaky")
		}
	})
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()
	last := ""
	for {
		ok, got := cond()
		if ok {
			return
		}
		last = got
		select {
		case <-ctx.Done():
			t.Fatalf("%s: never; last:\n%s", what, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
