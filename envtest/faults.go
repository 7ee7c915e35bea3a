package envtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/registry/request"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Fault is a failure the API server answers chosen requests with, so a
// test can drive a controller down its retry, relist and timeout paths
// against real semantics. The server's front (outside the registry)
// applies it: the registry itself never knows.
//
// Which requests: every non-empty match field must equal the request's,
// as kube's request info reads it (Verb is get, list, watch, create,
// update, patch, delete or deletecollection; Group is "" for the core
// group; Resource is the plural; User is the authenticated user's name).
// A fault with ExpireWatch or DropWatchAfter matches watches only.
//
// What it does, in this order: Delay holds the request (a slow server);
// then ExpireWatch, DropWatchAfter or Code answers it; with none of them
// the request is served as usual after the delay.
type Fault struct {
	Verb, Group, Resource, Subresource, Namespace, Name, User string

	// Count is how many matching requests the fault takes; 0 is every
	// one until Remove.
	Count int

	// Delay holds each matching request this long before it is served or
	// answered; the client's cancel (its timeout) ends the wait, and the
	// request is then not served.
	Delay time.Duration

	// Code answers with this HTTP status and kube's Status for it:
	// 409 Conflict (kube's "the object has been modified" message),
	// 429 TooManyRequests, 500 InternalError, 503 ServiceUnavailable,
	// 504 Timeout; another 4xx or 5xx gets the generic Status of its code.
	Code int
	// RetryAfter, with Code, sets the Retry-After header and the
	// Status's retryAfterSeconds (whole seconds, at least 1). client-go
	// retries a 429 or 5xx carrying it by itself, up to 10 times.
	RetryAfter time.Duration
	// Served, with Code, serves the request first — a write happens — and
	// answers Code instead of its response: the unknown outcome of a write
	// that timed out (kube's 504).
	Served bool

	// ExpireWatch answers a watch 410 Expired ("too old resource
	// version"), as a server whose history was compacted: an informer
	// relists.
	ExpireWatch bool
	// DropWatchAfter serves a watch and breaks its connection this long
	// after it started (no clean end of the stream); an informer watches
	// again from the last resourceVersion it saw.
	DropWatchAfter time.Duration

	// StaleAt serves a get or a list as of this older resourceVersion, as
	// a lagging cache would: a list exactly at it (resourceVersionMatch
	// Exact), a get the object as it was then — 404 if it did not exist
	// yet — in JSON. A fault with StaleAt matches gets and lists of a
	// resource (no subresource) only. An expired resourceVersion is
	// answered 410, as the server answers it.
	StaleAt string
}

// ErrInvalidFault is Inject's error for a Fault that asks for nothing or
// for two answers at once.
var ErrInvalidFault = errors.New("kapi/envtest: invalid fault")

func (f Fault) validate() error {
	answers := 0
	for _, set := range []bool{f.Code != 0, f.ExpireWatch, f.DropWatchAfter > 0, f.StaleAt != ""} {
		if set {
			answers++
		}
	}
	switch {
	case answers > 1:
		return fmt.Errorf("%w: set one of Code, ExpireWatch, DropWatchAfter and StaleAt", ErrInvalidFault)
	case answers == 0 && f.Delay <= 0:
		return fmt.Errorf("%w: set Delay, Code, ExpireWatch, DropWatchAfter or StaleAt", ErrInvalidFault)
	case f.Code != 0 && (f.Code < 400 || f.Code > 599):
		return fmt.Errorf("%w: Code %d is not a 4xx or 5xx status", ErrInvalidFault, f.Code)
	case f.Count < 0 || f.Delay < 0 || f.RetryAfter < 0 || f.DropWatchAfter < 0:
		return fmt.Errorf("%w: Count, Delay, RetryAfter and DropWatchAfter may not be negative", ErrInvalidFault)
	case (f.RetryAfter > 0 || f.Served) && f.Code == 0:
		return fmt.Errorf("%w: RetryAfter and Served need a Code", ErrInvalidFault)
	case (f.ExpireWatch || f.DropWatchAfter > 0) && f.Verb != "" && f.Verb != "watch":
		return fmt.Errorf("%w: ExpireWatch and DropWatchAfter apply to watches; Verb is %q", ErrInvalidFault, f.Verb)
	case f.StaleAt != "" && ((f.Verb != "" && f.Verb != "get" && f.Verb != "list") || f.Subresource != ""):
		return fmt.Errorf("%w: StaleAt applies to gets and lists of a resource; Verb is %q, Subresource %q", ErrInvalidFault, f.Verb, f.Subresource)
	}
	return nil
}

