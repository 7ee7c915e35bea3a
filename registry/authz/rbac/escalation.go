package rbac

import (
	"context"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

// Covers reports whether owner's rules allow everything requested's do,
// as kube's validation.Covers: each requested rule is broken down into
// rules of one group, resource, verb and name (BreakdownRule), and each
// must be covered by one owner rule. The second result is those that are
// not. A wildcard is covered only by a wildcard: owner verbs get, list
// and watch do not cover "*".
func Covers(owner, requested []PolicyRule) (bool, []PolicyRule) {
	var subrules []PolicyRule
	for _, r := range requested {
		subrules = append(subrules, BreakdownRule(r)...)
	}
	uncovered := []PolicyRule{}
	for _, sub := range subrules {
		covered := false
		for i := range owner {
			if ruleCovers(&owner[i], &sub) {
				covered = true
				break
			}
		}
		if !covered {
			uncovered = append(uncovered, sub)
		}
	}
	return len(uncovered) == 0, uncovered
}

// BreakdownRule is rule as rules of at most one group, resource, verb and
// resource name each (non-resource URLs: one URL and one verb each).
func BreakdownRule(rule PolicyRule) []PolicyRule {
	var subrules []PolicyRule
	for _, group := range rule.APIGroups {
		for _, resource := range rule.Resources {
			for _, verb := range rule.Verbs {
				if len(rule.ResourceNames) > 0 {
					for _, name := range rule.ResourceNames {
						subrules = append(subrules, PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}, ResourceNames: []string{name}})
					}
				} else {
					subrules = append(subrules, PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}})
				}
			}
		}
	}
	for _, url := range rule.NonResourceURLs {
		for _, verb := range rule.Verbs {
			subrules = append(subrules, PolicyRule{NonResourceURLs: []string{url}, Verbs: []string{verb}})
		}
	}
	return subrules
}

func hasAll(set, contains []string) bool {
	for _, c := range contains {
		if !slices.Contains(set, c) {
			return false
		}
	}
	return true
}

func resourceCoversAll(set, covers []string) bool {
	if slices.Contains(set, ResourceAll) || hasAll(set, covers) {
		return true
	}
	for _, path := range covers {
		if slices.Contains(set, path) {
			continue
		}
		_, sub, ok := strings.Cut(path, "/")
		if !ok || !slices.Contains(set, "*/"+sub) {
			return false
		}
	}
	return true
}

func nonResourceURLCovers(owner, sub string) bool {
	return owner == sub || strings.HasSuffix(owner, "*") && strings.HasPrefix(sub, strings.TrimRight(owner, "*"))
}

func nonResourceURLsCoverAll(set, covers []string) bool {
	for _, path := range covers {
		if !slices.ContainsFunc(set, func(owner string) bool { return nonResourceURLCovers(owner, path) }) {
			return false
		}
	}
	return true
}

// ruleCovers is kube's: owner (any rule) covers sub (one of BreakdownRule's).
func ruleCovers(owner, sub *PolicyRule) bool {
	verbs := slices.Contains(owner.Verbs, VerbAll) || hasAll(owner.Verbs, sub.Verbs)
	groups := slices.Contains(owner.APIGroups, APIGroupAll) || hasAll(owner.APIGroups, sub.APIGroups)
	resources := resourceCoversAll(owner.Resources, sub.Resources)
	urls := nonResourceURLsCoverAll(owner.NonResourceURLs, sub.NonResourceURLs)
	names := len(owner.ResourceNames) == 0 || len(sub.ResourceNames) > 0 && hasAll(owner.ResourceNames, sub.ResourceNames)
	return verbs && groups && resources && names && urls
}

// CompactRules merges rules of one group, one resource and at most one
// resource name that differ only in their verbs (BreakdownRule's output,
// typically), as kube does before reporting missing rules: get pods and
// list pods become {Resources:["pods"], Verbs:["get" "list"]}. Merged
// rules follow the others, in the order their first rule had.
func CompactRules(rules []PolicyRule) []PolicyRule {
	type simple struct {
		group, resource string
		hasName         bool
		name            string
	}
	out := make([]PolicyRule, 0, len(rules))
	merged := map[simple]int{} // index in tail
	var tail []PolicyRule
	for _, r := range rules {
		if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
			out = append(out, r)
			continue
		}
		k := simple{group: r.APIGroups[0], resource: r.Resources[0]}
		if len(r.ResourceNames) == 1 {
			k.hasName, k.name = true, r.ResourceNames[0]
		}
		if i, ok := merged[k]; ok {
			tail[i].Verbs = append(tail[i].Verbs, r.Verbs...)
			continue
		}
		merged[k] = len(tail)
		c := r
		c.Verbs = slices.Clone(r.Verbs)
		tail = append(tail, c)
	}
	return append(out, tail...)
}

func sortedUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// FullAuthority is cluster-admin's rules: every verb on every resource
// and non-resource URL. Setting or changing a ClusterRole's
// aggregationRule requires holding them.
var FullAuthority = []PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// ConfirmNoEscalation returns nil when the rules u holds in namespace
// ("" for a ClusterRole or ClusterRoleBinding: only ClusterRoleBindings
// count) cover rules, and otherwise an *EscalationError with kube's text:
//
//	user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
//	{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}
//
// The missing rules are compacted (CompactRules), one a line, sorted; the
// namespace does not appear. When bindings of u name missing roles, kube
// appends "; resolution errors: [...]" (with storage's plural resource
// names). The registry wraps the error as kube does:
// ForbiddenMessage("roles", name, err) in a 403 Forbidden Status.
func (z *Authorizer) ConfirmNoEscalation(u *request.User, namespace string, rules []PolicyRule) error {
	if u == nil {
		return ErrNoUser
	}
	owner, errs := z.rules(u, namespace, true)
	ok, missing := Covers(owner, rules)
	if ok {
		return nil
	}
	return &EscalationError{User: u.Name, Groups: u.Groups, Missing: CompactRules(missing), Resolution: errs}
}

// ConfirmAggregationRule is kube's check on a ClusterRole write that sets
// or changes an aggregationRule (old or new has one): u must hold
// FullAuthority cluster-wide; otherwise the error's text is kube's "must
// have cluster-admin privileges to use the aggregationRule".
func (z *Authorizer) ConfirmAggregationRule(u *request.User) error {
	err := z.ConfirmNoEscalation(u, "", FullAuthority)
	if e, ok := err.(*EscalationError); ok {
		e.Message = "must have cluster-admin privileges to use the aggregationRule"
	}
	return err
}

// EscalationAllowed reports whether u may grant anything: a member of
// system:masters (kube's loopback and super-user group).
func EscalationAllowed(u *request.User) bool {
	return u != nil && u.InGroup(request.SystemPrivileged)
}

// RoleEscalationAuthorized reports whether z allows u the verb escalate
// on the role the request info writes (roles or clusterroles of
// rbac.authorization.k8s.io, by name and namespace), as kube asks before
// a Role or ClusterRole write: if so, the rules need not be covered.
func RoleEscalationAuthorized(ctx context.Context, z authz.Authorizer, u *request.User, info *request.Info) bool {
	if z == nil || u == nil || info == nil || !info.IsResourceRequest || info.APIGroup != GroupName ||
		(info.Resource != "roles" && info.Resource != "clusterroles") {
		return false
	}
	d, _, _ := z.Authorize(ctx, authz.Attributes{
		User: u, ResourceRequest: true, Verb: "escalate", APIGroup: info.APIGroup, APIVersion: "*",
		Resource: info.Resource, Name: info.Name, Namespace: info.Namespace,
	})
	return d == authz.Allow
}

// BindingAuthorized reports whether z allows u the verb bind on the role
// ref names, in bindingNamespace ("" for a ClusterRoleBinding), as kube
// asks before a binding write: if so, the role's rules need not be
// covered.
func BindingAuthorized(ctx context.Context, z authz.Authorizer, u *request.User, ref RoleRef, bindingNamespace string) bool {
	if z == nil || u == nil {
		return false
	}
	a := authz.Attributes{User: u, ResourceRequest: true, Verb: "bind", Namespace: bindingNamespace,
		APIGroup: ref.APIGroup, APIVersion: "*", Name: ref.Name}
	switch ref.Kind {
	case "ClusterRole":
		a.Resource = "clusterroles"
	case "Role":
		a.Resource = "roles"
	default:
		return false
	}
	d, _, _ := z.Authorize(ctx, a)
	return d == authz.Allow
}

// CheckRoleWrite is kube's guard on a Role or ClusterRole create or
// update (info is the request's; az the server's whole authorizer, which
// kube asks, not RBAC alone): allowed for system:masters, for a user az
// allows to escalate the role, or when the user holds rules in the
// request's namespace; aggregation (the new or the old ClusterRole has
// an aggregationRule) also requires FullAuthority. The error is an
// *EscalationError for a 403.
func (z *Authorizer) CheckRoleWrite(ctx context.Context, az authz.Authorizer, u *request.User, info *request.Info, rules []PolicyRule, aggregation bool) error {
	if EscalationAllowed(u) || RoleEscalationAuthorized(ctx, az, u, info) {
		return nil
	}
	ns := ""
	if info != nil {
		ns = info.Namespace
	}
	if err := z.ConfirmNoEscalation(u, ns, rules); err != nil {
		return err
	}
	if aggregation {
		return z.ConfirmAggregationRule(u)
	}
	return nil
}

// CheckBindingWrite is kube's guard on a RoleBinding (namespace) or
// ClusterRoleBinding ("") create or update: allowed for system:masters,
// for a user az allows to bind the role ref names, or when the user
// holds the role's rules there. A missing role is RulesOfRef's
// *NotFoundError (404); a refusal an *EscalationError (403).
func (z *Authorizer) CheckBindingWrite(ctx context.Context, az authz.Authorizer, u *request.User, namespace string, ref RoleRef) error {
	if EscalationAllowed(u) || BindingAuthorized(ctx, az, u, ref, namespace) {
		return nil
	}
	rules, err := z.RulesOfRef(namespace, ref)
	if err != nil {
		return err
	}
	return z.ConfirmNoEscalation(u, namespace, rules)
}
