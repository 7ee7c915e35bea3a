package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/registry/request"
)

// Options configure a Server. The zero value serves https with a
// self-signed certificate, HTTP/2, and kube-apiserver's limits.
type Options struct {
	TLS    TLS
	Limits Limits
	// ShutdownDelay is --shutdown-delay-duration: after Shutdown is
	// called, the server keeps serving for so long while /readyz fails,
	// so load balancers stop sending it requests before it stops
	// accepting them.
	ShutdownDelay time.Duration
	// Logger receives the server's logs: one line per request (verb,
	// resource, user, code, latency, and the error with its cause) at
	// Info, and server errors at Error. Nil logs nothing.
	Logger *slog.Logger
	// Observer receives the server's measurements; nil measures nothing.
	Observer Observer
	// Checks are the health checks of /livez, /readyz and /healthz, after
	// "ping"; ReadyChecks are /readyz's alone (before "shutdown", which
	// fails once Shutdown is called).
	Checks, ReadyChecks []Check
	// Metrics, when set, serves /metrics (such as the metrics module's
	// handler).
	Metrics http.Handler
}

// nonResourceMux is implemented by a handler that serves non-resource
// paths itself after authorizing them (registry.Registry): the server
// adds its health endpoints and /metrics there, so the authorizer
// decides who reads them, as kube-apiserver's does.
type nonResourceMux interface {
	HandleNonResource(path string, h http.Handler)
}

// authenticator is implemented by a handler that can tell who sends a
// request without serving it (registry.Registry's Authenticate): the
// server then spares system:masters from the in-flight limit, as
// kube-apiserver does.
type authenticator interface {
	Authenticate(req *http.Request) (*request.User, error)
}

// Server serves an http.Handler (a registry.Registry, usually) as
// kube-apiserver serves its API: see the package documentation. It is
// safe for concurrent use.
type Server struct {
	opts    Options
	log     *slog.Logger
	observe Observer
	handler http.Handler
	http    *http.Server
	certs   *certSource // nil without TLS
	ca      []byte
	limit   *inflight
	authn   authenticator // nil when the handler is not one

	shutdown atomic.Bool        // Shutdown was called: /readyz fails
	drain    context.Context    // ends when long-running requests must end
	endDrain context.CancelFunc // ends drain
}

// New returns a Server for h; it loads or makes the serving certificate.
func New(h http.Handler, opts Options) (*Server, error) {
	opts.Limits.setDefaults()
	s := &Server{opts: opts, log: opts.Logger, observe: opts.Observer}
	s.drain, s.endDrain = context.WithCancel(context.Background())
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.observe == nil {
		s.observe = noObserver{}
	}
	if !opts.TLS.Disabled {
		var err error
		if s.certs, s.ca, err = newCertSource(opts.TLS, s.log); err != nil {
			return nil, err
		}
	}
	s.limit = newInflight(opts.Limits, s.observe)
	s.authn, _ = h.(authenticator)
	live := append([]Check{Ping}, opts.Checks...)
	ready := append(append(append([]Check{}, live...), opts.ReadyChecks...), Check{Name: "shutdown", Check: func(context.Context) error {
		if s.shutdown.Load() {
			return errShuttingDown
		}
		return nil
	}})
	extra := map[string]http.Handler{
		"/livez": &health{name: "livez", checks: live, s: s}, "/healthz": &health{name: "healthz", checks: live, s: s},
		"/readyz": &health{name: "readyz", checks: ready, s: s},
	}
	if opts.Metrics != nil {
		extra["/metrics"] = opts.Metrics
	}
	if mux, ok := h.(nonResourceMux); ok {
		for p, eh := range extra {
			mux.HandleNonResource(p, eh)
		}
	} else {
		inner := h
		m := http.NewServeMux()
		m.Handle("/", inner)
		for p, eh := range extra {
			m.Handle(p, eh)
			m.Handle(p+"/", eh)
		}
		h = m
	}
	s.handler = s.filters(h)
	l := opts.Limits
	s.http = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          log.New(&errorLog{s.log}, "", 0),
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:      100,       // kube's
			MaxReceiveBufferPerStream: 256 << 10, // kube's: the 99th percentile of a resource's body
			MaxReadFrameSize:          256 << 10,
		},
	}
	if s.certs != nil {
		s.http.TLSConfig = &tls.Config{
			GetCertificate: s.certs.get,
			// The handler (the registry's authenticator) verifies client
			// certificates itself, against its own CAs.
			ClientAuth: tls.RequestClientCert,
			MinVersion: tls.VersionTLS12,
			NextProtos: []string{"h2", "http/1.1"},
		}
	}
	return s, nil
}

// CertificateAuthority is the PEM of the CA that signed the self-signed
// serving certificate (for a kubeconfig's certificate-authority-data), or
// nil when the certificate came from files.
func (s *Server) CertificateAuthority() []byte { return s.ca }

// Handler is h behind the server's filters, for a program that runs its
// own http.Server (or httptest's).
func (s *Server) Handler() http.Handler { return s.handler }

// TLSConfig is the server's TLS configuration (nil without TLS), for a
// program that runs its own listener.
func (s *Server) TLSConfig() *tls.Config { return s.http.TLSConfig }

