package webhook

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/registry/admission"
)

// invocation is how a matching webhook is called: the group and version
// of the resource it matched, and the kind of the object it is sent (the
// request's, or with matchPolicy Equivalent another version of the same
// resource), with its group and version.
type invocation struct {
	group, version, kind   string
	kindGroup, kindVersion string
}

// newInvocation is the invocation of a at version of its resource, whose
// kind there is kind; a's own kind when it has one apart from its
// resource (a Scale, the same in every version).
func newInvocation(a *admission.Attributes, version, kind string) *invocation {
	if a.KindVersion != "" {
		return &invocation{a.Group, version, a.Kind, a.KindGroup, a.KindVersion}
	}
	return &invocation{a.Group, version, kind, a.Group, version}
}

// converts reports whether the object inv is sent differs from a's: an
// Equivalent version of a resource whose kind is its own.
func (inv *invocation) converts(a *admission.Attributes) bool {
	return inv.version != a.Version && a.KindVersion == ""
}

// exempt tells the writes no webhook sees: of webhook configurations and
// admission policies themselves (kube's
// IsExemptAdmissionConfigurationResource), so a bad webhook cannot lock
// its own configuration.
func exempt(a *admission.Attributes) bool {
	if a.Group != "admissionregistration.k8s.io" {
		return false
	}
	switch a.Kind {
	case MutatingKind, ValidatingKind, "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding":
		return true
	}
	return false
}

// matches is kube's rules.Matcher for one rule and the request as if it
// were for version and resource of group.
func (r *Rule) matches(a *admission.Attributes, group, version string) bool {
	scope := "*"
	if r.Scope != nil {
		scope = *r.Scope
	}
	isNamespace := a.Group == "" && version == "v1" && a.Resource == "namespaces"
	switch scope {
	case "*":
	case "Namespaced":
		if isNamespace || a.Namespace == "" {
			return false
		}
	case "Cluster":
		if !isNamespace && a.Namespace != "" {
			return false
		}
	default:
		return false
	}
	if !slices.Contains(r.Operations, "*") && !slices.Contains(r.Operations, string(a.Operation)) {
		return false
	}
	if !exactOrWildcard(r.APIGroups, group) || !exactOrWildcard(r.APIVersions, version) {
		return false
	}
	for _, rs := range r.Resources {
		res, sub, _ := strings.Cut(rs, "/")
		if (res == "*" || res == a.Resource) && (sub == "*" || sub == a.Subresource) {
			return true
		}
	}
	return false
}

func exactOrWildcard(items []string, s string) bool {
	return slices.Contains(items, "*") || slices.Contains(items, s)
}

// shouldCall is kube's ShouldCallHook: the namespace and object
// selectors, the rules (with matchPolicy Equivalent, the rules again for
// the resource's other versions) and the match conditions. It returns
// nil when h is not called for a; an error is the answer to the write.
// The match conditions see the object as the webhook would be sent it
// (converted by b).
func (d *Dispatcher) shouldCall(ctx context.Context, h *hook, a *admission.Attributes, b *bodies) (*invocation, error) {
	nsMatch, nsErr := d.matchNamespace(ctx, h, a)
	if !nsMatch && nsErr == nil {
		return nil, nil
	}
	if !h.objectMatches(a) {
		return nil, nil
	}
	var inv *invocation
	for i := range h.Rules {
		if h.Rules[i].matches(a, a.Group, a.Version) {
			inv = newInvocation(a, a.Version, a.Kind)
			break
		}
	}
	if inv == nil && (h.MatchPolicy == nil || *h.MatchPolicy == Equivalent) && d.opts.Equivalents != nil {
	outer:
		for i := range h.Rules {
			for _, e := range d.opts.Equivalents(a.Group, a.Resource) {
				if e.Version != a.Version && h.Rules[i].matches(a, a.Group, e.Version) {
					inv = newInvocation(a, e.Version, e.Kind)
					break outer
				}
			}
		}
	}
	if inv == nil {
		return nil, nil
	}
	if nsErr != nil {
		return nil, nsErr
	}
	if h.conditions != nil {
		in := ConditionInput{Attributes: a, Group: inv.kindGroup, Version: inv.kindVersion, Kind: inv.kind, ResourceVersion: inv.version, Authorizer: d.opts.Authorizer}
		if inv.converts(a) {
			obj, old, err := b.objects(ctx, inv)
			if err != nil {
				return nil, err
			}
			va := *a
			va.Object, va.OldObject = obj, old
			in.Attributes = &va
		}
		ok, err := h.conditions.Match(ctx, in)
		if err != nil {
			return nil, &admission.Error{Code: 403, Reason: "Forbidden", Err: err,
				Message: fmt.Sprintf("%s %q is forbidden: %v", qualified(a), a.Name, err)}
		}
		if !ok {
			return nil, nil
		}
	}
	return inv, nil
}

func qualified(a *admission.Attributes) string {
	if a.Group == "" {
		return a.Resource
	}
	return a.Resource + "." + a.Group
}

// matchNamespace is kube's namespace matcher: cluster-scoped writes
// (other than of namespaces) always match; a namespace's own create or
// update is matched by the object's labels, others by the stored
// namespace's (Options.NamespaceLabels).
func (d *Dispatcher) matchNamespace(ctx context.Context, h *hook, a *admission.Attributes) (bool, error) {
	isNamespace := a.Group == "" && a.Resource == "namespaces"
	if a.Namespace == "" && !isNamespace {
		return true, nil
	}
	sel := h.NamespaceSelector
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return true, nil
	}
	var labels map[string]string
	switch {
	case isNamespace && a.Subresource == "" && (a.Operation == admission.Create || a.Operation == admission.Update):
		labels = labelsOf(a.Object)
	case d.opts.NamespaceLabels == nil:
		return false, &admission.Error{Code: 500, Reason: "InternalError", Message: "Internal error occurred: webhook: no NamespaceLabels to match a namespaceSelector"}
	default:
		name := a.Namespace
		if isNamespace {
			name = a.Name
		}
		var err error
		if labels, err = d.opts.NamespaceLabels(ctx, name); err != nil {
			var ae *admission.Error
			if asAdmissionError(err, &ae) {
				return false, ae
			}
			return false, &admission.Error{Code: 500, Reason: "InternalError", Message: "Internal error occurred: " + err.Error(), Err: err}
		}
	}
	return sel.Matches(labels), nil
}

// objectMatches is kube's object matcher: the new or the old object's
// labels match objectSelector.
func (h *hook) objectMatches(a *admission.Attributes) bool {
	sel := h.ObjectSelector
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return true
	}
	return (a.Object != nil && sel.Matches(labelsOf(a.Object))) || (a.OldObject != nil && sel.Matches(labelsOf(a.OldObject)))
}

func labelsOf(obj map[string]any) map[string]string {
	meta, _ := obj["metadata"].(map[string]any)
	raw, _ := meta["labels"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
