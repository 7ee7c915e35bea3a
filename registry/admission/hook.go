package admission

import (
	"context"
	"slices"
	"strings"
)

// Hook is an admission hook made of Go functions: a Mutator, a Validator,
// a Selector and a SideEffector in one. Put it in a Chain's Mutating list
// to run Mutate, in its Validating list to run Validate.
type Hook struct {
	// HookName names the hook in messages (a dry-run denial).
	HookName string
	// Rules select the writes the hook handles; none selects every write.
	Rules []Rule
	// SideEffects marks a hook that must not run on dry-run writes.
	SideEffects bool
	Mutate      func(ctx context.Context, a *Attributes) error
	Check       func(ctx context.Context, a *Attributes) error
}

var (
	_ Mutator      = (*Hook)(nil)
	_ Validator    = (*Hook)(nil)
	_ Selector     = (*Hook)(nil)
	_ SideEffector = (*Hook)(nil)
)

// Rule selects writes as a webhook's rule does: by operation, API group
// and resource ("widgets", "widgets/status", "*/scale"). An empty list,
// or one holding "*", matches everything.
type Rule struct {
	Operations []Operation
	Groups     []string
	Resources  []string
}

// Matches reports whether the rule selects a.
func (r Rule) Matches(a *Attributes) bool {
	in := func(l []string, s string) bool {
		return len(l) == 0 || slices.Contains(l, "*") || slices.Contains(l, s)
	}
	if len(r.Operations) > 0 && !slices.Contains(r.Operations, a.Operation) && !slices.Contains(r.Operations, "*") {
		return false
	}
	if !in(r.Groups, a.Group) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	for _, res := range r.Resources {
		name, sub, _ := strings.Cut(res, "/")
		if (name == "*" || name == a.Resource) && (sub == a.Subresource || sub == "*") {
			return true
		}
	}
	return false
}

// Name is HookName.
func (h *Hook) Name() string { return h.HookName }

// HasSideEffects is SideEffects.
func (h *Hook) HasSideEffects() bool { return h.SideEffects }

// Handles reports whether a rule of the hook selects a (true without rules).
func (h *Hook) Handles(a *Attributes) bool {
	if len(h.Rules) == 0 {
		return true
	}
	for _, r := range h.Rules {
		if r.Matches(a) {
			return true
		}
	}
	return false
}

// Admit calls Mutate, if set.
func (h *Hook) Admit(ctx context.Context, a *Attributes) error {
	if h.Mutate == nil {
		return nil
	}
	return h.Mutate(ctx, a)
}

// Validate calls Check, if set.
func (h *Hook) Validate(ctx context.Context, a *Attributes) error {
	if h.Check == nil {
		return nil
	}
	return h.Check(ctx, a)
}