// Serve accepts connections on ln until Shutdown; it returns nil after a
// Shutdown, or the error that stopped it.
func (s *Server) Serve(ln net.Listener) error {
	var err error
	if s.certs != nil {
		err = s.http.ServeTLS(ln, "", "")
	} else {
		err = s.http.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops the server gracefully, as kube-apiserver does: /readyz
// fails at once; after Options.ShutdownDelay the listeners close, every
// long-running request (a watch) ends cleanly, so its client re-watches
// (on another server behind the same load balancer), and the requests in
// flight finish. If ctx ends first, the connections left are closed and
// ctx's error returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdown.Store(true)
	s.log.Info("shutting down", "delay", s.opts.ShutdownDelay)
	if d := s.opts.ShutdownDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	done := make(chan error, 1)
	go func() { done <- s.http.Shutdown(ctx) }()
	s.endDrain()
	err := <-done
	if err != nil {
		s.http.Close()
	}
	return err
}

// filters are the stages every request takes before h, outermost first:
// its Info (request.Parse, as the registry reads it), the log line and
// metrics when it ends; then, for a long-running request, an end at
// Shutdown; for any other, the in-flight limit and the deadline.
func (s *Server) filters(h http.Handler) http.Handler {
	l := s.opts.Limits
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		info, err := request.Parse(req.Method, req.URL)
		if err != nil {
			info = &request.Info{Path: req.URL.Path, Verb: strings.ToLower(req.Method)} // the handler answers its 404
		}
		rec := &request.Record{}
		req = req.WithContext(request.WithRecord(req.Context(), rec))
		rw := &recorder{ResponseWriter: w}
		m := metric(req, info)
		long := l.LongRunning(info)
		defer func() {
			m.Duration = time.Since(start)
			m.Code = rw.code
			if m.Code == 0 {
				m.Code = http.StatusOK
			}
			s.observe.Request(m)
			s.logRequest(req, info, rec, m, rw.bytes)
		}()
		if long {
			s.observe.LongRunning(m, 1)
			defer s.observe.LongRunning(m, -1)
			ctx, cancel := context.WithCancel(req.Context())
			defer cancel()
			defer context.AfterFunc(s.drain, cancel)()
			h.ServeHTTP(&deadlineWriter{ResponseWriter: rw, rc: http.NewResponseController(rw), timeout: l.WriteTimeout}, req.WithContext(ctx))
			return
		}
		// A response that is not long-running is written within its
		// deadline, or cut off WriteTimeout after it.
		release, ok := s.limit.acquire(info.Verb)
		if !ok && !s.privileged(req) {
			writeStatus(rw, http.StatusTooManyRequests, "TooManyRequests", "Too many requests, please try again later.", 1)
			return
		}
		if ok {
			defer release()
		}
		d, err := timeoutFor(req, l.RequestTimeout)
		if err != nil {
			writeStatus(rw, http.StatusBadRequest, "BadRequest", "invalid timeout specified in the request URL - "+err.Error(), 0)
			return
		}
		http.NewResponseController(rw).SetWriteDeadline(start.Add(d + l.WriteTimeout))
		withTimeout(rw, req, h, d)
	})
}

// privileged tells a request of a member of system:masters, which kube
// serves over the in-flight limit. It authenticates only requests about
// to be refused.
func (s *Server) privileged(req *http.Request) bool {
	if s.authn == nil {
		return false
	}
	u, err := s.authn.Authenticate(req)
	return err == nil && u.InGroup(request.SystemPrivileged)
}

// logRequest writes a request's line: kube's httplog fields.
func (s *Server) logRequest(req *http.Request, info *request.Info, rec *request.Record, m RequestMetric, bytes int64) {
	level := slog.LevelInfo
	if m.Code >= 500 {
		level = slog.LevelError
	}
	if !s.log.Enabled(req.Context(), level) {
		return
	}
	attrs := []slog.Attr{slog.String("verb", info.Verb)}
	if info.IsResourceRequest {
		res := info.Resource
		if info.Subresource != "" {
			res += "/" + info.Subresource
		}
		if info.APIGroup != "" {
			res += "." + info.APIGroup
		}
		attrs = append(attrs, slog.String("resource", res))
		if info.Namespace != "" {
			attrs = append(attrs, slog.String("namespace", info.Namespace))
		}
		if info.Name != "" {
			attrs = append(attrs, slog.String("name", info.Name))
		}
	} else {
		attrs = append(attrs, slog.String("path", info.Path))
	}
	if u := rec.User(); u != nil {
		attrs = append(attrs, slog.String("user", u.Name))
	}
	attrs = append(attrs, slog.Int("code", m.Code), slog.Duration("latency", m.Duration), slog.Int64("bytes", bytes),
		slog.String("client", req.RemoteAddr), slog.String("proto", req.Proto))
	if err := rec.Err(); err != nil {
		attrs = append(attrs, slog.String("err", err.Error()))
	}
	s.log.LogAttrs(req.Context(), level, "request", attrs...)
}

// errorLog passes net/http's own errors (a failed TLS handshake, say) to
// the logger, at Debug: they are the clients' doing.
type errorLog struct{ log *slog.Logger }

func (e *errorLog) Write(b []byte) (int, error) {
	e.log.Debug("http: " + string(trimNewline(b)))
	return len(b), nil
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}
