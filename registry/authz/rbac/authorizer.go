package rbac

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

// Authorizer is kube's RBAC authorizer over the roles and bindings the
// embedding registry feeds it (Set… and Delete… as the objects change),
// indexed by subject: a decision looks up the bindings of the user's
// name and of each of its groups, never scanning the others.
//
// An Authorizer is safe for concurrent use. Decisions take a read lock;
// a write takes the write lock for the time it needs to (un)index one
// object's subjects, O(subjects), so reads never wait behind a rebuild.
// The objects passed to Set… are kept as they are: the caller must not
// modify them afterwards.
type Authorizer struct {
	mu                  sync.RWMutex
	roles               map[string]map[string]*Role // by namespace, name
	clusterRoles        map[string]*ClusterRole
	roleBindings        map[nsName]*binding
	clusterRoleBindings map[string]*binding
	// cluster indexes the ClusterRoleBindings' subjects, local the
	// RoleBindings' by their namespace. (Maps keyed by plain strings:
	// their lookups take the runtime's fast path, twice as fast as a
	// struct key's.)
	cluster subjects
	local   map[string]*subjects
}

// subjects are the grants of a set of bindings by user name (users and
// service accounts) and by group.
type subjects struct {
	users  map[string][]grant
	groups map[string][]grant
}

func (s *subjects) of(k subjectKey) map[string][]grant {
	if k.kind == kindGroup {
		return s.groups
	}
	return s.users
}

var (
	_ authz.Authorizer   = (*Authorizer)(nil)
	_ authz.RuleResolver = (*Authorizer)(nil)
)

type nsName struct{ namespace, name string }

type subjectKind uint8

const (
	kindUser subjectKind = iota + 1 // users and service accounts (by user name)
	kindGroup
)

type subjectKey struct {
	kind subjectKind
	name string
}

// binding is a RoleBinding (namespace set) or a ClusterRoleBinding.
type binding struct {
	namespace string
	name      string
	subjects  []Subject
	ref       RoleRef
	// allowed[i] is the reason of an Allow through subjects[i], made once
	// here so that a decision allocates nothing.
	allowed []string
}

// grant is one subject of one binding, as the index holds it.
type grant struct {
	b       *binding
	subject int
}

// New returns an empty Authorizer: it allows nothing until roles and
// bindings are set (see Bootstrap for kube's defaults).
func New() *Authorizer {
	return &Authorizer{
		roles:               map[string]map[string]*Role{},
		clusterRoles:        map[string]*ClusterRole{},
		roleBindings:        map[nsName]*binding{},
		clusterRoleBindings: map[string]*binding{},
		cluster:             subjects{map[string][]grant{}, map[string][]grant{}},
		local:               map[string]*subjects{},
	}
}

// SetRole adds or replaces the Role of r's namespace and name.
func (z *Authorizer) SetRole(r *Role) {
	z.mu.Lock()
	byName := z.roles[r.Metadata.Namespace]
	if byName == nil {
		byName = map[string]*Role{}
		z.roles[r.Metadata.Namespace] = byName
	}
	byName[r.Metadata.Name] = r
	z.mu.Unlock()
}

// DeleteRole removes a Role; bindings to it stay, and resolve to nothing.
func (z *Authorizer) DeleteRole(namespace, name string) {
	z.mu.Lock()
	if byName := z.roles[namespace]; byName != nil {
		delete(byName, name)
		if len(byName) == 0 {
			delete(z.roles, namespace)
		}
	}
	z.mu.Unlock()
}

// SetClusterRole adds or replaces the ClusterRole of r's name.
func (z *Authorizer) SetClusterRole(r *ClusterRole) {
	z.mu.Lock()
	z.clusterRoles[r.Metadata.Name] = r
	z.mu.Unlock()
}

// DeleteClusterRole removes a ClusterRole.
func (z *Authorizer) DeleteClusterRole(name string) {
	z.mu.Lock()
	delete(z.clusterRoles, name)
	z.mu.Unlock()
}

