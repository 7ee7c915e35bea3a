package inproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
)

// Transport is an http.RoundTripper that serves requests with a handler,
// in-process (see the package comment). It is safe for concurrent use.
type Transport struct {
	h   http.Handler
	log *slog.Logger
}

var (
	// errBodyClosed is what the handler's writes return once the caller
	// closed the response body, and reads after Close.
	errBodyClosed = errors.New("registry: read on closed response body")
	// errRequestBodyClosed is what reads of the request body return after
	// the handler returned, as net/http's server does.
	errRequestBodyClosed = errors.New("registry: read on closed request body")
)

// inProcessAddr is the RemoteAddr of in-process requests: a loopback
// host:port, so that code splitting it (loggers, audit) works.
const inProcessAddr = "127.0.0.1:0"

// New returns a Transport that serves requests with h; log receives the
// panics of h that a caller cannot be told about.
func New(h http.Handler, log *slog.Logger) *Transport {
	return &Transport{h: h, log: log}
}

// RoundTrip serves req with the handler and returns once the handler has
// written its header; the body streams as the handler writes it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("registry: Transport: nil Request.URL")
	}
	u, err := url.ParseRequestURI(req.URL.RequestURI())
	if err != nil {
		closeBody(req)
		return nil, fmt.Errorf("registry: Transport: %w", err)
	}
	ctx, cancel := context.WithCancel(req.Context())
	pr, pw := io.Pipe()
	w := &pipeWriter{
		req: req, header: http.Header{}, pw: pw,
		ready: make(chan struct{}), gone: make(chan struct{}),
	}
	// The caller's context ending drops the connection: the handler's
	// writes fail and reads of the body return the context's error.
	stop := context.AfterFunc(req.Context(), func() {
		w.hangUp(pr, context.Cause(req.Context()))
	})
	w.body = &responseBody{pr: pr, closed: func() {
		w.hangUp(pr, errBodyClosed)
		cancel()
		stop()
	}}
	sreq := serverRequest(ctx, req, u)
	go t.serve(w, sreq, cancel)
	select {
	case <-w.ready:
	case <-req.Context().Done():
		// The handler sees its context end; the goroutine cleans up.
		return nil, context.Cause(req.Context())
	}
	if w.err != nil {
		stop()
		return nil, w.err
	}
	return w.resp, nil
}

// serve runs the handler and finishes the response when it returns.
func (t *Transport) serve(w *pipeWriter, req *http.Request, cancel context.CancelFunc) {
	defer cancel() // as net/http's server: the request context ends with the handler
	defer req.Body.Close()
	defer func() {
		p := recover()
		if p == nil {
			w.finish(nil)
			return
		}
		err := fmt.Errorf("registry: Transport: handler aborted the response to %s %s", req.Method, req.URL.Path)
		if p != http.ErrAbortHandler {
			t.log.Error("panic serving request in-process", "method", req.Method, "path", req.URL.Path, "panic", p)
			err = fmt.Errorf("registry: Transport: panic serving %s %s: %v", req.Method, req.URL.Path, p)
		}
		w.finish(err)
	}()
	t.h.ServeHTTP(w, req)
}

// serverRequest is req as net/http's server would hand it to a handler:
// the URL parsed from the request URI, a copy of the header without Host,
// a non-nil body, ContentLength -1 when unknown, and ctx.
func serverRequest(ctx context.Context, req *http.Request, u *url.URL) *http.Request {
	s := &http.Request{
		Method:     req.Method,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     req.Header.Clone(),
		Host:       req.Host,
		RemoteAddr: inProcessAddr,
		RequestURI: u.RequestURI(),
	}
	if s.Method == "" {
		s.Method = http.MethodGet
	}
	if s.Header == nil {
		s.Header = http.Header{}
	}
	s.Header.Del("Host")
	if s.Host == "" {
		s.Host = req.URL.Host
	}
	if req.Body == nil || req.Body == http.NoBody {
		s.Body = http.NoBody
	} else {
		s.Body = &requestBody{rc: req.Body}
		s.ContentLength = req.ContentLength
		if s.ContentLength <= 0 { // a client's 0 with a body means unknown
			s.ContentLength = -1
			s.TransferEncoding = []string{"chunked"}
		}
	}
	return s.WithContext(ctx)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// requestBody is the handler's view of the caller's request body: closed
// (once) when the handler returns, after which reads fail.
type requestBody struct {
	rc     io.ReadCloser
	closed atomic.Bool
	once   sync.Once
}

func (b *requestBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, errRequestBodyClosed
	}
	return b.rc.Read(p)
}

