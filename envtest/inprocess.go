package envtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// inProcessHost is the URL of an in-process API server: clients need one,
// the transport ignores it (.invalid is never resolved, RFC 2606).
const inProcessHost = "http://kapi-envtest.invalid"

// ErrStopped is the in-process transport's error for a request made while
// the API server is not running.
var ErrStopped = errors.New("kapi/envtest: the API server is not running")

// inProcess is an http.RoundTripper that serves each request by calling
// the API server's handler in a goroutine of its own, no socket between:
// the response's headers return as soon as the handler writes them and
// its body streams through a pipe, so watches work as over a connection.
//
// Each request's handler runs with a context that ends when the client's
// request context ends, when the client closes the body, or when the
// server stops (close); close waits for every handler to return.
type inProcess struct {
	state atomic.Pointer[inProcessState] // nil while stopped
}

type inProcessState struct {
	h        http.Handler
	ctx      context.Context // ends at close
	cancel   context.CancelFunc
	handlers sync.WaitGroup
}

func (t *inProcess) open(h http.Handler) {
	ctx, cancel := context.WithCancel(context.Background())
	t.state.Store(&inProcessState{h: h, ctx: ctx, cancel: cancel})
}

// close ends every request in flight and waits for their handlers.
func (t *inProcess) close() {
	s := t.state.Swap(nil)
	if s == nil {
		return
	}
	s.cancel()
	s.handlers.Wait()
}

func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	s := t.state.Load()
	if s == nil || s.ctx.Err() != nil {
		closeBody(req)
		return nil, ErrStopped
	}
	ctx, cancel := context.WithCancel(req.Context())
	stopWithServer := context.AfterFunc(s.ctx, cancel)
	sreq := req.Clone(ctx)
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "127.0.0.1:0"
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	pr, pw := io.Pipe()
	rw := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	// The client gone or the server stopping drops the connection: the
	// handler's writes fail rather than wait for a reader.
	hangUp := func() { pr.CloseWithError(ErrStopped) }
	stopHangUpServer := context.AfterFunc(s.ctx, hangUp)
	stopHangUpClient := context.AfterFunc(req.Context(), hangUp)
	s.handlers.Add(1)
	go func() { // ends when the handler returns: at the latest when ctx ends
		defer s.handlers.Done()
		defer stopHangUpClient()
		defer stopHangUpServer()
		defer stopWithServer()
		defer cancel()
		defer func() {
			if p := recover(); p != nil {
				err := io.ErrUnexpectedEOF // http.ErrAbortHandler: the connection broke
				if p != http.ErrAbortHandler {
					err = fmt.Errorf("kapi/envtest: the API server's handler panicked: %v", p)
				}
				rw.finish(err)
				return
			}
			rw.finish(nil)
		}()
		s.h.ServeHTTP(rw, sreq)
	}()
	<-rw.ready
	if err := req.Context().Err(); err != nil {
		cancel()
		pr.Close()
		return nil, err
	}
	if rw.err != nil && rw.code == 0 {
		cancel()
		pr.Close()
		return nil, rw.err
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", rw.code, http.StatusText(rw.code)),
		StatusCode:    rw.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rw.sent,
		Body:          &pipeBody{PipeReader: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// pipeWriter is the handler's http.ResponseWriter: the headers are sent
// (ready closed) at WriteHeader, the first Write or the handler's return;
// the body goes through the pipe, each Write waiting for the client's read.
type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
	ready  chan struct{}
	once   sync.Once

	// Set before ready is closed.
	code int
	sent http.Header
	err  error
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if code < 200 { // informational: nothing to send here
		return
	}
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush does nothing: each Write reaches the client as it reads.
func (w *pipeWriter) Flush() {}

// finish ends the response: headers sent if not yet, the body closed
// (with err, the client's read fails with it).
func (w *pipeWriter) finish(err error) {
	w.once.Do(func() {
		w.code, w.sent, w.err = http.StatusOK, w.header.Clone(), err
		if err != nil {
			w.code = 0
		}
		close(w.ready)
	})
	w.pw.CloseWithError(err) // nil: io.EOF
}

// pipeBody is the response body; closing it ends the handler's request.
type pipeBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *pipeBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}