// SetRoleBinding adds or replaces the RoleBinding of b's namespace and name.
func (z *Authorizer) SetRoleBinding(b *RoleBinding) {
	nb := newBinding(b.Metadata.Namespace, b.Metadata.Name, b.Subjects, b.RoleRef)
	k := nsName{nb.namespace, nb.name}
	z.mu.Lock()
	defer z.mu.Unlock()
	if old := z.roleBindings[k]; old != nil {
		z.unindex(old)
	}
	z.roleBindings[k] = nb
	z.index(nb)
}

// DeleteRoleBinding removes a RoleBinding.
func (z *Authorizer) DeleteRoleBinding(namespace, name string) {
	k := nsName{namespace, name}
	z.mu.Lock()
	defer z.mu.Unlock()
	if old := z.roleBindings[k]; old != nil {
		z.unindex(old)
		delete(z.roleBindings, k)
	}
}

// SetClusterRoleBinding adds or replaces the ClusterRoleBinding of b's name.
func (z *Authorizer) SetClusterRoleBinding(b *ClusterRoleBinding) {
	nb := newBinding("", b.Metadata.Name, b.Subjects, b.RoleRef)
	z.mu.Lock()
	defer z.mu.Unlock()
	if old := z.clusterRoleBindings[nb.name]; old != nil {
		z.unindex(old)
	}
	z.clusterRoleBindings[nb.name] = nb
	z.index(nb)
}

// DeleteClusterRoleBinding removes a ClusterRoleBinding.
func (z *Authorizer) DeleteClusterRoleBinding(name string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if old := z.clusterRoleBindings[name]; old != nil {
		z.unindex(old)
		delete(z.clusterRoleBindings, name)
	}
}

func newBinding(namespace, name string, subjects []Subject, ref RoleRef) *binding {
	b := &binding{namespace: namespace, name: name, subjects: subjects, ref: ref, allowed: make([]string, len(subjects))}
	for i := range subjects {
		b.allowed[i] = "RBAC: allowed by " + b.describe(i)
	}
	return b
}

// describe is kube's description of the source of a rule.
func (b *binding) describe(i int) string {
	s := &b.subjects[i]
	subject := fmt.Sprintf("%s %q", s.Kind, s.Name)
	if s.Kind == ServiceAccountKind {
		ns := s.Namespace
		if ns == "" {
			ns = b.namespace
		}
		subject = fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
	}
	if b.namespace == "" {
		return fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", b.name, b.ref.Kind, b.ref.Name, subject)
	}
	return fmt.Sprintf("RoleBinding %q of %s %q to %s", b.name+"/"+b.namespace, b.ref.Kind, b.ref.Name, subject)
}

// key is the index key of subject s of a binding in namespace ns ("" for
// a ClusterRoleBinding): a service account is the user it authenticates
// as, system:serviceaccount:NS:NAME, its namespace defaulting to the
// binding's; one with no namespace at all, or a subject of another kind,
// applies to no one and is not indexed.
func key(s *Subject, ns string) (subjectKey, bool) {
	switch s.Kind {
	case UserKind:
		return subjectKey{kindUser, s.Name}, true
	case GroupKind:
		return subjectKey{kindGroup, s.Name}, true
	case ServiceAccountKind:
		if s.Namespace != "" {
			ns = s.Namespace
		}
		if ns == "" {
			return subjectKey{}, false
		}
		return subjectKey{kindUser, ServiceAccountUsernamePrefix + ns + ":" + s.Name}, true
	}
	return subjectKey{}, false
}

func (z *Authorizer) index(b *binding) {
	for i := range b.subjects {
		k, ok := key(&b.subjects[i], b.namespace)
		if !ok {
			continue
		}
		s := &z.cluster
		if b.namespace != "" {
			if s = z.local[b.namespace]; s == nil {
				s = &subjects{map[string][]grant{}, map[string][]grant{}}
				z.local[b.namespace] = s
			}
		}
		m := s.of(k)
		m[k.name] = append(m[k.name], grant{b, i})
	}
}

