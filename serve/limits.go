package serve

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/registry/request"
)

// Limits bound what clients may hold, with kube-apiserver's flags' names
// and defaults.
type Limits struct {
	// MaxRequestsInFlight is --max-requests-inflight: how many read-only
	// requests (get, list; non-resource requests too) are served at once;
	// more answer 429 with Retry-After: 1. Zero is kube's 400; negative
	// is no limit.
	MaxRequestsInFlight int
	// MaxMutatingRequestsInFlight is --max-mutating-requests-inflight,
	// the same for every other verb. Zero is kube's 200; negative is no
	// limit.
	MaxMutatingRequestsInFlight int
	// RequestTimeout is --request-timeout: how long a request that is not
	// long-running may take (default 60 s); a shorter ?timeout= in its
	// query wins. After it, the client gets kube's 504 Status.
	RequestTimeout time.Duration
	// LongRunning tells the requests that neither count against the
	// in-flight limits nor time out: by default kube-apiserver's, a
	// watch, a proxy, or the attach, exec, log, portforward and proxy
	// subresources.
	LongRunning func(*request.Info) bool
	// ReadHeaderTimeout bounds reading a request's headers (default 32 s,
	// as kube), ReadTimeout reading its body (default RequestTimeout):
	// a client that stalls is cut off.
	ReadHeaderTimeout, ReadTimeout time.Duration
	// WriteTimeout bounds each write of a long-running response (a
	// watch's), and the writes of any other past its deadline (default
	// 60 s): a client that stops reading is cut off.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request for so
	// long (default 90 s, as kube).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (default 1 MiB, as kube);
	// more is refused with 431.
	MaxHeaderBytes int
}

func (l *Limits) setDefaults() {
	if l.MaxRequestsInFlight == 0 {
		l.MaxRequestsInFlight = 400
	}
	if l.MaxMutatingRequestsInFlight == 0 {
		l.MaxMutatingRequestsInFlight = 200
	}
	if l.RequestTimeout <= 0 {
		l.RequestTimeout = 60 * time.Second
	}
	if l.LongRunning == nil {
		l.LongRunning = LongRunning
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = 32 * time.Second
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = l.RequestTimeout
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = 60 * time.Second
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = 90 * time.Second
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = 1 << 20
	}
}

// LongRunning is kube-apiserver's long-running check: watch and proxy
// requests, and the attach, exec, log, portforward and proxy
// subresources.
func LongRunning(info *request.Info) bool {
	switch info.Verb {
	case "watch", "proxy":
		return true
	}
	if info.IsResourceRequest {
		switch info.Subresource {
		case "attach", "exec", "log", "portforward", "proxy":
			return true
		}
	}
	return false
}

// readOnly tells the verbs kube counts against --max-requests-inflight.
func readOnly(verb string) bool {
	return verb == "get" || verb == "list" || verb == "watch"
}

// inflight is the max-in-flight filter: a semaphore per kind of request
// (kube's WithMaxInFlightLimit). A request over the limit is refused at
// once, never queued.
type inflight struct {
	readOnly, mutating chan struct{} // nil: no limit
	observe            Observer
}

func newInflight(l Limits, o Observer) *inflight {
	f := &inflight{observe: o}
	if l.MaxRequestsInFlight > 0 {
		f.readOnly = make(chan struct{}, l.MaxRequestsInFlight)
	}
	if l.MaxMutatingRequestsInFlight > 0 {
		f.mutating = make(chan struct{}, l.MaxMutatingRequestsInFlight)
	}
	return f
}

// acquire takes a slot for a request with verb, or reports false when
// every slot is taken; release gives it back.
func (f *inflight) acquire(verb string) (release func(), ok bool) {
	c, kind := f.mutating, "mutating"
	if readOnly(verb) {
		c, kind = f.readOnly, "readOnly"
	}
	if c == nil {
		return func() {}, true
	}
	select {
	case c <- struct{}{}:
		f.observe.InFlight(kind, len(c))
		return func() {
			<-c
			f.observe.InFlight(kind, len(c))
		}, true
	default:
		return nil, false
	}
}

// timeoutFor is a request's deadline: RequestTimeout, or a shorter
// positive ?timeout= (kube's WithRequestDeadline). A malformed one is an
// error the client must fix.
func timeoutFor(req *http.Request, max time.Duration) (time.Duration, error) {
	v := req.URL.Query().Get("timeout")
	if v == "" {
		return max, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, err
	}
	if d > 0 && d < max {
		return d, nil
	}
	return max, nil
}

// withTimeout serves req with h under a deadline, as kube's timeout
// filter: h runs on its own goroutine with a context that ends at the
// deadline; if h has not answered by then the client gets kube's 504
// Status and what h writes later is dropped. If h had already started
// its response there is no Status to send, and the response is aborted
// (the HTTP/1.1 connection closed, the HTTP/2 stream reset).
func withTimeout(w http.ResponseWriter, req *http.Request, h http.Handler, d time.Duration) {
	ctx, cancel := context.WithTimeout(req.Context(), d)
	defer cancel()
	tw := &timeoutWriter{w: w, header: w.Header().Clone()}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		h.ServeHTTP(tw, req.WithContext(ctx))
	}()
	select {
	case p := <-done:
		if p != nil {
			panic(p)
		}
	case <-ctx.Done():
		if !tw.timeout() {
			panic(http.ErrAbortHandler)
		}
	}
}

// timeoutWriter passes a handler's response on until its deadline, then
// drops it. Its handler's headers are its own until the first write.
type timeoutWriter struct {
	w      http.ResponseWriter
	mu     sync.Mutex
	header http.Header // the handler's, copied to w's on its first write
	wrote  bool        // w's headers are sent
	ended  bool        // timed out: writes are dropped
}

func (tw *timeoutWriter) Header() http.Header { return tw.header }

func (tw *timeoutWriter) writeHeaderLocked(code int) {
	if !tw.wrote {
		tw.wrote = true
		dst := tw.w.Header()
		for k, v := range tw.header {
			dst[k] = v
		}
		tw.w.WriteHeader(code)
	}
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.ended {
		tw.writeHeaderLocked(code)
	}
}

func (tw *timeoutWriter) Write(b []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.ended {
		return 0, http.ErrHandlerTimeout
	}
	tw.writeHeaderLocked(http.StatusOK)
	return tw.w.Write(b)
}

func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.ended {
		tw.writeHeaderLocked(http.StatusOK)
		http.NewResponseController(tw.w).Flush()
	}
}

// timeout ends the response with kube's 504 Status, or reports false when
// the handler's response had already started.
func (tw *timeoutWriter) timeout() bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.ended = true
	if tw.wrote {
		return false
	}
	tw.wrote = true
	writeStatus(tw.w, http.StatusGatewayTimeout, "Timeout", "Timeout: request did not complete within the allotted timeout", 0)
	return true
}

// deadlineWriter bounds each write of a long-running response: a write
// deadline WriteTimeout ahead is set before it and cleared after it, so a
// client that stops reading is cut off, while a watch that is idle for
// longer (no write) is not.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	defer d.rc.SetWriteDeadline(time.Time{})
	return d.ResponseWriter.Write(b)
}

func (d *deadlineWriter) Flush() {
	d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	defer d.rc.SetWriteDeadline(time.Time{})
	d.rc.Flush()
}

func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
