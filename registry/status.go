package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

// Status is the meta/v1 Status object every error (and some successes)
// answers with.
type Status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   StatusListMeta `json:"metadata"`
	Status     string         `json:"status,omitempty"`
	Message    string         `json:"message,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Details    *StatusDetails `json:"details,omitempty"`
	Code       int            `json:"code,omitempty"`
}

// StatusListMeta is the list metadata a Status may carry (a continue token
// for an expired list).
type StatusListMeta struct {
	Continue string `json:"continue,omitempty"`
}

// StatusDetails names what an error is about.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int           `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one reason for an error, often a field.
type StatusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// StatusError is an error with the Status that describes it. Every error the
// registry returns, over HTTP or in-process, is one.
type StatusError struct {
	Status Status
	cause  error // the typed error the Status was made from, if any
}

func (e *StatusError) Error() string { return e.Status.Message }

// Unwrap is the typed error the Status was made from (a storage error, an
// admission denial), so that errors.Is and errors.As see through it.
func (e *StatusError) Unwrap() error { return e.cause }

// Code is the HTTP status code.
func (e *StatusError) Code() int { return e.Status.Code }

// Reason is the machine-readable reason, e.g. "NotFound".
func (e *StatusError) Reason() string { return e.Status.Reason }

// ReasonOf returns the Status reason of err ("" when err carries none).
func ReasonOf(err error) string {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status.Reason
	}
	return ""
}

func newStatus(code int, reason, msg string, d *StatusDetails) *StatusError {
	return &StatusError{Status: Status{
		Kind: "Status", APIVersion: "v1", Status: "Failure",
		Code: code, Reason: reason, Message: msg, Details: d,
	}}
}

func errBadRequest(format string, a ...any) *StatusError {
	return newStatus(http.StatusBadRequest, "BadRequest", fmt.Sprintf(format, a...), nil)
}

func errNotFound(r *Resource, name string) *StatusError {
	return newStatus(http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", r.qualified(), name),
		&StatusDetails{Name: name, Group: r.Group, Kind: r.Plural})
}

func errPathNotFound() *StatusError {
	se := newStatus(http.StatusNotFound, "NotFound", "the server could not find the requested resource", &StatusDetails{})
	se.cause = errNoPath
	return se
}

// errNoPath is what errPathNotFound unwraps to: nothing serves the path.
var errNoPath = errors.New("registry: nothing serves the path")

// errMethodNotAllowed is kube's 405, in its words (which name no method).
func errMethodNotAllowed(string) *StatusError {
	return newStatus(http.StatusMethodNotAllowed, "MethodNotAllowed",
		"the server does not allow this method on the requested resource", &StatusDetails{})
}

// errAcrossNamespaces answers a create or deletecollection of a namespaced
// resource across all namespaces, which kube does not serve: 405 for a
// built-in kind, 404 for a custom resource (whose cluster-wide path
// serves list and watch alone).
func errAcrossNamespaces(res *Resource, method string) *StatusError {
	if res.typedList() {
		return errMethodNotAllowed(method)
	}
	return errPathNotFound()
}

func errConflict(r *Resource, name, why string) *StatusError {
	se := newStatus(http.StatusConflict, "Conflict",
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", r.qualified(), name, why),
		&StatusDetails{Name: name, Group: r.Group, Kind: r.Plural})
	se.cause = storage.ErrConflict // a conflict as storage's are
	return se
}

// errInvalid is kube's 422 Invalid for field errors of r's object name.
// As kube's (NewInvalid of field.ErrorList.ToAggregate), the message names (NewInvalid of field.ErrorList.ToAggregate), the message names
// each distinct error once, the causes list every error.
func errInvalid(r *Resource, name string, errs []FieldError) *StatusError {
	msgs := make([]string, 0, len(errs))
	causes := make([]StatusCause, len(errs))
	for i, e := range errs {
		if m := e.Error(); !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
		causes[i] = StatusCause{Type: e.Type, Message: e.ErrorBody(), Field: e.Field}
	}
	return newStatus(http.StatusUnprocessableEntity, "Invalid",
		fmt.Sprintf("%s %q is invalid: %s", r.qualifiedKind(), name, aggregated(msgs)),
		&StatusDetails{Name: name, Group: r.Group, Kind: r.Kind, Causes: causes})
}

