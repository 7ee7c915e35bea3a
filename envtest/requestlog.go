package envtest

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/registry/request"
)

// Request is one request the API server served, as its log records it.
type Request struct {
	// Start is when the request arrived; Duration how long it took to
	// answer (a watch: how long it was open).
	Start    time.Time
	Duration time.Duration
	// Verb, Group, Version, Resource, Subresource, Namespace and Name are
	// the request's, as kube's request info reads it; Path is the URL
	// path (the only field besides Verb for a non-resource request).
	Verb, Group, Version, Resource, Subresource, Namespace, Name string
	Path                                                         string
	// User is the authenticated user's name ("" if the request was not
	// authenticated); UserAgent the client's.
	User, UserAgent string
	// Code is the HTTP status answered; 0 while the request is in
	// flight (an open watch), StatusClientClosed when the client went
	// away before an answer (its timeout). It is recorded when the
	// handler returns: in-process before the client reads the end of the
	// response, over TLS possibly a moment after.
	Code int
	// DryRun is true for a write with dryRun=All.
	DryRun bool
	// Fault names the injected fault that took the request, "" if none.
	Fault string
}

// StatusClientClosed is the request log's code for a request whose
// client went away before it was answered (nginx's 499).
const StatusClientClosed = 499

// IsWrite tells a request that asks to change state: create, update,
// patch, delete, deletecollection (dry run or not).
func (r Request) IsWrite() bool {
	switch r.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// String is the request on one line: verb, resource, namespace/name, user,
// code, duration and fault.
func (r Request) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s", r.Verb)
	if r.Resource == "" {
		b.WriteString(" " + r.Path)
	} else {
		b.WriteString(" " + r.Resource)
		if r.Subresource != "" {
			b.WriteString("/" + r.Subresource)
		}
		if r.Group != "" {
			b.WriteString("." + r.Group)
		}
		switch {
		case r.Namespace != "" && r.Name != "":
			b.WriteString(" " + r.Namespace + "/" + r.Name)
		case r.Namespace != "":
			b.WriteString(" " + r.Namespace + "/")
		case r.Name != "":
			b.WriteString(" " + r.Name)
		}
	}
	if r.DryRun {
		b.WriteString(" (dry run)")
	}
	code := "open"
	if r.Code != 0 {
		code = fmt.Sprint(r.Code)
	}
	fmt.Fprintf(&b, " user=%q %s %s", r.User, code, r.Duration.Round(time.Microsecond))
	if r.Fault != "" {
		b.WriteString(" fault=" + r.Fault)
	}
	return b.String()
}

// requestLog is the log of one API server's requests, in arrival order.
// It is safe for concurrent use; entries are written under mu only.
type requestLog struct {
	mu      sync.Mutex
	entries []*Request
}

func (l *requestLog) begin(r *Request) {
	l.mu.Lock()
	l.entries = append(l.entries, r)
	l.mu.Unlock()
}

func (l *requestLog) end(r *Request, code int, d time.Duration, user string) {
	l.mu.Lock()
	r.Code, r.Duration = code, d
	if user != "" {
		r.User = user
	}
	l.mu.Unlock()
}

func (l *requestLog) setFault(r *Request, fault string) {
	l.mu.Lock()
	r.Fault = fault
	l.mu.Unlock()
}

// snapshot copies the entries.
func (l *requestLog) snapshot() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Request, len(l.entries))
	for i, r := range l.entries {
		out[i] = *r
	}
	return out
}

func (l *requestLog) reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}

// front is what serves every request before the registry: it logs the
// request and applies the faults in force.
type front struct {
	next   http.Handler
	tokens *TokenAuthn
	faults *faults
	log    *requestLog
}

func (f *front) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	info, err := request.Parse(req.Method, req.URL)
	if err != nil {
		info = &request.Info{Path: req.URL.Path, Verb: strings.ToLower(req.Method)} // the registry answers its 404
	}
	user := f.user(req)
	rec := &request.Record{}
	req = req.WithContext(request.WithRecord(req.Context(), rec))
	e := &Request{
		Start: start, Verb: info.Verb, Group: info.APIGroup, Version: info.APIVersion,
		Resource: info.Resource, Subresource: info.Subresource, Namespace: info.Namespace,
		Name: info.Name, Path: info.Path, User: user, UserAgent: req.UserAgent(),
		DryRun: req.URL.Query().Get("dryRun") == "All",
	}
	f.log.begin(e)
	cw := &codeWriter{ResponseWriter: w}
	defer func() {
		name := user
		if u := rec.User(); u != nil {
			name = u.Name
		}
		code := cw.code
		switch {
		case code == 0 && req.Context().Err() != nil:
			code = StatusClientClosed
		case code == 0:
			code = http.StatusOK
		}
		f.log.end(e, code, time.Since(start), name)
	}()
	in := f.faults.take(info, user)
	if in == nil {
		f.next.ServeHTTP(cw, req)
		return
	}
	f.log.setFault(e, in.String())
	in.serve(cw, req, info, f.next)
}

// user is the name the request's bearer token stands for, or its client
// certificate's common name, so a fault can match it before the registry
// authenticates (and verifies); "" for another credential.
func (f *front) user(req *http.Request) string {
	if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
		return req.TLS.PeerCertificates[0].Subject.CommonName
	}
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || f.tokens == nil {
		return ""
	}
	u, ok, _ := f.tokens.AuthenticateToken(req.Context(), strings.TrimSpace(token))
	if !ok {
		return ""
	}
	return u.Name
}

// codeWriter records the status a handler answers; Unwrap gives
// http.ResponseController (a watch's flushes) the writer beneath.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (w *codeWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *codeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TB is what LogRequestsOnFailure needs of a test: *testing.T, *testing.B
// and Ginkgo's GinkgoT() have it.
type TB interface {
	Cleanup(func())
	Failed() bool
	Logf(format string, args ...any)
}