func (z *Authorizer) unindex(b *binding) {
	drop := func(gs []grant) []grant {
		return slices.DeleteFunc(gs, func(g grant) bool { return g.b == b })
	}
	for i := range b.subjects {
		k, ok := key(&b.subjects[i], b.namespace)
		if !ok {
			continue
		}
		s := &z.cluster
		if b.namespace != "" {
			if s = z.local[b.namespace]; s == nil {
				continue
			}
		}
		m := s.of(k)
		if gs := drop(m[k.name]); len(gs) > 0 {
			m[k.name] = gs
		} else {
			delete(m, k.name)
		}
		if b.namespace != "" && len(s.users)+len(s.groups) == 0 {
			delete(z.local, b.namespace)
		}
	}
}

// appliesTo is kube's appliesToUser: whether subject s of a binding in
// namespace ns names u.
func appliesTo(u *request.User, s *Subject, ns string) bool {
	k, ok := key(s, ns)
	if !ok {
		return false
	}
	if k.kind == kindGroup {
		return u.InGroup(k.name)
	}
	if s.Kind == ServiceAccountKind {
		// k.name is built; compare without it.
		if s.Namespace != "" {
			ns = s.Namespace
		}
		return serviceAccountMatches(u.Name, ns, s.Name)
	}
	return u.Name == k.name
}

func serviceAccountMatches(user, ns, name string) bool {
	p := ServiceAccountUsernamePrefix
	return len(user) == len(p)+len(ns)+1+len(name) &&
		user[:len(p)] == p && user[len(p):len(p)+len(ns)] == ns &&
		user[len(p)+len(ns)] == ':' && user[len(p)+len(ns)+1:] == name
}

// first reports whether g's subject is the first of its binding that
// names u: kube visits a binding once, through that subject.
func (g grant) first(u *request.User) bool {
	for i := 0; i < g.subject; i++ {
		if appliesTo(u, &g.b.subjects[i], g.b.namespace) {
			return false
		}
	}
	return true
}

// rulesOf resolves ref for a binding in namespace ns; plural selects the
// resource name of a NotFoundError (see NotFoundError).
func (z *Authorizer) rulesOf(ref RoleRef, ns string, plural bool) ([]PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		if r := z.roles[ns][ref.Name]; r != nil {
			return r.Rules, nil
		}
		if plural {
			return nil, &NotFoundError{"roles", ref.Name}
		}
		return nil, &NotFoundError{"role", ref.Name}
	case "ClusterRole":
		if r := z.clusterRoles[ref.Name]; r != nil {
			return r.Rules, nil
		}
		if plural {
			return nil, &NotFoundError{"clusterroles", ref.Name}
		}
		return nil, &NotFoundError{"clusterrole", ref.Name}
	}
	return nil, &UnsupportedRoleRefError{ref.Kind}
}

// RulesOfRef is the rules a binding in namespace ("" for a
// ClusterRoleBinding) with ref grants, as kube's GetRoleReferenceRules
// reads them from storage when a binding is written: a missing role is a
// *NotFoundError naming the plural resource (`roles.rbac.authorization.k8s.io
// "x" not found`, which kube answers with 404).
func (z *Authorizer) RulesOfRef(namespace string, ref RoleRef) ([]PolicyRule, error) {
	z.mu.RLock()
	defer z.mu.RUnlock()
	return z.rulesOf(ref, namespace, true)
}

// visit calls fn with each binding that applies to u in namespace, once
// each, through the first of its subjects that names u: the
// ClusterRoleBindings, then (for a namespace) the RoleBindings there. It
// stops when fn returns false. The caller holds the read lock.
func (z *Authorizer) visit(u *request.User, namespace string, fn func(g grant) bool) {
	if !visitSubjects(&z.cluster, u, fn) || namespace == "" {
		return
	}
	if s := z.local[namespace]; s != nil {
		visitSubjects(s, u, fn)
	}
}

// visitSubjects is visit over one set of bindings; false if fn stopped it.
func visitSubjects(s *subjects, u *request.User, fn func(g grant) bool) bool {
	for _, g := range s.users[u.Name] {
		if g.first(u) && !fn(g) {
			return false
		}
	}
	for _, group := range u.Groups {
		for _, g := range s.groups[group] {
			if g.first(u) && !fn(g) {
				return false
			}
		}
	}
	return true
}