// errInvalidCauses is kube's 422 Invalid of what (`Kind.group "name"`)
// for causes that are each "field: message"; nil when there are none.
func errInvalidCauses(what string, d *StatusDetails) error {
	if len(d.Causes) == 0 {
		return nil
	}
	msgs := make([]string, len(d.Causes))
	for i, c := range d.Causes {
		msgs[i] = c.Field + ": " + c.Message
	}
	return newStatus(http.StatusUnprocessableEntity, "Invalid", what+" is invalid: "+aggregated(msgs), d)
}

// aggregated is the text of kube's error aggregate (utilerrors.Aggregate):
// one message as it is, several as "[first, second]".
func aggregated(msgs []string) string {
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func errForbiddenNamespace(r *Resource, name, ns, why string) *StatusError {
	return newStatus(http.StatusForbidden, "Forbidden",
		fmt.Sprintf("%s %q is forbidden: unable to create new content in namespace %s because it is being terminated", r.qualified(), name, ns),
		&StatusDetails{Name: name, Group: r.Group, Kind: r.Plural, Causes: []StatusCause{{Type: "NamespaceTerminating", Message: why, Field: "metadata.namespace"}}})
}

// errUnsupportedMediaType is kube's 415 from its negotiation, which
// carries no details.
func errUnsupportedMediaType(ct string, supported []string) *StatusError {
	return newStatus(http.StatusUnsupportedMediaType, "UnsupportedMediaType",
		fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s", strings.Join(supported, ", ")), nil)
}

// errOffersNotAcceptable is a 406 listing what is on offer, for the
// documents kapi serves outside resources (discovery, OpenAPI, values).
func errOffersNotAcceptable(supported string) *StatusError {
	return newStatus(http.StatusNotAcceptable, "NotAcceptable",
		"only the following media types are accepted: "+supported, &StatusDetails{})
}

// errNotAcceptable is kube's 406 from its negotiation, which carries no
// details.
func errNotAcceptable(supported string) *StatusError {
	return newStatus(http.StatusNotAcceptable, "NotAcceptable", "only the following media types are accepted: "+supported, nil)
}

// errRouteNotAcceptable is the 406 of go-restful, which routes kube's
// built-in kinds, for an Accept header none of a route's media types
// (produces) matches; kube wraps it in a Status with empty details.
func errRouteNotAcceptable(produces []string) *StatusError {
	return newStatus(http.StatusNotAcceptable, "NotAcceptable",
		"406: Not Acceptable\n\nAvailable representations: "+strings.Join(produces, ", "), &StatusDetails{})
}

func errTooLarge(msg string) *StatusError {
	return newStatus(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "Request entity too large: "+msg, &StatusDetails{})
}

func errInternal(err error) *StatusError {
	return newStatus(http.StatusInternalServerError, "InternalError",
		fmt.Sprintf("Internal error occurred: %v", err),
		&StatusDetails{Causes: []StatusCause{{Message: err.Error()}}})
}

// toStatus turns any error into a *StatusError: the one place where typed Go
// errors get their HTTP code, reason and details. r and name may be empty.
func toStatus(err error, r *Resource, name string) *StatusError {
	var se *StatusError
	if errors.As(err, &se) {
		return se
	}
	if r == nil {
		r = &Resource{}
	}
	se = statusOf(err, r, name)
	se.cause = err
	return se
}

func statusOf(err error, r *Resource, name string) *StatusError {
	var ae *admission.Error
	if errors.As(err, &ae) {
		code, reason := ae.Code, ae.Reason
		if code == 0 {
			code = http.StatusForbidden
		}
		if reason == "" && ae.Details == nil { // a webhook's answer keeps its reason, even none
			reason = http.StatusText(code)
		}
		details := &StatusDetails{Name: name, Group: r.Group, Kind: r.Plural}
		switch {
		case ae.Details == nil:
		case len(ae.Details) == 0: // a webhook's denial without details: none, as kube's
			details = nil
		default:
			details = &StatusDetails{}
			_ = convert(ae.Details, details) // a webhook's details, as far as they are a StatusDetails
		}
		return newStatus(code, reason, ae.Message, details)
	}
	var rve *rv.Error
	if errors.As(err, &rve) {
		if errors.Is(rve, rv.ErrInvalid) {
			causes := make([]StatusCause, len(rve.Causes))
			for i, c := range rve.Causes {
				causes[i] = StatusCause{Type: c.Type, Message: c.Message(), Field: c.Field}
			}
			return newStatus(http.StatusUnprocessableEntity, "Invalid", rve.Msg,
				&StatusDetails{Group: "meta.k8s.io", Kind: "ListOptions", Causes: causes})
		}
		return errBadRequest("%s", rve.Msg)
	}
	var ste *storage.Error
	errors.As(err, &ste)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return errNotFound(r, name)
	case errors.Is(err, storage.ErrExists):
		return newStatus(http.StatusConflict, "AlreadyExists", fmt.Sprintf("%s %q already exists", r.qualified(), name),
			&StatusDetails{Name: name, Group: r.Group, Kind: r.Plural})
	case errors.Is(err, storage.ErrConflict):
		why := "the object has been modified; please apply your changes to the latest version and try again"
		if ste != nil && ste.Msg != "" {
			why = ste.Msg
		}
		return errConflict(r, name, why)
	case errors.Is(err, storage.ErrExpired):
		if ste != nil && ste.Continue != "" {
			s := newStatus(http.StatusGone, "Expired", "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.", nil)
			s.Status.Metadata.Continue = ste.Continue
			return s
		}
		msg := "The resourceVersion for the provided list is too old."
		if ste != nil && ste.Msg != "" {
			msg = ste.Msg
		}
		return newStatus(http.StatusGone, "Expired", msg, nil)
	case errors.Is(err, storage.ErrTooLarge):
		msg := "Too large resource version"
		if ste != nil && ste.Msg != "" {
			msg = ste.Msg
		}
		return newStatus(http.StatusGatewayTimeout, "Timeout", "Timeout: "+msg, &StatusDetails{
			Causes:            []StatusCause{{Type: "ResourceVersionTooLarge", Message: "Too large resource version"}},
			RetryAfterSeconds: 1,
		})
	case errors.Is(err, storage.ErrInvalid):
		msg := err.Error()
		if ste != nil && ste.Msg != "" {
			msg = ste.Msg
		}
		return errBadRequest("%s", msg)
	case errors.Is(err, storage.ErrUnavailable):
		// Nothing was changed, so client-go may retry on its own (it
		// does for a 5xx with Retry-After).
		msg := "the storage backend is unavailable"
		if ste != nil && ste.Msg != "" {
			msg = ste.Msg
		}
		return newStatus(http.StatusServiceUnavailable, "ServiceUnavailable", msg, &StatusDetails{RetryAfterSeconds: 1})
	case errors.Is(err, storage.ErrTimeout):
		// A write of unknown outcome: no Retry-After, so that clients do
		// not repeat it blindly (kube-apiserver's request timeout).
		msg := "the storage backend did not confirm the write in time; it may or may not have been applied"
		if ste != nil && ste.Msg != "" {
			msg = ste.Msg
		}
		return newStatus(http.StatusGatewayTimeout, "Timeout", "Timeout: "+msg, &StatusDetails{})
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return newStatus(http.StatusGatewayTimeout, "Timeout", "Timeout: request did not complete within the allowed duration", &StatusDetails{})
	}
	return errInternal(err)
}

// successStatus is the Status a delete answers once the object is gone.
func successStatus(r *Resource, name, uid string) Status {
	return Status{Kind: "Status", APIVersion: "v1", Status: "Success",
		Details: &StatusDetails{Name: name, Group: r.Group, Kind: r.Plural, UID: uid}}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with types that always marshal
	}
	return b
}
