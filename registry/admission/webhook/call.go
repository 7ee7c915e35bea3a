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
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/registry/admission"
)

// newClient is the HTTP client of the webhooks of one configuration that
// share caBundle: HTTP/2 over TLS, the bundle's CAs (the system's
// without one), connections kept between calls.
func newClient(caBundle []byte) (*http.Client, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
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

// bodies encodes the request's objects once per version they are sent
// as, for every webhook of a write.
type bodies struct {
	a  *admission.Attributes
	mu sync.Mutex
	by map[string][2]json.RawMessage // version → object, old object
}

func newBodies(a *admission.Attributes) *bodies {
	return &bodies{a: a, by: map[string][2]json.RawMessage{}}
}

func (b *bodies) objects(inv *invocation) (obj, old json.RawMessage, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if o, ok := b.by[inv.version]; ok {
		return o[0], o[1], nil
	}
	enc := func(m map[string]any) (json.RawMessage, error) {
		if m == nil {
			return nil, nil
		}
		if inv.version != b.a.Version {
			m = asVersion(m, inv)
		}
		return json.Marshal(m)
	}
	if obj, err = enc(b.a.Object); err != nil {
		return nil, nil, err
	}
	if old, err = enc(b.a.OldObject); err != nil {
		return nil, nil, err
	}
	b.by[inv.version] = [2]json.RawMessage{obj, old}
	return obj, old, nil
}

// asVersion is obj as another version of its resource: kube's "None"
// conversion (the apiVersion changes, nothing else), which is what a
// resource without a conversion of its own gets.
func asVersion(obj map[string]any, inv *invocation) map[string]any {
	c := make(map[string]any, len(obj))
	for k, v := range obj {
		c[k] = v
	}
	c["apiVersion"] = groupVersion(inv.group, inv.version)
	c["kind"] = inv.kind
	return c
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
	obj, old, err := b.objects(inv)
	if err != nil {
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
		return nil, &CallError{h.Name, fmt.Errorf("failed to call webhook: an error on the server (%q) has prevented the request from succeeding", truncate(data))}
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

func truncate(b []byte) string {
	if len(b) > 256 {
		return string(b[:256]) + "…"
	}
	return string(b)
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
func (d *Dispatcher) mutate(ctx context.Context, h *hook, inv *invocation, a *admission.Attributes) (changed bool, err error) {
	resp, err := d.call(ctx, h, inv, a, newBodies(a))
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
	obj := a.Object
	if inv.version != a.Version {
		obj = asVersion(obj, inv)
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
	if inv.version != a.Version {
		next["apiVersion"], next["kind"] = groupVersion(a.Group, a.Version), a.Kind
	}
	changed = !reflect.DeepEqual(stripNumbers(a.Object), stripNumbers(next))
	if changed {
		a.Object = next
	}
	return changed, nil
}

func internal(err error) *admission.Error {
	return &admission.Error{Code: http.StatusInternalServerError, Reason: "InternalError", Message: "Internal error occurred: " + err.Error(), Err: err}
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
