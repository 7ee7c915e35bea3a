package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/registry/admission"
)

// ErrInvalidCABundle: a webhook's caBundle holds no PEM certificate.
var ErrInvalidCABundle = errors.New("unable to load root certificates: unable to parse bytes as PEM block")

// NewClient is the HTTP client of the webhooks that share caBundle
// (admission webhooks of one configuration, a CRD's conversion webhook):
// HTTP/2 over TLS, the bundle's CAs (the system's without one),
// connections kept between calls. It fails with ErrInvalidCABundle.
func NewClient(caBundle []byte) (*http.Client, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, ErrInvalidCABundle
		}
		cfg.RootCAs = pool
	}
	t := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     cfg,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{Transport: t}, nil
}

// failingTransport is the transport of a client that cannot be made (a
// CA bundle that does not parse): every call fails with its error.
type failingTransport struct{ err error }

func (t failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, t.err }

// bodies holds the request's objects as each version they are sent as
// (converted once per version, matchPolicy Equivalent) and their
// encodings, for every webhook of a write.
type bodies struct {
	d         *Dispatcher
	a         *admission.Attributes
	mu        sync.Mutex
	versioned map[string][2]map[string]any  // version → object, old object
	by        map[string][2]json.RawMessage // version → their JSON
}

func (d *Dispatcher) newBodies(a *admission.Attributes) *bodies {
	return &bodies{d: d, a: a, versioned: map[string][2]map[string]any{}, by: map[string][2]json.RawMessage{}}
}

// objects are the object and old object as inv's version.
func (b *bodies) objects(ctx context.Context, inv *invocation) (obj, old map[string]any, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.objectsLocked(ctx, inv)
}

func (b *bodies) objectsLocked(ctx context.Context, inv *invocation) (obj, old map[string]any, err error) {
	if !inv.converts(b.a) {
		return b.a.Object, b.a.OldObject, nil
	}
	if o, ok := b.versioned[inv.version]; ok {
		return o[0], o[1], nil
	}
	if obj, err = b.d.convert(ctx, b.a, b.a.Object, inv.version, inv.kind); err != nil {
		return nil, nil, err
	}
	if old, err = b.d.convert(ctx, b.a, b.a.OldObject, inv.version, inv.kind); err != nil {
		return nil, nil, err
	}
	b.versioned[inv.version] = [2]map[string]any{obj, old}
	return obj, old, nil
}

// encoded are the object and old object as inv's version, in JSON.
func (b *bodies) encoded(ctx context.Context, inv *invocation) (obj, old json.RawMessage, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if o, ok := b.by[inv.version]; ok {
		return o[0], o[1], nil
	}
	o, oo, err := b.objectsLocked(ctx, inv)
	if err != nil {
		return nil, nil, err
	}
	enc := func(m map[string]any) (json.RawMessage, error) {
		if m == nil {
			return nil, nil
		}
		return json.Marshal(m)
	}
	if obj, err = enc(o); err != nil {
		return nil, nil, err
	}
	if old, err = enc(oo); err != nil {
		return nil, nil, err
	}
	b.by[inv.version] = [2]json.RawMessage{obj, old}
	return obj, old, nil
}

// convert is obj, an object of a's resource, as version (whose kind is
// kind): converted by Options.Convert, or by kube's "None" conversion
// (apiVersion and kind rewritten, nothing else) without one. A failed
// conversion is kube's 500, as its webhook dispatcher reports one.
func (d *Dispatcher) convert(ctx context.Context, a *admission.Attributes, obj map[string]any, version, kind string) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	if d.opts.Convert == nil {
		c := make(map[string]any, len(obj))
		for k, v := range obj {
			c[k] = v
		}
		c["apiVersion"], c["kind"] = groupVersion(a.Group, version), kind
		return c, nil
	}
	out, err := d.opts.Convert(ctx, a.Group, a.Resource, obj, version)
	if err != nil {
		var ae *admission.Error
		if asAdmissionError(err, &ae) {
			return nil, ae
		}
		return nil, internal(err)
	}
	return out, nil
}

func groupVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// call sends h the review of a and reads its answer. A *CallError is a
// call that failed; a denial is the Response's Allowed false.
func (d *Dispatcher) call(ctx context.Context, h *hook, inv *invocation, a *admission.Attributes, b *bodies) (*Response, error) {
	if a.DryRun {
		if h.SideEffects == nil {
			return nil, &CallError{h.Name, errors.New("Webhook SideEffects is nil")}
		}
		if se := *h.SideEffects; se != "None" && se != "NoneOnDryRun" {
			return nil, &admission.Error{Code: http.StatusBadRequest, Reason: "BadRequest",
				Message: fmt.Sprintf("admission webhook %q does not support dry run", h.Name), Err: admission.ErrDryRunUnsupported}
		}
	}
	version := ""
	for _, v := range h.AdmissionReviewVersions {
		if v == "v1" || v == "v1beta1" {
			version = v
			break
		}
	}
	if version == "" {
		return nil, &CallError{h.Name, errors.New("could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)")}
	}
	obj, old, err := b.encoded(ctx, inv)
	if err != nil {
		var ae *admission.Error
		if asAdmissionError(err, &ae) {
			return nil, ae // a failed conversion: kube's 500 whatever the policy
		}
		return nil, &CallError{h.Name, fmt.Errorf("could not create admission objects: %w", err)}
	}
	body, uid, err := reviewFor(a, inv, obj, old, version)
	if err != nil {
		return nil, &CallError{h.Name, fmt.Errorf("could not create admission objects: %w", err)}
	}
	u, err := d.target(ctx, h)
	if err != nil {
		return nil, &CallError{h.Name, fmt.Errorf("could not get REST client: %w", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, &CallError{h.Name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, &CallError{h.Name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, d.opts.MaxResponseBytes+1))
	if err != nil {
		return nil, &CallError{h.Name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	if int64(len(data)) > d.opts.MaxResponseBytes {
		return nil, &CallError{h.Name, fmt.Errorf("failed to call webhook: the response is larger than %d bytes", d.opts.MaxResponseBytes)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &CallError{h.Name, fmt.Errorf("failed to call webhook: %s", unexpectedAnswer(resp.StatusCode, resp.Header.Get("Content-Type"), data))}
	}
	if data, err = reviewJSON(data); err != nil {
		return nil, &CallError{h.Name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	r, err := DecodeResponse(data, uid, version, h.mutating)
	if err != nil {
		return nil, &CallError{h.Name, fmt.Errorf("received invalid webhook response: %w", err)}
	}
	return r, nil
}

// reviewJSON is an answer as kube's webhook client reads it: JSON, or
// YAML turned into JSON, whose apiVersion and kind can be read, with its
// messages ("couldn't get version/kind; json parse error: …").
func reviewJSON(b []byte) ([]byte, error) {
	if !json.Valid(b) {
		j, err := codec.YAMLToJSON(b)
		if err != nil {
			return nil, err
		}
		b = j
	}
	var findKind struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := json.Unmarshal(b, &findKind); err != nil {
		return nil, fmt.Errorf("couldn't get version/kind; json parse error: %v", err)
	}
	return b, nil
}

// unexpectedAnswer is what kube's webhook client (client-go's REST
// client) reports of an answer with a status code other than 2xx: a
// failure Status's message, or its generic message for the code with the
// body as its text when it is text (at most 2 KiB, trimmed), "unknown"
// otherwise.
//
//	500 text/plain "oops\n" → an error on the server ("oops") has prevented the request from succeeding
//	404 text/html  …        → the server could not find the requested resource
func unexpectedAnswer(code int, contentType string, body []byte) string {
	var st struct {
		Kind, Status, Message string
	}
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Status == "Failure" {
		return st.Message
	}
	if len(body) > 2048 {
		body = body[:2048]
	}
	msg := "unknown"
	if mt, _, err := mime.ParseMediaType(contentType); contentType == "" || (err == nil && strings.HasPrefix(mt, "text/")) {
		msg = strings.TrimSpace(string(body))
	}
	switch code {
	case http.StatusConflict:
		return "the server reported a conflict"
	case http.StatusNotFound:
		return "the server could not find the requested resource"
	case http.StatusBadRequest:
		return "the server rejected our request for an unknown reason"
	case http.StatusUnauthorized:
		return "the server has asked for the client to provide credentials"
	case http.StatusForbidden, http.StatusUnsupportedMediaType:
		return msg
	case http.StatusNotAcceptable:
		if msg == "" || msg == "unknown" {
			return "the server was unable to respond with a content type that the client supports"
		}
		return msg
	case http.StatusMethodNotAllowed:
		return "the server does not allow this method on the requested resource"
	case http.StatusUnprocessableEntity:
		return "the server rejected our request due to an error in our request"
	case http.StatusServiceUnavailable:
		return "the server is currently unable to handle the request"
	case http.StatusGatewayTimeout:
		return "the server was unable to return a response in the time allotted, but may still be processing the request"
	case http.StatusTooManyRequests:
		return "the server has received too many requests and has asked us to try again later"
	}
	if code >= 500 {
		return fmt.Sprintf("an error on the server (%q) has prevented the request from succeeding", msg)
	}
	return fmt.Sprintf("the server responded with the status code %d but did not return more information", code)
}

// target is the URL to call h at, with kube's timeout parameter
// (?timeout=10s) as client-go's REST client adds it.
func (d *Dispatcher) target(ctx context.Context, h *hook) (string, error) {
	if h.target != "" {
		return h.target, nil
	}
	ref := *h.ClientConfig.Service
	if ref.Port == nil {
		p := int32(443)
		ref.Port = &p
	}
	if d.opts.ResolveService == nil {
		return "", fmt.Errorf("no service resolver for service %s/%s", ref.Namespace, ref.Name)
	}
	u, err := d.opts.ResolveService(ctx, ref)
	if err != nil {
		return "", err
	}
	c := *u
	if ref.Path != nil && c.Path == "" {
		c.Path = *ref.Path
	}
	return withTimeout(&c, h.timeout), nil
}

// withTimeout is u with the timeout query parameter.
func withTimeout(u *url.URL, timeout time.Duration) string {
	q := u.Query()
	q.Set("timeout", strconv.Itoa(int(timeout/time.Second))+"s")
	c := *u
	c.RawQuery = q.Encode()
	return c.String()
}

// mutate calls a mutating webhook and applies its patch to a.Object;
// changed reports whether the object changed.
func (d *Dispatcher) mutate(ctx context.Context, h *hook, inv *invocation, a *admission.Attributes, b *bodies) (changed bool, err error) {
	resp, err := d.call(ctx, h, inv, a, b)
	if err != nil {
		return false, err
	}
	for _, w := range resp.Warnings {
		a.AddWarning(w)
	}
	if !resp.Allowed {
		return false, denial(h.Name, resp.Result)
	}
	if len(resp.Patch) == 0 {
		return false, nil
	}
	p, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		return false, &CallError{h.Name, fmt.Errorf("received undecodable patch in webhook response: %w", err)}
	}
	if len(p) == 0 {
		return false, nil
	}
	if a.Object == nil {
		return false, internal(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.Name))
	}
	if *resp.PatchType != "JSONPatch" {
		return false, &CallError{h.Name, fmt.Errorf("unsupported patch type %q", *resp.PatchType)}
	}
	obj, _, err := b.objects(ctx, inv)
	if err != nil {
		return false, err
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		return false, internal(err)
	}
	patched, err := p.ApplyWithOptions(doc, &jsonpatch.ApplyOptions{SupportNegativeIndices: true, EnsurePathExistsOnAdd: false, AccumulatedCopySizeLimit: 0})
	if err != nil {
		return false, internal(err)
	}
	var next map[string]any
	dec := json.NewDecoder(bytes.NewReader(patched))
	dec.UseNumber()
	if err := dec.Decode(&next); err != nil || next == nil {
		return false, internal(fmt.Errorf("the patched object is not a JSON object: %v", err))
	}
	if inv.converts(a) {
		// The patched object, at the webhook's version, back to the
		// request's.
		next["apiVersion"], next["kind"] = groupVersion(a.Group, inv.version), inv.kind
		if next, err = d.convert(ctx, a, next, a.Version, a.Kind); err != nil {
			return false, err
		}
	}
	changed = !reflect.DeepEqual(stripNumbers(a.Object), stripNumbers(next))
	if changed {
		a.Object = next
	}
	return changed, nil
}

// internal is kube's apierrors.NewInternalError: a 500 whose one cause
// is err's text.
func internal(err error) *admission.Error {
	return &admission.Error{Code: http.StatusInternalServerError, Reason: "InternalError", Message: "Internal error occurred: " + err.Error(), Err: err,
		Details: map[string]any{"causes": []any{map[string]any{"message": err.Error()}}}}
}

// stripNumbers is v with every number as float64, to compare objects
// whatever Go type their numbers have.
func stripNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = stripNumbers(e)
		}
		return m
	case []any:
		return slices.Collect(func(yield func(any) bool) {
			for _, e := range x {
				if !yield(stripNumbers(e)) {
					return
				}
			}
		})
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return v
}
