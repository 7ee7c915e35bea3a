package authz

import (
	"context"
	"strings"

	"github.com/kapi-dev/kapi/registry/request"
)

// Attributes are what an authorizer decides on: who asks, and what,
// as kube's authorizer.Attributes.
type Attributes struct {
	User *request.User
	// ResourceRequest tells a resource request (the fields below Verb)
	// from a non-resource one (Path).
	ResourceRequest bool
	Path            string
	// Verb is kube's: get, list, watch, create, update, patch, delete,
	// deletecollection, and the special verbs impersonate, escalate,
	// bind, use; for non-resource requests the lowercased HTTP method.
	Verb        string
	APIGroup    string
	APIVersion  string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
}

// AttributesFrom are the attributes of a request routed as info and sent
// by u.
func AttributesFrom(u *request.User, info *request.Info) Attributes {
	return Attributes{
		User: u, ResourceRequest: info.IsResourceRequest, Path: info.Path, Verb: info.Verb,
		APIGroup: info.APIGroup, APIVersion: info.APIVersion, Resource: info.Resource,
		Subresource: info.Subresource, Namespace: info.Namespace, Name: info.Name,
	}
}

// Decision is an authorizer's answer.
type Decision int

const (
	// NoOpinion lets the next authorizer decide; from the last, it denies.
	NoOpinion Decision = iota
	Allow
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "Allow"
	case Deny:
		return "Deny"
	}
	return "NoOpinion"
}

// Authorizer decides on a request. The reason explains the decision (for
// a denial, it is appended to the 403's message); an error means the
// authorizer could not decide, which denies unless another allows.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (Decision, string, error)
}

// Func adapts a function to Authorizer.
type Func func(ctx context.Context, a Attributes) (Decision, string, error)

// Authorize calls f.
func (f Func) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

// AlwaysAllow allows every request (kube's --authorization-mode=AlwaysAllow).
var AlwaysAllow Authorizer = alwaysAllow{}

type alwaysAllow struct{}

func (alwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return Allow, "", nil
}

// RulesFor is everything, as kube's AlwaysAllow lists it.
func (alwaysAllow) RulesFor(context.Context, *request.User, string) Rules { return everything() }

func everything() Rules {
	return Rules{
		Resource:    []ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		NonResource: []NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}
}

// Privileged allows every request from a member of one of groups (kube
// allows system:masters this way, before any other authorizer).
func Privileged(groups ...string) Authorizer { return privileged(groups) }

type privileged []string

func (p privileged) member(u *request.User) bool {
	if u != nil {
		for _, g := range p {
			if u.InGroup(g) {
				return true
			}
		}
	}
	return false
}

func (p privileged) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if p.member(a.User) {
		return Allow, "", nil
	}
	return NoOpinion, "", nil
}

// RulesFor is everything for a member, nothing for anyone else.
func (p privileged) RulesFor(_ context.Context, u *request.User, _ string) Rules {
	if p.member(u) {
		return everything()
	}
	return Rules{}
}

// Union asks each authorizer in turn; the first Allow or Deny decides.
// Otherwise the answer is NoOpinion with the members' reasons and errors
// joined. A union is a RuleResolver: the rules of its members that are
// (incomplete when one is not).
func Union(authorizers ...Authorizer) Authorizer { return union(authorizers) }

type union []Authorizer

func (z union) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var reasons []string
	var errs []error
	for _, m := range z {
		d, reason, err := m.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if d != NoOpinion {
			return d, reason, nil
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
	}
	return NoOpinion, strings.Join(reasons, "\n"), joinErrors(errs)
}

// RulesFor joins the members' rules, as kube's union does.
func (z union) RulesFor(ctx context.Context, u *request.User, namespace string) Rules {
	var out Rules
	var errs []string
	for _, m := range z {
		rr, ok := m.(RuleResolver)
		if !ok {
			out.Incomplete = true
			continue
		}
		r := rr.RulesFor(ctx, u, namespace)
		out.Resource = append(out.Resource, r.Resource...)
		out.NonResource = append(out.NonResource, r.NonResource...)
		out.Incomplete = out.Incomplete || r.Incomplete
		if r.Err != "" {
			errs = append(errs, r.Err)
		}
	}
	out.Err = strings.Join(errs, ", ")
	return out
}

func joinErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return joined(errs)
}

type joined []error

func (j joined) Error() string {
	s := make([]string, len(j))
	for i, e := range j {
		s[i] = e.Error()
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func (j joined) Unwrap() []error { return j }

// Rules are what a user may do in a namespace, as SelfSubjectRulesReview
// reports them.
type Rules struct {
	Resource    []ResourceRule
	NonResource []NonResourceRule
	// Incomplete is set when the list may miss rules (an authorizer that
	// cannot enumerate them); Err says why, or names what could not be
	// resolved: kube's RBAC reports a binding to a missing role in Err
	// alone, with Incomplete false, as SelfSubjectRulesReview's
	// evaluationError.
	Incomplete bool
	Err        string
}

// ResourceRule is one resource rule of a Rules, as rbac/v1 PolicyRule's
// resource half.
type ResourceRule struct {
	Verbs         []string `json:"verbs"`
	APIGroups     []string `json:"apiGroups,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// NonResourceRule is one non-resource rule of a Rules.
type NonResourceRule struct {
	Verbs           []string `json:"verbs"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// RuleResolver is implemented by authorizers that can list what a user
// may do (SelfSubjectRulesReview, kubectl auth can-i --list).
type RuleResolver interface {
	RulesFor(ctx context.Context, u *request.User, namespace string) Rules
}
