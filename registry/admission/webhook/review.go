package webhook

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/registry/admission"
)

// reviewRequest is an admission.k8s.io AdmissionReview's request, filled
// as kube's CreateV1AdmissionReview fills it.
type reviewRequest struct {
	UID                string          `json:"uid"`
	Kind               gvk             `json:"kind"`
	Resource           gvr             `json:"resource"`
	SubResource        string          `json:"subResource,omitempty"`
	RequestKind        *gvk            `json:"requestKind,omitempty"`
	RequestResource    *gvr            `json:"requestResource,omitempty"`
	RequestSubResource string          `json:"requestSubResource,omitempty"`
	Name               string          `json:"name,omitempty"`
	Namespace          string          `json:"namespace,omitempty"`
	Operation          string          `json:"operation"`
	UserInfo           userInfo        `json:"userInfo"`
	Object             json.RawMessage `json:"object"`
	OldObject          json.RawMessage `json:"oldObject"`
	DryRun             bool            `json:"dryRun"`
	Options            json.RawMessage `json:"options"`
}

type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type gvr struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

type userInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// Response is the part of a webhook's AdmissionReview answer kube reads.
type Response struct {
	UID              string            `json:"uid"`
	Allowed          bool              `json:"allowed"`
	Result           *Status           `json:"status,omitempty"`
	Patch            []byte            `json:"patch,omitempty"`
	PatchType        *string           `json:"patchType,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
}

// Status is the metav1.Status of a denial.
type Status struct {
	Status  string         `json:"status,omitempty"`
	Message string         `json:"message,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Details map[string]any `json:"details,omitempty"`
	Code    int32          `json:"code,omitempty"`
}

// reviewFor is the review of a for invocation inv, with a new UID, in
// the AdmissionReview version v ("v1" or "v1beta1").
func reviewFor(a *admission.Attributes, inv *invocation, object, old json.RawMessage, v string) ([]byte, string, error) {
	uid := newUID()
	kindGroup, kindVersion := a.Group, a.Version
	if a.KindVersion != "" {
		kindGroup, kindVersion = a.KindGroup, a.KindVersion
	}
	req := reviewRequest{
		UID:                uid,
		Kind:               gvk{inv.kindGroup, inv.kindVersion, inv.kind},
		Resource:           gvr{inv.group, inv.version, a.Resource},
		SubResource:        a.Subresource,
		RequestKind:        &gvk{kindGroup, kindVersion, a.Kind},
		RequestResource:    &gvr{a.Group, a.Version, a.Resource},
		RequestSubResource: a.Subresource,
		Name:               a.Name,
		Namespace:          reviewNamespace(a),
		Operation:          string(a.Operation),
		Object:             nullIfEmpty(object),
		OldObject:          nullIfEmpty(old),
		DryRun:             a.DryRun,
	}
	if u := a.User; u != nil {
		req.UserInfo = userInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	}
	req.Options = json.RawMessage("null")
	if a.Options != nil {
		b, err := json.Marshal(a.Options)
		if err != nil {
			return nil, "", err
		}
		req.Options = b
	}
	b, err := json.Marshal(struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Request    *reviewRequest `json:"request"`
	}{"admission.k8s.io/" + v, "AdmissionReview", &req})
	return b, uid, err
}

func nullIfEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// newUID is a random (version 4) UUID.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// ErrInvalidResponse is wrapped by every error of DecodeResponse.
var ErrInvalidResponse = errors.New("webhook: invalid response")

// DecodeResponse reads a webhook's AdmissionReview answer to the review
// uid of version v ("v1" or "v1beta1"), and checks it as kube's
// VerifyAdmissionResponse does: a response, the request's UID, for v1
// the AdmissionReview kind and version, and a patch only from a mutating
// webhook, with its type (v1beta1: JSONPatch implied).
//
// Worked example: to review "6f…" a validating webhook answering
//
//	{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
//	 "response":{"uid":"6f…","allowed":false,"status":{"code":403,"message":"no"}}}
//
// gives Response{UID: "6f…", Result: &Status{Code: 403, Message: "no"}};
// with "uid":"x" the error is `expected response.uid="6f…", got "x"`.
func DecodeResponse(body []byte, uid, v string, mutating bool) (*Response, error) {
	var review struct {
		APIVersion string    `json:"apiVersion"`
		Kind       string    `json:"kind"`
		Response   *Response `json:"response"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&review); err != nil {
		return nil, invalidf("%v", err)
	}
	if dec.More() {
		return nil, invalidf("data after the AdmissionReview")
	}
	r := review.Response
	if r == nil {
		return nil, invalidf("webhook response was absent")
	}
	if v == "v1beta1" {
		if mutating && len(r.Patch) > 0 {
			jp := "JSONPatch"
			r.PatchType = &jp
		} else {
			r.Patch, r.PatchType = nil, nil
		}
		return r, nil
	}
	if r.UID != uid {
		return nil, invalidf("expected response.uid=%q, got %q", uid, r.UID)
	}
	if got := review.APIVersion + ", Kind=" + review.Kind; got != "admission.k8s.io/v1, Kind=AdmissionReview" {
		return nil, invalidf("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got %s", gvkString(review.APIVersion, review.Kind))
	}
	switch {
	case mutating && len(r.Patch) > 0 && r.PatchType == nil:
		return nil, invalidf("webhook returned response.patch but not response.patchType")
	case mutating && len(r.Patch) == 0 && r.PatchType != nil:
		return nil, invalidf("webhook returned response.patchType but not response.patch")
	case mutating && r.PatchType != nil && *r.PatchType == "":
		return nil, invalidf("webhook returned invalid response.patchType of %q", "")
	case !mutating && len(r.Patch) > 0:
		return nil, invalidf("validating webhook may not return response.patch")
	case !mutating && r.PatchType != nil:
		return nil, invalidf("validating webhook may not return response.patchType")
	}
	return r, nil
}

// gvkString is schema.GroupVersionKind's String of apiVersion and kind.
func gvkString(apiVersion, kind string) string {
	group, version := "", apiVersion
	for i := len(apiVersion) - 1; i >= 0; i-- {
		if apiVersion[i] == '/' {
			group, version = apiVersion[:i], apiVersion[i+1:]
			break
		}
	}
	return group + "/" + version + ", Kind=" + kind
}

// responseError is an invalid answer: its message is kube's, and it
// wraps ErrInvalidResponse.
type responseError struct{ msg string }

func (e *responseError) Error() string { return e.msg }
func (e *responseError) Unwrap() error { return ErrInvalidResponse }

func invalidf(format string, args ...any) error {
	return &responseError{fmt.Sprintf(format, args...)}
}

// reviewNamespace is the request's namespace as kube's admission sees
// it: a namespace's own update or delete is "in" that namespace (kube's
// request info names it so).
func reviewNamespace(a *admission.Attributes) string {
	if a.Group == "" && a.Resource == "namespaces" && a.Namespace == "" && a.Operation != admission.Create {
		return a.Name
	}
	return a.Namespace
}