// Authorize allows a when a rule of a role bound to its user (by name,
// group or service account) allows it, with kube's reason ("RBAC:
// allowed by ClusterRoleBinding …"). Otherwise it has no opinion; the
// reason is empty unless a binding that applies names a missing role,
// when it is kube's: `RBAC: clusterrole.rbac.authorization.k8s.io "x" not
// found` (several: `RBAC: [a, b]`). It never returns an error.
func (z *Authorizer) Authorize(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
	u := a.User
	if u == nil {
		return authz.NoOpinion, "", nil
	}
	var reason string
	var failed []grant
	z.mu.RLock()
	z.visit(u, a.Namespace, func(g grant) bool {
		rules, err := z.rulesOf(g.b.ref, g.b.namespace, false)
		if err != nil {
			failed = append(failed, g)
			return true
		}
		if RulesAllow(&a, rules...) {
			reason = g.b.allowed[g.subject]
			return false
		}
		return true
	})
	if reason != "" {
		z.mu.RUnlock()
		return authz.Allow, reason, nil
	}
	if len(failed) == 0 {
		z.mu.RUnlock()
		return authz.NoOpinion, "", nil
	}
	sortGrants(failed)
	errs := make([]error, len(failed))
	for i, g := range failed {
		_, errs[i] = z.rulesOf(g.b.ref, g.b.namespace, false)
	}
	z.mu.RUnlock()
	return authz.NoOpinion, "RBAC: " + aggregate(errs), nil
}

// sortGrants orders grants as kube's listers would list their bindings,
// made deterministic: ClusterRoleBindings before RoleBindings, each by
// name.
func sortGrants(gs []grant) {
	slices.SortFunc(gs, func(x, y grant) int {
		if c := cmp.Compare(x.b.namespace, y.b.namespace); c != 0 {
			return c
		}
		return cmp.Compare(x.b.name, y.b.name)
	})
}

// rules is kube's RulesFor: the rules of every binding that applies to u
// in namespace, in the order of sortGrants, and the errors met resolving
// them (plural: see NotFoundError).
func (z *Authorizer) rules(u *request.User, namespace string, plural bool) ([]PolicyRule, []error) {
	if u == nil {
		return nil, nil
	}
	var gs []grant
	z.mu.RLock()
	defer z.mu.RUnlock()
	z.visit(u, namespace, func(g grant) bool {
		gs = append(gs, g)
		return true
	})
	sortGrants(gs)
	var rules []PolicyRule
	var errs []error
	for _, g := range gs {
		r, err := z.rulesOf(g.b.ref, g.b.namespace, plural)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rules = append(rules, r...)
	}
	return rules, errs
}

// Rules is the rules u holds in namespace ("" for cluster-wide: only
// ClusterRoleBindings count), as kube's rule resolver lists them:
// ClusterRoleBindings' first, then the namespace's RoleBindings'. The
// error, when bindings name missing roles, lists them (the rules
// returned are all the others: RBAC only adds).
func (z *Authorizer) Rules(u *request.User, namespace string) ([]PolicyRule, error) {
	rules, errs := z.rules(u, namespace, false)
	return rules, joinErrors(errs)
}

// RulesFor is u's rules in namespace as SelfSubjectRulesReview reports
// them: each rule with resources as a ResourceRule, each with
// non-resource URLs as a NonResourceRule. As kube's RBAC authorizer, it
// reports Incomplete false; Err lists the bindings' missing roles.
func (z *Authorizer) RulesFor(_ context.Context, u *request.User, namespace string) authz.Rules {
	rules, errs := z.rules(u, namespace, false)
	var out authz.Rules
	for _, r := range rules {
		if len(r.Resources) > 0 {
			out.Resource = append(out.Resource, authz.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(r.NonResourceURLs) > 0 {
			out.NonResource = append(out.NonResource, authz.NonResourceRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	if len(errs) > 0 {
		out.Err = aggregate(errs)
	}
	return out
}
