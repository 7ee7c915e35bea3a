package compare

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/reference/kubeapiserver"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage/memory"
)

// CustomResourceDefinitions side by side (issue 19): kapi's registry
// serving CRDs through the API, and k8s.io/apiextensions-apiserver, each
// over HTTP with the same raw requests.
//
//	go test -run XXX -bench 'BenchmarkCRD' -benchtime 1x ./compare/

var (
	crdCount = flag.Int("crd.count", 1000, "CRDs BenchmarkCRDMany creates")
	crdWait  = flag.Int("crd.wait", 1800, "seconds BenchmarkCRDMany waits for the CRDs to be served")
)

// crdPeer is a server that serves CRDs, started fresh per sub-benchmark.
type crdPeer struct {
	name  string
	start func(b *testing.B) (*rest.Config, func())
	// heap is the server's heap in bytes; nil: this process's, after a GC.
	heap func(ctx context.Context, hc *http.Client, cfg *rest.Config) float64
}

// kubeAPIServerPeer is the real kube-apiserver v1.37.2 (the reference
// module's binary) on the shared embedded etcd: BenchmarkCRDMany needs
// what only it serves (aggregated discovery of /apis, /openapi/v3); its
// heap is its own go_gc_heap_live_bytes (the live heap at its last GC).
func kubeAPIServerPeer() crdPeer {
	return crdPeer{"kube-apiserver", func(b *testing.B) (*rest.Config, func()) {
		if etcd.e == nil && etcd.err == nil {
			etcd.e, etcd.err = StartEtcd()
		}
		if etcd.err != nil {
			b.Fatal(etcd.err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		srv, err := kubeapiserver.Start(ctx, kubeapiserver.Options{EtcdServers: []string{etcd.e.Endpoint}})
		if err != nil {
			b.Fatal(err)
		}
		cfg := &rest.Config{Host: srv.URL, BearerToken: srv.AdminToken, TLSClientConfig: rest.TLSClientConfig{CAData: srv.CA}, QPS: -1}
		return cfg, srv.Stop
	}, func(ctx context.Context, hc *http.Client, cfg *rest.Config) float64 {
		_, body, err := raw(ctx, hc, cfg, http.MethodGet, "/metrics", "text/plain", "")
		if err != nil {
			return 0
		}
		for _, l := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(l, "go_gc_heap_live_bytes "); ok {
				f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return f
			}
		}
		return 0
	}}
}

func crdPeers() []crdPeer {
	return []crdPeer{
		{"kapi", func(b *testing.B) (*rest.Config, func()) {
			reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(reg)
			return &rest.Config{Host: srv.URL}, func() { srv.CloseClientConnections(); srv.Close(); reg.Close() }
		}, nil},
		{"kube", func(b *testing.B) (*rest.Config, func()) {
			if etcd.e == nil && etcd.err == nil {
				etcd.e, etcd.err = StartEtcd()
			}
			if etcd.err != nil {
				b.Fatal(etcd.err)
			}
			cfg, stop, err := startKube(etcd.e)
			if err != nil {
				b.Fatal(err)
			}
			cfg.QPS, cfg.Burst = -1, 0
			return cfg, stop
		}, nil},
	}
}

// raw sends one request and returns the code and body.
func raw(ctx context.Context, hc *http.Client, cfg *rest.Config, method, path, accept, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(cfg.Host, "/")+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// benchCRD is a one-version CRD of group g with a small schema.
func benchCRD(g, conversion, versions string) string {
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"things.` + g + `"},
"spec":{"group":"` + g + `","scope":"Namespaced","names":{"plural":"things","kind":"Thing"},` + conversion + `"versions":[` + versions + `]}}`
}

func benchVersion(name string, storage bool) string {
	return fmt.Sprintf(`{"name":%q,"served":true,"storage":%v,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"},"color":{"type":"string"}}}}}},"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}]}`, name, storage)
}

func thing(g, v, name string) string {
	return `{"apiVersion":"` + g + `/` + v + `","kind":"Thing","metadata":{"name":"` + name + `"},"spec":{"size":3,"color":"red"}}`
}

// BenchmarkCRDToFirstCreate is the time from a CRD's create to the
// first successful create of its kind: retried every millisecond until
// the kind is served (kube also holds the first creates of a kind back
// for two seconds after it is established).
func BenchmarkCRDToFirstCreate(b *testing.B) {
	for _, p := range crdPeers() {
		b.Run(p.name, func(b *testing.B) {
			cfg, stop := p.start(b)
			defer stop()
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				g := fmt.Sprintf("first%d.bench.example.org", i)
				start := time.Now()
				if code, body, err := raw(ctx, hc, cfg, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", benchCRD(g, "", benchVersion("v1", true))); err != nil || code != 201 {
					b.Fatalf("create CRD: %v %d %s", err, code, body)
				}
				for {
					code, body, err := raw(ctx, hc, cfg, http.MethodPost, "/apis/"+g+"/v1/namespaces/default/things", "", thing(g, "v1", "a"))
					if err == nil && code == 201 {
						break
					}
					if time.Since(start) > time.Minute {
						b.Fatalf("no create within a minute: %v %d %s", err, code, body)
					}
					time.Sleep(time.Millisecond)
				}
				b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "ms/first-create")
			}
		})
	}
}

// BenchmarkCRDMany creates -crd.count CRDs (each its own group), waits
// until the last is served, and reports the total time, the live heap
// after (this process's after a GC for kapi, kube-apiserver's own at its
// last GC) and what the CRDs added to it, and the time and
// size of an aggregated discovery fetch (/apis, with client-go's Accept)
// and of OpenAPI v3 (the index and one group version's document); for
// kapi, beside each warm fetch, the same fetch from a static server
// sending the bytes kapi sent (staticPeer): the floor of any server.
func BenchmarkCRDMany(b *testing.B) {
	for _, p := range []crdPeer{crdPeers()[0], kubeAPIServerPeer()} {
		b.Run(p.name, func(b *testing.B) {
			for range b.N {
				cfg, stop := p.start(b)
				hc, err := rest.HTTPClientFor(cfg)
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				heap := func() float64 {
					if p.heap != nil {
						return p.heap(ctx, hc, cfg)
					}
					var m runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&m)
					return float64(m.HeapAlloc)
				}
				before := heap()
				start := time.Now()
				n := *crdCount
				for i := range n {
					g := fmt.Sprintf("g%04d.many.example.org", i)
					if code, body, err := raw(ctx, hc, cfg, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", benchCRD(g, "", benchVersion("v1", true))); err != nil || code != 201 {
						b.Fatalf("create CRD %d: %v %d %s", i, err, code, body)
					}
				}
				last := fmt.Sprintf("/apis/g%04d.many.example.org/v1/namespaces/default/things", n-1)
				for {
					code, _, err := raw(ctx, hc, cfg, http.MethodGet, last, "", "")
					if err == nil && code == 200 {
						break
					}
					if time.Since(start) > time.Duration(*crdWait)*time.Second {
						b.Fatalf("the last CRD is not served: %v %d", err, code)
					}
					time.Sleep(10 * time.Millisecond)
				}
				total := time.Since(start)
				// Discovery must list every CRD: wait until it does. It is
				// asked for as client-go's discovery client asks (kubectl's
				// too): aggregated JSON, else the legacy document.
				agg := discovery.AcceptV2 + "," + discovery.AcceptV1
				for {
					_, body, err := raw(ctx, hc, cfg, http.MethodGet, "/apis", agg, "")
					if err == nil && bytes.Contains(body, []byte(fmt.Sprintf("g%04d.many.example.org", n-1))) {
						break
					}
					if time.Since(start) > time.Duration(*crdWait)*time.Second {
						b.Fatalf("discovery does not list the last CRD: %v %.2000s", err, body)
					}
					time.Sleep(10 * time.Millisecond)
				}
				b.ReportMetric(total.Seconds(), "s/create-all")
				after := heap()
				b.ReportMetric((after-before)/(1<<20), "MiB-heap-added")
				b.ReportMetric(after/(1<<20), "MiB-heap-after")
				// The first fetch after the last change (a server that
				// builds documents on demand pays for them here), then
				// fifty more: their mean and their median (on a shared
				// machine one stalled fetch moves the mean; the median
				// is the typical fetch). Beside kapi's, the floor: a
				// static server sending the bytes kapi sent (its body,
				// encoding and type, in one Write with their
				// Content-Length) to the same client, the two taking
				// turns.
				fetch := func(unit, path, accept string) {
					const rounds = 50
					var size int
					get := func(cfg *rest.Config, hc *http.Client) time.Duration {
						t0 := time.Now()
						code, body, err := raw(ctx, hc, cfg, http.MethodGet, path, accept, "")
						if err != nil || code != 200 {
							b.Fatalf("GET %s: %v %d", path, err, code)
						}
						size = len(body)
						return time.Since(t0)
					}
					b.ReportMetric(float64(get(cfg, hc).Microseconds())/1000, "ms/"+unit+"-first")
					floor, floorCfg, floorHC := staticPeer(ctx, b, cfg, path, accept)
					if floor != nil {
						defer floor.Close()
					}
					var took, floorTook []time.Duration
					for range rounds {
						took = append(took, get(cfg, hc))
						if floor != nil {
							floorTook = append(floorTook, get(floorCfg, floorHC))
						}
					}
					report := func(d []time.Duration, suffix string) {
						var sum time.Duration
						for _, x := range d {
							sum += x
						}
						slices.Sort(d)
						b.ReportMetric(float64(sum.Microseconds())/1000/float64(len(d)), "ms/"+unit+suffix)
						b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "ms/"+unit+suffix+"-median")
					}
					report(took, "")
					if floor != nil {
						report(floorTook, "-static")
					}
					b.ReportMetric(float64(size)/1024, "KiB/"+unit)
				}
				fetch("discovery", "/apis", agg)
				fetch("openapi-v3-index", "/openapi/v3", "application/json")
				fetch("openapi-v3-gv", "/openapi/v3/apis/g0000.many.example.org/v1", "application/json")
				stop()
			}
		})
	}
}

// staticPeer is the floor of a fetch from a server at cfg over plain
// HTTP (kapi's): a static server that answers every request with the
// bytes the server sent for path (as on the wire: compressed when it
// compressed them for Go's transport, which asks for gzip), with its
// Content-Type, Content-Encoding and Content-Length, in one Write; and
// a client made as the bench's. nil for a server over HTTPS (kube's).
func staticPeer(ctx context.Context, b *testing.B, cfg *rest.Config, path, accept string) (*httptest.Server, *rest.Config, *http.Client) {
	if !strings.HasPrefix(cfg.Host, "http://") {
		return nil, nil, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("Accept-Encoding", "gzip")
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	wire, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("GET %s: %v %d", path, err, resp.StatusCode)
	}
	ct, ce := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", ct)
		if ce != "" {
			h.Set("Content-Encoding", ce)
		}
		h.Set("Content-Length", strconv.Itoa(len(wire)))
		w.Write(wire)
	}))
	scfg := &rest.Config{Host: srv.URL}
	hc, err := rest.HTTPClientFor(scfg)
	if err != nil {
		b.Fatal(err)
	}
	return srv, scfg, hc
}

// BenchmarkCRDConversionRead is a GET of one object through the version
// that is not its storage version, with None and with Webhook conversion
// (a local HTTPS webhook that rewrites apiVersion, as a converter that
// renames nothing).
func BenchmarkCRDConversionRead(b *testing.B) {
	hook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review map[string]any
		json.NewDecoder(r.Body).Decode(&review)
		req := review["request"].(map[string]any)
		objs, _ := req["objects"].([]any)
		for _, o := range objs {
			o.(map[string]any)["apiVersion"] = req["desiredAPIVersion"]
		}
		json.NewEncoder(w).Encode(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
			"response": map[string]any{"uid": req["uid"], "convertedObjects": objs, "result": map[string]any{"status": "Success"}}})
	}))
	defer hook.Close()
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw}))
	strategies := []struct{ name, conversion string }{
		{"None", ""},
		{"Webhook", `"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"` + hook.URL + `","caBundle":"` + ca + `"}}},`},
	}
	for _, p := range crdPeers() {
		b.Run(p.name, func(b *testing.B) {
			cfg, stop := p.start(b)
			defer stop()
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for _, s := range strategies {
				b.Run(s.name, func(b *testing.B) {
					g := strings.ToLower(s.name) + ".conv.bench.example.org"
					crd := benchCRD(g, s.conversion, benchVersion("v1beta1", false)+","+benchVersion("v1", true))
					code, body, err := raw(ctx, hc, cfg, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", crd)
					if err != nil || (code != 201 && code != 409) {
						b.Fatalf("create CRD: %v %d %s", err, code, body)
					}
					path := "/apis/" + g + "/v1beta1/namespaces/default/things"
					for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
						code, body, err = raw(ctx, hc, cfg, http.MethodPost, "/apis/"+g+"/v1/namespaces/default/things", "", thing(g, "v1", "a"))
						if err == nil && (code == 201 || code == 409) {
							break
						}
						if time.Since(start) > time.Minute {
							b.Fatalf("create: %v %d %s", err, code, body)
						}
					}
					b.ResetTimer()
					for range b.N {
						code, body, err := raw(ctx, hc, cfg, http.MethodGet, path+"/a", "", "")
						if err != nil || code != 200 || !bytes.Contains(body, []byte(`"apiVersion":"`+g+`/v1beta1"`)) {
							b.Fatalf("GET through v1beta1: %v %d %s", err, code, body)
						}
					}
				})
			}
		})
	}
}