// Injection is a Fault in force.
type Injection struct {
	Fault
	set  *faults
	hits int // guarded by set.mu
}

// Remove takes the fault out of force; requests it holds are unaffected.
func (in *Injection) Remove() { in.set.remove(in) }

// Hits is how many requests the fault took so far.
func (in *Injection) Hits() int {
	in.set.mu.Lock()
	defer in.set.mu.Unlock()
	return in.hits
}

// String names the fault, as the request log shows it.
func (in *Injection) String() string {
	switch f := in.Fault; {
	case f.ExpireWatch:
		return "expire-watch"
	case f.DropWatchAfter > 0:
		return "drop-watch after " + f.DropWatchAfter.String()
	case f.StaleAt != "":
		return "stale at " + f.StaleAt
	case f.Code != 0 && f.Served:
		return "served, answered " + strconv.Itoa(f.Code)
	case f.Code != 0:
		return strconv.Itoa(f.Code)
	}
	return "delay " + in.Delay.String()
}

// faults are the faults in force, first injected first matched. It is
// safe for concurrent use.
type faults struct {
	mu   sync.Mutex
	list []*Injection
}

func (s *faults) add(f Fault) (*Injection, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	in := &Injection{Fault: f, set: s}
	s.mu.Lock()
	s.list = append(s.list, in)
	s.mu.Unlock()
	return in, nil
}

func (s *faults) remove(in *Injection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.list {
		if x == in {
			s.list = append(s.list[:i:i], s.list[i+1:]...)
			return
		}
	}
}

// take returns the first fault matching the request and counts the hit;
// a fault whose Count is used up leaves the set.
func (s *faults) take(info *request.Info, user string) *Injection {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, in := range s.list {
		if !in.matches(info, user) {
			continue
		}
		in.hits++
		if in.Count > 0 && in.hits >= in.Count {
			s.list = append(s.list[:i:i], s.list[i+1:]...)
		}
		return in
	}
	return nil
}

func (f *Fault) matches(info *request.Info, user string) bool {
	eq := func(want, got string) bool { return want == "" || want == got }
	if (f.ExpireWatch || f.DropWatchAfter > 0) && info.Verb != "watch" {
		return false
	}
	if f.StaleAt != "" && ((info.Verb != "get" && info.Verb != "list") || info.Subresource != "" || !info.IsResourceRequest) {
		return false
	}
	if f.Group != "" || f.Resource != "" || f.Subresource != "" || f.Namespace != "" || f.Name != "" {
		if !info.IsResourceRequest {
			return false
		}
	}
	return eq(f.Verb, info.Verb) && eq(f.Group, info.APIGroup) && eq(f.Resource, info.Resource) &&
		eq(f.Subresource, info.Subresource) && eq(f.Namespace, info.Namespace) &&
		eq(f.Name, info.Name) && eq(f.User, user)
}

// serve answers req as the fault says; next serves it as usual.
func (in *Injection) serve(w http.ResponseWriter, req *http.Request, info *request.Info, next http.Handler) {
	if in.Delay > 0 {
		t := time.NewTimer(in.Delay)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return // the client is gone: nothing to answer
		}
	}
	switch {
	case in.ExpireWatch:
		writeFaultStatus(w, apierrors.NewResourceExpired("too old resource version: injected by kapi/envtest"))
	case in.DropWatchAfter > 0:
		ctx, cancel := context.WithTimeout(req.Context(), in.DropWatchAfter)
		defer cancel()
		next.ServeHTTP(w, req.WithContext(ctx))
		if req.Context().Err() == nil {
			// Break the connection (HTTP/2: reset the stream) rather than
			// end the response: the client sees its stream cut.
			panic(http.ErrAbortHandler)
		}
	case in.StaleAt != "" && info.Verb == "list":
		q := req.URL.Query()
		q.Set("resourceVersion", in.StaleAt)
		q.Set("resourceVersionMatch", "Exact")
		q.Del("continue")
		r := req.Clone(req.Context())
		r.URL.RawQuery = q.Encode()
		r.RequestURI = r.URL.RequestURI()
		next.ServeHTTP(w, r)
	case in.StaleAt != "":
		in.staleGet(w, req, info, next)
	case in.Code != 0:
		if in.Served && info.Verb != "watch" {
			next.ServeHTTP(httptest.NewRecorder(), req)
		}
		writeFaultStatus(w, in.status(info))
	default:
		next.ServeHTTP(w, req)
	}
}

