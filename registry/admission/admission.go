package admission

import (
	"context"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/registry/request"
)

// Operation is what a write does, by kube's names.
type Operation string

// The operations (admission.k8s.io Operation).
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe one write to the hooks that admit it: kube's
// admission.Attributes. Objects are the decoded JSON form; a mutating
// hook changes Object in place.
type Attributes struct {
	// User is who asked for the write: the request's user, or the
	// controller user kapi's own writes are made as (ControllerUser).
	User      *request.User
	Operation Operation
	// Group, Version and Kind name the object's kind; Resource and
	// Subresource ("status", "scale", "finalize" or "") what the request
	// addressed.
	Group, Version, Kind  string
	Resource, Subresource string
	// KindGroup and KindVersion, when set, are the group and version of
	// Kind where they are not the resource's: a /scale write's objects
	// are autoscaling/v1 Scales, whatever the resource's group and
	// version (kube's admission attributes of a scale).
	KindGroup, KindVersion string
	Namespace, Name        string
	// Object is the new object (nil on DELETE); OldObject the stored one
	// (nil on CREATE).
	Object, OldObject map[string]any
	DryRun            bool
	// Options are the write's CreateOptions, UpdateOptions, PatchOptions
	// or DeleteOptions, as an AdmissionReview carries them.
	Options map[string]any

	warnings []string
}

// AddWarning adds a warning to the response (a Warning header), as
// kube's warning.AddWarning does for admission plugins.
func (a *Attributes) AddWarning(msg string) { a.warnings = append(a.warnings, msg) }

// Warnings are the warnings the hooks added, in order.
func (a *Attributes) Warnings() []string { return a.warnings }

// qualified is "resource.group", or "resource" for the core group.
func (a *Attributes) qualified() string {
	if a.Group == "" {
		return a.Resource
	}
	return a.Resource + "." + a.Group
}

// name is the name messages use: the request's, or the object's name or
// generateName before a create has one (kube's extractResourceName).
func (a *Attributes) name() string {
	if a.Name != "" {
		return a.Name
	}
	if meta, ok := a.Object["metadata"].(map[string]any); ok {
		for _, k := range []string{"name", "generateName"} {
			if s, _ := meta[k].(string); s != "" {
				return s
			}
		}
	}
	return "Unknown"
}

// Mutator is a mutating admission hook: it may change a.Object (and
// only that), or deny the write with an error.
type Mutator interface {
	Admit(ctx context.Context, a *Attributes) error
}

// Validator is a validating admission hook: it accepts the write (nil)
// or denies it; it must not change a.Object.
type Validator interface {
	Validate(ctx context.Context, a *Attributes) error
}

// A hook that implements Selector handles only the writes Handles
// reports true for; others handle every write.
type Selector interface {
	Handles(a *Attributes) bool
}

// A hook that implements SideEffector and reports side effects makes a
// dry-run write it handles fail: it cannot be run without its effects,
// nor skipped without the dry run lying.
type SideEffector interface {
	Name() string
	HasSideEffects() bool
}

// ErrDryRunUnsupported is wrapped by the Error of a dry-run write that a
// hook with side effects handles.
var ErrDryRunUnsupported = errors.New("admission: hook does not support dry run")

// Error is a denial: the HTTP status code, the Status reason and the
// message of the answer. Err, when set, is the hook's own error.
type Error struct {
	Code    int
	Reason  string
	Message string
	// Details, when set, are the answer's Status details as the hook
	// gives them (a webhook's denial), in their JSON form, and Reason is
	// then kept even when empty; nil leaves the registry's (the
	// object's name, group and kind, and the code's text for an empty
	// Reason); empty, none.
	Details map[string]any
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// NewForbidden is kube's answer to a hook's plain error err: 403
// Forbidden, `<resource>.<group> "<name>" is forbidden: <err>`. An *Error
// is returned as it is.
func NewForbidden(a *Attributes, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: 403, Reason: "Forbidden", Message: fmt.Sprintf("%s %q is forbidden: %v", a.qualified(), a.name(), err), Err: err}
}

// Chain is the admission chain of a registry: the mutating hooks, then
// the validating ones, each in order. The zero Chain admits everything.
type Chain struct {
	Mutating   []Mutator
	Validating []Validator
}

// Empty reports whether the chain has no hook.
func (c *Chain) Empty() bool { return len(c.Mutating) == 0 && len(c.Validating) == 0 }

// Admit runs the mutating hooks that handle a, in order, and stops at the
// first denial. The error is always an *Error.
func (c *Chain) Admit(ctx context.Context, a *Attributes) error {
	for _, h := range c.Mutating {
		if err := run(h, a, func() error { return h.Admit(ctx, a) }); err != nil {
			return err
		}
	}
	return nil
}

// Validate runs the validating hooks that handle a, in order, and stops at
// the first denial. The error is always an *Error.
func (c *Chain) Validate(ctx context.Context, a *Attributes) error {
	for _, h := range c.Validating {
		if err := run(h, a, func() error { return h.Validate(ctx, a) }); err != nil {
			return err
		}
	}
	return nil
}

// run calls one hook, if it handles a.
func run(h any, a *Attributes, call func() error) error {
	if s, ok := h.(Selector); ok && !s.Handles(a) {
		return nil
	}
	if s, ok := h.(SideEffector); ok && a.DryRun && s.HasSideEffects() {
		return &Error{Code: 400, Reason: "BadRequest", Message: fmt.Sprintf("admission webhook %q does not support dry run", s.Name()), Err: ErrDryRunUnsupported}
	}
	if err := call(); err != nil {
		return NewForbidden(a, err)
	}
	return nil
}