func (b *requestBody) Close() error {
	var err error
	b.once.Do(func() {
		b.closed.Store(true)
		err = b.rc.Close()
	})
	return err
}

// pipeWriter is the http.ResponseWriter (and http.Flusher) of one
// in-process request. WriteHeader, Write and Flush are called by the
// handler's goroutine only (as for any ResponseWriter); hangUp may be called
// from any goroutine. resp and err are set before ready is closed and read
// after.
type pipeWriter struct {
	req    *http.Request // the caller's, for http.Response.Request
	header http.Header   // the handler's; the response has a copy
	pw     *io.PipeWriter
	body   *responseBody

	wroteHeader bool
	bodyless    bool // HEAD, 204 or 304: writes are discarded or refused
	noBody      bool // 204 or 304: writes are refused
	resp        *http.Response
	err         error         // a panic before the header
	ready       chan struct{} // closed when resp or err is set
	gone        chan struct{} // closed when the reader hung up
	goneOnce    sync.Once
}

func (w *pipeWriter) Header() http.Header { return w.header }

// WriteHeader sends the response to RoundTrip with a snapshot of the
// header. 1xx codes other than 101 are dropped (the in-process client has
// no use for them); a second call is ignored.
func (w *pipeWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.wroteHeader || (code < 200 && code != http.StatusSwitchingProtocols) {
		return
	}
	w.wroteHeader = true
	h := w.header.Clone()
	cl := int64(-1)
	if v := h.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			cl = n
		}
	}
	w.noBody = code == http.StatusNoContent || code == http.StatusNotModified
	w.bodyless = w.noBody || w.req.Method == http.MethodHead
	if w.noBody {
		cl = 0
	}
	w.resp = &http.Response{
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          w.body,
		ContentLength: cl,
		Request:       w.req,
	}
	if w.bodyless {
		w.pw.Close() // the reader sees EOF at once
	}
	close(w.ready)
}

// Write sends b to the reader, blocking until it has read all of it or
// hung up. The first Write sends the header, with a sniffed Content-Type
// if the handler set none (as net/http's server does).
func (w *pipeWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		if _, ok := w.header["Content-Type"]; !ok && w.header.Get("Transfer-Encoding") == "" && len(b) > 0 {
			w.header.Set("Content-Type", http.DetectContentType(b))
		}
		w.WriteHeader(http.StatusOK)
	}
	switch {
	case w.noBody:
		return 0, http.ErrBodyNotAllowed
	case w.bodyless:
		return len(b), nil
	case len(b) == 0: // an empty pipe write would wait for a reader
		return 0, nil
	}
	return w.pw.Write(b)
}

// Flush sends the header if it was not; writes are never buffered.
func (w *pipeWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
}

// FlushError is Flush for http.ResponseController: it fails once the
// reader hung up, so that a streaming handler stops.
func (w *pipeWriter) FlushError() error {
	w.Flush()
	select {
	case <-w.gone:
		return errBodyClosed
	default:
		return nil
	}
}

// hangUp closes the reading end with err: the handler's writes fail from
// now on.
func (w *pipeWriter) hangUp(pr *io.PipeReader, err error) {
	w.goneOnce.Do(func() {
		pr.CloseWithError(err)
		close(w.gone)
	})
}

// finish ends the response when the handler returned, with err if it
// panicked.
func (w *pipeWriter) finish(err error) {
	if err != nil {
		w.pw.CloseWithError(err)
		if !w.wroteHeader {
			w.wroteHeader = true
			w.err = err
			close(w.ready)
		}
		return
	}
	if !w.wroteHeader {
		if w.header.Get("Content-Length") == "" && w.header.Get("Transfer-Encoding") == "" {
			w.header.Set("Content-Length", "0")
		}
		w.WriteHeader(http.StatusOK)
	}
	w.pw.Close()
}

// responseBody is the response's Body: reads come from the pipe; Close
// hangs up, which ends the handler's context.
type responseBody struct {
	pr     *io.PipeReader
	once   sync.Once
	closed func()
}

func (b *responseBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *responseBody) Close() error {
	b.once.Do(b.closed)
	return nil
}
