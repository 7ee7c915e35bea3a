package compare

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/internal/benchobj"
	"github.com/kapi-dev/kapi/registry"
	kschema "github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/memory"
)

// widgetsCRD is the CRD both HTTP peers serve (see benchobj.CompareCRD).
const widgetsCRD = benchobj.CompareCRD

// wireCount counts what a client read: the response bodies as decoded
// (after gzip) and the bytes read from its TCP connections (before TLS and
// gzip), or off its in-process transport's bodies.
type wireCount struct{ body, wire atomic.Int64 }

// instrument makes cfg count into c, and lifts client-go's rate limit
// (QPS 5 by default), which would measure the limiter, not the server. A
// cfg with its own Transport dials nothing: its wire bytes are counted by
// c.counting, if it wraps that Transport.
func (c *wireCount) instrument(cfg *rest.Config) {
	cfg.QPS, cfg.Burst = -1, 0
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if resp != nil && resp.Body != nil {
				resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.body}
			}
			return resp, err
		})
	}
	if cfg.Transport != nil {
		return
	}
	var d net.Dialer
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: conn, n: &c.wire}, nil
	}
}

// counting wraps a transport that dials nothing (an in-process one): what
// is read off its response bodies counts as the wire bytes.
func (c *wireCount) counting(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if resp != nil && resp.Body != nil {
			resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.wire}
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// httpPeer drives a server with client-go's dynamic client: JSON on the
// wire, *unstructured.Unstructured decoded by client-go.
type httpPeer struct {
	res   dynamic.NamespaceableResourceInterface
	count *wireCount
	close func()
	// hc and listURL serve rawList.
	hc      *http.Client
	listURL string
}

// bytesRead reports what the peer's client has read so far: response
// bodies (decoded) and the bytes off its connections.
func (p *httpPeer) bytesRead() (body, wire int64) { return p.count.body.Load(), p.count.wire.Load() }

func newHTTPPeer(cfg *rest.Config, count *wireCount, close func()) (*httpPeer, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &httpPeer{res: dyn.Resource(WidgetGVR), count: count, close: close,
		hc: hc, listURL: cfg.Host + "/apis/" + WidgetGVR.Group + "/" + WidgetGVR.Version + "/" + WidgetGVR.Resource}, nil
}

// rawList GETs every widget as JSON with the client's transport (gzip
// accepted, as client-go does) and reads the body without decoding it:
// what the server and the wire can do, the client's decode aside. It
// returns the body's (decoded) length.
func (p *httpPeer) rawList(ctx context.Context) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.listURL, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", p.listURL, resp.Status)
	}
	return n, err
}

// KapiHTTP is kapi's example server (examples/apiserver/server's
// registry) on the memory store, served by an httptest.Server.
func KapiHTTP() PeerInfo {
	return PeerInfo{
		Name: "kapi HTTP",
		What: "examples/apiserver/server's registry (configmaps, and the widgets CRD with the bench's spec fields) on storage/memory, httptest.Server on 127.0.0.1 (HTTP/1.1); client-go dynamic client, JSON",
		Start: func(ctx context.Context, _ *Etcd) (Peer, error) {
			return startKapi(ctx, false)
		},
	}
}

// KapiInProcess is KapiHTTP's registry and client without the socket:
// client-go's rest.Config carries the registry's in-process
// http.RoundTripper (registry.(*Registry).Transport).
func KapiInProcess() PeerInfo {
	return PeerInfo{
		Name: "kapi in-process",
		What: "the same registry, store, CRD and client-go dynamic client as kapi HTTP, but rest.Config{Host: \"http://kapi.invalid\", Transport: reg.Transport()}: each request is served by the registry's handler in a goroutine of the same process, the response body streamed through an io.Pipe (no socket, no HTTP encoding, no gzip); the bytes \"off the connection\" are those read off the pipe",
		Start: func(ctx context.Context, _ *Etcd) (Peer, error) {
			return startKapi(ctx, true)
		},
	}
}

// exampleRegistry is examples/apiserver/server's registry (configmaps)
// with the bench's widgets CRD, on a fresh memory store.
func exampleRegistry() (*registry.Registry, error) {
	defs, err := kschema.ParseCRDs([]byte(widgetsCRD))
	if err != nil {
		return nil, err
	}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		return nil, err
	}
	for _, res := range append([]*registry.Resource{server.ConfigMaps()}, registry.FromCRD(defs[0])...) {
		if err := reg.Register(res); err != nil {
			reg.Close()
			return nil, err
		}
	}
	return reg, nil
}

// startKapi serves exampleRegistry to client-go's dynamic client, over an
// httptest.Server on 127.0.0.1 or, inProcess, through reg.Transport().
func startKapi(ctx context.Context, inProcess bool) (Peer, error) {
	reg, err := exampleRegistry()
	if err != nil {
		return nil, err
	}
	count := &wireCount{}
	var cfg *rest.Config
	stop := func() { reg.Close() }
	if inProcess {
		// Watches left open end with their client's context; Stop and
		// each scenario's context see to that.
		cfg = &rest.Config{Host: "http://kapi.invalid", Transport: count.counting(reg.Transport())}
	} else {
		srv := httptest.NewServer(reg)
		stop = func() {
			srv.CloseClientConnections() // ends watches left open
			srv.Close()
			reg.Close()
		}
		cfg = &rest.Config{Host: srv.URL}
	}
	count.instrument(cfg)
	p, err := newHTTPPeer(cfg, count, stop)
	if err != nil {
		stop()
		return nil, err
	}
	// kapi refuses objects in a namespace that does not exist.
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		stop()
		return nil, err
	}
	nsRes := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	for i := range Namespaces {
		ns, _ := Name(i)
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := nsRes.Create(ctx, o, metav1.CreateOptions{}); err != nil {
			stop()
			return nil, fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	return p, nil
}

func (p *httpPeer) Close() { p.close() }

func (p *httpPeer) Create(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return p.res.Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
}

func (p *httpPeer) Get(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	return p.res.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

func (p *httpPeer) Update(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, err := p.res.Namespace(u.GetNamespace()).Update(ctx, u, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return nil, ErrConflict
	}
	return out, err
}

func (p *httpPeer) List(ctx context.Context, opts ListOptions) (Page, error) {
	l, err := p.res.List(ctx, metav1.ListOptions{LabelSelector: opts.LabelSelector, Limit: opts.Limit, Continue: opts.Continue})
	if err != nil {
		return Page{}, err
	}
	return Page{Items: l.Items, ResourceVersion: l.GetResourceVersion(), Continue: l.GetContinue()}, nil
}

func (p *httpPeer) Watch(ctx context.Context, rv string) (Watcher, error) {
	w, err := p.res.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		return nil, err
	}
	return kubeWatcher{w}, nil
}
