package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/serve"
)

// Options configure Metrics.
type Options struct {
	// Objects counts the stored objects of each resource, keyed as kube
	// labels them ("configmaps", "widgets.example.com"): set it to a
	// registry's CountObjects. Nil exports no apiserver_storage_objects.
	Objects func(ctx context.Context) (map[string]int64, error)
	// ObjectsTimeout bounds one count (default 5 s).
	ObjectsTimeout time.Duration
}

// Metrics collects a server's metrics. It implements serve.Observer and
// registry.Metrics; Handler serves them. Safe for concurrent use.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	durations    *prometheus.HistogramVec
	terminations *prometheus.CounterVec
	longRunning  *prometheus.GaugeVec
	inflight     *prometheus.GaugeVec
	watchEvents  *prometheus.CounterVec
	watchSizes   *prometheus.HistogramVec
}

var (
	_ serve.Observer   = (*Metrics)(nil)
	_ registry.Metrics = (*Metrics)(nil)
)

// The component label of every request metric, as kube-apiserver's.
const component = "apiserver"

// New returns Metrics with every metric registered.
func New(opts Options) *Metrics {
	reqLabels := []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, append(reqLabels, "code")),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		}, reqLabels),
		terminations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_terminations_total",
			Help: "Number of requests which apiserver terminated in self-defense.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		longRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_longrunning_requests",
			Help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Number of currently used inflight request limit of this apiserver per request kind.",
		}, []string{"request_kind"}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_events_total",
			Help: "Number of events sent in watch clients",
		}, []string{"group", "version", "resource"}),
		watchSizes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_watch_events_sizes",
			Help:    "Watch event size distribution in bytes",
			Buckets: prometheus.ExponentialBuckets(1024, 2.0, 8),
		}, []string{"group", "version", "resource"}),
	}
	m.inflight.WithLabelValues("readOnly").Set(0)
	m.inflight.WithLabelValues("mutating").Set(0)
	m.reg.MustRegister(m.requests, m.durations, m.terminations, m.longRunning, m.inflight, m.watchEvents, m.watchSizes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opts.Objects != nil {
		if opts.ObjectsTimeout <= 0 {
			opts.ObjectsTimeout = 5 * time.Second
		}
		m.reg.MustRegister(&objects{count: opts.Objects, timeout: opts.ObjectsTimeout})
	}
	return m
}

// Handler serves the metrics in Prometheus' text format (or OpenMetrics,
// as the scraper asks).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry is where the metrics are registered, for a program's own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Request implements serve.Observer.
func (m *Metrics) Request(r serve.RequestMetric) {
	code := strconv.Itoa(r.Code)
	m.requests.WithLabelValues(r.Verb, r.DryRun, r.Group, r.Version, r.Resource, r.Subresource, r.Scope, component, code).Inc()
	m.durations.WithLabelValues(r.Verb, r.DryRun, r.Group, r.Version, r.Resource, r.Subresource, r.Scope, component).Observe(r.Duration.Seconds())
	if r.Code == http.StatusTooManyRequests || r.Code == http.StatusGatewayTimeout {
		m.terminations.WithLabelValues(r.Verb, r.Group, r.Version, r.Resource, r.Subresource, r.Scope, component, code).Inc()
	}
}

// LongRunning implements serve.Observer.
func (m *Metrics) LongRunning(r serve.RequestMetric, delta int) {
	m.longRunning.WithLabelValues(r.Verb, r.Group, r.Version, r.Resource, r.Subresource, r.Scope, component).Add(float64(delta))
}

// InFlight implements serve.Observer.
func (m *Metrics) InFlight(kind string, n int) {
	m.inflight.WithLabelValues(kind).Set(float64(n))
}

// WatchEvents implements registry.Metrics: each of the events counts,
// with the batch's mean size as its size.
func (m *Metrics) WatchEvents(group, version, resource string, events, bytes int) {
	m.watchEvents.WithLabelValues(group, version, resource).Add(float64(events))
	h := m.watchSizes.WithLabelValues(group, version, resource)
	for range events {
		h.Observe(float64(bytes) / float64(events))
	}
}

// objects exports apiserver_storage_objects from a count made at each
// scrape.
type objects struct {
	count   func(ctx context.Context) (map[string]int64, error)
	timeout time.Duration
}

var objectsDesc = prometheus.NewDesc("apiserver_storage_objects",
	"Number of stored objects at the time of last check split by kind.", []string{"resource"}, nil)

func (o *objects) Describe(ch chan<- *prometheus.Desc) { ch <- objectsDesc }

func (o *objects) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	counts, err := o.count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(objectsDesc, err)
		return
	}
	for res, n := range counts {
		ch <- prometheus.MustNewConstMetric(objectsDesc, prometheus.GaugeValue, float64(n), res)
	}
}
