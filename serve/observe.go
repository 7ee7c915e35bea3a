package serve

import (
	"net/http"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/registry/request"
)

// Observer receives the server's measurements, for metrics: the module
// github.com/kapi-dev/kapi/metrics implements it with Prometheus, under
// kube-apiserver's metric names. Its methods are called concurrently from
// the goroutines serving requests and must not block.
type Observer interface {
	// Request is called once a request is answered.
	Request(m RequestMetric)
	// LongRunning is called with +1 when a long-running request (a
	// watch) starts and -1 when it ends.
	LongRunning(m RequestMetric, delta int)
	// InFlight reports how many requests of a kind ("readOnly" or
	// "mutating") are being served now. A request refused by the limit
	// is a Request with code 429.
	InFlight(kind string, n int)
}

// RequestMetric describes a request as kube-apiserver's request metrics
// label it.
type RequestMetric struct {
	// Verb is kube's metrics verb: GET, LIST, WATCH, POST, PUT, PATCH,
	// APPLY (a server-side apply patch), DELETE, DELETECOLLECTION, or the
	// HTTP method of a non-resource request.
	Verb, DryRun                                 string
	Group, Version, Resource, Subresource, Scope string
	Code                                         int
	Duration                                     time.Duration
}

// metric labels a request by its Info, as kube's endpoints/metrics do.
func metric(req *http.Request, info *request.Info) RequestMetric {
	m := RequestMetric{Verb: req.Method}
	if !info.IsResourceRequest {
		return m
	}
	m.Group, m.Version, m.Resource, m.Subresource = info.APIGroup, info.APIVersion, info.Resource, info.Subresource
	switch {
	case info.Name != "" || info.Verb == "create":
		m.Scope = "resource"
	case info.Namespace != "":
		m.Scope = "namespace"
	default:
		m.Scope = "cluster"
	}
	switch info.Verb {
	case "create":
		m.Verb = "POST"
	case "update":
		m.Verb = "PUT"
	case "patch":
		m.Verb = "PATCH"
		if strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch") {
			m.Verb = "APPLY"
		}
	default:
		m.Verb = strings.ToUpper(info.Verb)
	}
	if strings.Contains(req.URL.RawQuery, "dryRun") {
		m.DryRun = strings.Join(req.URL.Query()["dryRun"], ",")
	}
	return m
}

// noObserver measures nothing.
type noObserver struct{}

func (noObserver) Request(RequestMetric)          {}
func (noObserver) LongRunning(RequestMetric, int) {}
func (noObserver) InFlight(string, int)           {}

// recorder notes a response's code and size, for the log and metrics.
type recorder struct {
	http.ResponseWriter
	code  int
	bytes int64
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	http.NewResponseController(r.ResponseWriter).Flush()
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