// status is kube's Status for the fault's code.
func (in *Injection) status(info *request.Info) *apierrors.StatusError {
	gr := schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
	secs := 0
	if in.RetryAfter > 0 {
		secs = int(math.Ceil(in.RetryAfter.Seconds()))
	}
	var se *apierrors.StatusError
	switch in.Code {
	case http.StatusConflict:
		se = apierrors.NewConflict(gr, info.Name, errors.New(registryConflict))
	case http.StatusTooManyRequests:
		se = apierrors.NewTooManyRequests("Too many requests, please try again later.", secs)
	case http.StatusInternalServerError:
		se = apierrors.NewInternalError(errors.New("injected by kapi/envtest"))
	case http.StatusServiceUnavailable:
		se = apierrors.NewServiceUnavailable("the server is currently unable to handle the request (injected by kapi/envtest)")
	case http.StatusGatewayTimeout:
		se = apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", secs)
	default:
		se = apierrors.NewGenericServerResponse(in.Code, info.Verb, gr, info.Name, "injected by kapi/envtest", secs, true)
	}
	if secs > 0 {
		if se.ErrStatus.Details == nil {
			se.ErrStatus.Details = &metav1.StatusDetails{}
		}
		se.ErrStatus.Details.RetryAfterSeconds = int32(secs)
	}
	return se
}

// registryConflict is kube's message for an update at a stale
// resourceVersion (registry.OptimisticLockErrorMsg).
const registryConflict = "the object has been modified; please apply your changes to the latest version and try again"

// writeFaultStatus writes se as JSON, which every client reads whatever it
// asked for (kube answers errors in JSON to a protobuf client too when it
// cannot encode them otherwise).
func writeFaultStatus(w http.ResponseWriter, se *apierrors.StatusError) {
	s := se.ErrStatus
	s.Kind, s.APIVersion = "Status", "v1"
	b, _ := json.Marshal(s)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if s.Details != nil && s.Details.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(int(s.Details.RetryAfterSeconds)))
	}
	w.WriteHeader(int(s.Code))
	_, _ = w.Write(b)
}

// staleGet answers a get with the object as it was at StaleAt: a list of
// the collection at that resourceVersion, exactly, narrowed to the name,
// asked of the registry in JSON.
func (in *Injection) staleGet(w http.ResponseWriter, req *http.Request, info *request.Info, next http.Handler) {
	q := url.Values{}
	q.Set("resourceVersion", in.StaleAt)
	q.Set("resourceVersionMatch", "Exact")
	q.Set("fieldSelector", "metadata.name="+info.Name)
	r := req.Clone(req.Context())
	r.URL.Path = strings.TrimSuffix(req.URL.Path, "/"+info.Name)
	r.URL.RawPath = ""
	r.URL.RawQuery = q.Encode()
	r.RequestURI = r.URL.RequestURI()
	r.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		writeFaultStatus(w, apierrors.NewInternalError(fmt.Errorf("kapi/envtest: a stale read: %w", err)))
		return
	}
	if len(list.Items) == 0 {
		writeFaultStatus(w, apierrors.NewNotFound(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Name))
		return
	}
	obj := list.Items[0]
	if _, ok := obj["kind"]; !ok {
		obj["kind"] = strings.TrimSuffix(list.Kind, "List")
	}
	if _, ok := obj["apiVersion"]; !ok {
		obj["apiVersion"] = list.APIVersion
	}
	b, err := json.Marshal(obj)
	if err != nil {
		writeFaultStatus(w, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
