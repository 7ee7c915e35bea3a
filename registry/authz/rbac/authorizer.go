package rbac

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

// Authorizer is kube's RBAC authorizer over the roles and bindings the
// embedding registry feeds it (Set… and Delete… as the objects change),
// indexed by subject: a decision looks up the bindings of the user's
// name and of each of its groups, never scanning the others.
//
// An Authorizer is safe for concurrent use. Reads (decisions, RulesFor,
// the escalation checks) take no lock: they load the current state, an
// immutable value, with one atomic read. Writes are serialized by a
// mutex and publish a new state made copy-on-write: the few maps a write
// changes are copied one shard each (see cow), the rest shared, so a
// write costs O(subjects × (n/128 + 128)) for n indexed keys, and a
// reader sees each write whole or not at all. The objects passed to Set…
// are kept as they are: the caller must not modify them afterwards.
type Authorizer struct {
	state atomic.Pointer[state]

	// mu serializes writers; the bindings by name are the writers' (to
	// unindex a binding that is replaced or deleted).
	mu                  sync.Mutex
	roleBindings        map[nsName]*binding
	clusterRoleBindings map[string]*binding
}

// state is one immutable version of the Authorizer's roles and indexes.
type state struct {
	roles        cow[nsName, *Role] // hashed by hashPair(namespace, name)
	clusterRoles cow[string, *ClusterRole]
	// The ClusterRoleBindings' grants by user name and by group, and the
	// RoleBindings' by namespace and user name or group.
	clusterUsers, clusterGroups cow[string, []grant]
	localUsers, localGroups     cow[nsName, []grant]
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

// binding is a RoleBinding or (cluster) a ClusterRoleBinding. A
// RoleBinding's grants are indexed under its namespace, and are looked up
// only for a request in that namespace, even if the namespace is empty
// (an object the registry would not store).
type binding struct {
	cluster   bool
	namespace string // "" for a ClusterRoleBinding
	name      string
	subjects  []Subject
	ref       RoleRef
	roleHash  uint64 // of the role ref names, in its map
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
	z := &Authorizer{roleBindings: map[nsName]*binding{}, clusterRoleBindings: map[string]*binding{}}
	z.state.Store(&state{})
	return z
}

// update publishes the state fn makes from a copy of the current one.
// The caller holds mu.
func (z *Authorizer) update(fn func(s *state)) {
	s := *z.state.Load()
	fn(&s)
	z.state.Store(&s)
}

// SetRole adds or replaces the Role of r's namespace and name.
func (z *Authorizer) SetRole(r *Role) {
	k := nsName{r.Metadata.Namespace, r.Metadata.Name}
	h := hashPair(hashString(k.namespace), hashString(k.name))
	z.mu.Lock()
	defer z.mu.Unlock()
	z.update(func(s *state) { s.roles = s.roles.with(h, k, r) })
}

// DeleteRole removes a Role; bindings to it stay, and resolve to nothing.
func (z *Authorizer) DeleteRole(namespace, name string) {
	k := nsName{namespace, name}
	h := hashPair(hashString(namespace), hashString(name))
	z.mu.Lock()
	defer z.mu.Unlock()
	z.update(func(s *state) { s.roles = s.roles.without(h, k) })
}

// SetClusterRole adds or replaces the ClusterRole of r's name.
func (z *Authorizer) SetClusterRole(r *ClusterRole) {
	h := hashString(r.Metadata.Name)
	z.mu.Lock()
	defer z.mu.Unlock()
	z.update(func(s *state) { s.clusterRoles = s.clusterRoles.with(h, r.Metadata.Name, r) })
}

// DeleteClusterRole removes a ClusterRole.
func (z *Authorizer) DeleteClusterRole(name string) {
	h := hashString(name)
	z.mu.Lock()
	defer z.mu.Unlock()
	z.update(func(s *state) { s.clusterRoles = s.clusterRoles.without(h, name) })
}

// SetRoleBinding adds or replaces the RoleBinding of b's namespace and name.
func (z *Authorizer) SetRoleBinding(b *RoleBinding) {
	nb := newBinding(false, b.Metadata.Namespace, b.Metadata.Name, b.Subjects, b.RoleRef)
	k := nsName{nb.namespace, nb.name}
	z.mu.Lock()
	defer z.mu.Unlock()
	old := z.roleBindings[k]
	z.roleBindings[k] = nb
	z.update(func(s *state) {
		if old != nil {
			s.unindex(old)
		}
		s.index(nb)
	})
}

// DeleteRoleBinding removes a RoleBinding.
func (z *Authorizer) DeleteRoleBinding(namespace, name string) {
	k := nsName{namespace, name}
	z.mu.Lock()
	defer z.mu.Unlock()
	if old := z.roleBindings[k]; old != nil {
		delete(z.roleBindings, k)
		z.update(func(s *state) { s.unindex(old) })
	}
}

// SetClusterRoleBinding adds or replaces the ClusterRoleBinding of b's name.
func (z *Authorizer) SetClusterRoleBinding(b *ClusterRoleBinding) {
	nb := newBinding(true, "", b.Metadata.Name, b.Subjects, b.RoleRef)
	z.mu.Lock()
	defer z.mu.Unlock()
	old := z.clusterRoleBindings[nb.name]
	z.clusterRoleBindings[nb.name] = nb
	z.update(func(s *state) {
		if old != nil {
			s.unindex(old)
		}
		s.index(nb)
	})
}

// DeleteClusterRoleBinding removes a ClusterRoleBinding.
func (z *Authorizer) DeleteClusterRoleBinding(name string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if old := z.clusterRoleBindings[name]; old != nil {
		delete(z.clusterRoleBindings, name)
		z.update(func(s *state) { s.unindex(old) })
	}
}

func newBinding(cluster bool, namespace, name string, subjects []Subject, ref RoleRef) *binding {
	b := &binding{cluster: cluster, namespace: namespace, name: name, subjects: subjects, ref: ref, allowed: make([]string, len(subjects))}
	b.roleHash = hashString(ref.Name)
	if ref.Kind == "Role" {
		b.roleHash = hashPair(hashString(namespace), b.roleHash)
	}
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
	if b.cluster {
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

// change replaces the grants of subject k of b's kind of binding with
// what fn makes of them (a new slice: published slices are never
// modified).
func (s *state) change(b *binding, k subjectKey, fn func([]grant) []grant) {
	h := hashString(k.name)
	if b.cluster {
		m := &s.clusterUsers
		if k.kind == kindGroup {
			m = &s.clusterGroups
		}
		gs, _ := m.get(h, k.name)
		if gs = fn(gs); len(gs) > 0 {
			*m = m.with(h, k.name, gs)
		} else {
			*m = m.without(h, k.name)
		}
		return
	}
	m := &s.localUsers
	if k.kind == kindGroup {
		m = &s.localGroups
	}
	lk, lh := nsName{b.namespace, k.name}, hashPair(hashString(b.namespace), h)
	gs, _ := m.get(lh, lk)
	if gs = fn(gs); len(gs) > 0 {
		*m = m.with(lh, lk, gs)
	} else {
		*m = m.without(lh, lk)
	}
}

func (s *state) index(b *binding) {
	for i := range b.subjects {
		if k, ok := key(&b.subjects[i], b.namespace); ok {
			s.change(b, k, func(gs []grant) []grant {
				return append(slices.Clip(gs), grant{b, i})
			})
		}
	}
}

func (s *state) unindex(b *binding) {
	for i := range b.subjects {
		if k, ok := key(&b.subjects[i], b.namespace); ok {
			s.change(b, k, func(gs []grant) []grant {
				var out []grant
				for _, g := range gs {
					if g.b != b {
						out = append(out, g)
					}
				}
				return out
			})
		}
	}
}

// appliesTo is kube's appliesToUser: whether subject s of a binding in
// namespace ns names u.
func appliesTo(u *request.User, s *Subject, ns string) bool {
	switch s.Kind {
	case UserKind:
		return u.Name == s.Name
	case GroupKind:
		return u.InGroup(s.Name)
	case ServiceAccountKind:
		if s.Namespace != "" {
			ns = s.Namespace
		}
		return ns != "" && serviceAccountMatches(u.Name, ns, s.Name)
	}
	return false
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

// rulesOf resolves the role of b; plural selects the resource name of a
// NotFoundError (see NotFoundError).
func (s *state) rulesOf(b *binding, plural bool) ([]PolicyRule, error) {
	switch b.ref.Kind {
	case "Role":
		if r, ok := s.roles.get(b.roleHash, nsName{b.namespace, b.ref.Name}); ok {
			return r.Rules, nil
		}
		if plural {
			return nil, &NotFoundError{"roles", b.ref.Name}
		}
		return nil, &NotFoundError{"role", b.ref.Name}
	case "ClusterRole":
		if r, ok := s.clusterRoles.get(b.roleHash, b.ref.Name); ok {
			return r.Rules, nil
		}
		if plural {
			return nil, &NotFoundError{"clusterroles", b.ref.Name}
		}
		return nil, &NotFoundError{"clusterrole", b.ref.Name}
	}
	return nil, &UnsupportedRoleRefError{b.ref.Kind}
}

// RulesOfRef is the rules a binding in namespace ("" for a
// ClusterRoleBinding) with ref grants, as kube's GetRoleReferenceRules
// reads them from storage when a binding is written: a missing role is a
// *NotFoundError naming the plural resource (`roles.rbac.authorization.k8s.io
// "x" not found`, which kube answers with 404).
func (z *Authorizer) RulesOfRef(namespace string, ref RoleRef) ([]PolicyRule, error) {
	return z.state.Load().rulesOf(newBinding(namespace == "", namespace, "", nil, ref), true)
}

// visit calls fn with each binding that applies to u in namespace, once
// each, through the first of its subjects that names u: the
// ClusterRoleBindings, then (for a namespace) the RoleBindings there. It
// stops when fn returns false.
func (s *state) visit(u *request.User, namespace string, fn func(g grant) bool) {
	hu := hashString(u.Name)
	gs, _ := s.clusterUsers.get(hu, u.Name)
	if !visitGrants(gs, u, fn) {
		return
	}
	for _, group := range u.Groups {
		gs, _ := s.clusterGroups.get(hashString(group), group)
		if !visitGrants(gs, u, fn) {
			return
		}
	}
	if namespace == "" || s.localUsers.len()+s.localGroups.len() == 0 {
		return
	}
	hns := hashString(namespace)
	gs, _ = s.localUsers.get(hashPair(hns, hu), nsName{namespace, u.Name})
	if !visitGrants(gs, u, fn) {
		return
	}
	for _, group := range u.Groups {
		gs, _ := s.localGroups.get(hashPair(hns, hashString(group)), nsName{namespace, group})
		if !visitGrants(gs, u, fn) {
			return
		}
	}
}

// visitGrants is visit over one key's grants; false if fn stopped it.
func visitGrants(gs []grant, u *request.User, fn func(g grant) bool) bool {
	for _, g := range gs {
		if g.first(u) && !fn(g) {
			return false
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
	s := z.state.Load()
	var reason string
	var failed []grant
	s.visit(u, a.Namespace, func(g grant) bool {
		rules, err := s.rulesOf(g.b, false)
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
		return authz.Allow, reason, nil
	}
	if len(failed) == 0 {
		return authz.NoOpinion, "", nil
	}
	sortGrants(failed)
	errs := make([]error, len(failed))
	for i, g := range failed {
		_, errs[i] = s.rulesOf(g.b, false)
	}
	return authz.NoOpinion, "RBAC: " + aggregate(errs), nil
}

// sortGrants orders grants as kube's listers would list their bindings,
// made deterministic: ClusterRoleBindings before RoleBindings, each by
// name.
func sortGrants(gs []grant) {
	slices.SortFunc(gs, func(x, y grant) int {
		if x.b.cluster != y.b.cluster {
			if x.b.cluster {
				return -1
			}
			return 1
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
	s := z.state.Load()
	s.visit(u, namespace, func(g grant) bool {
		gs = append(gs, g)
		return true
	})
	sortGrants(gs)
	var rules []PolicyRule
	var errs []error
	for _, g := range gs {
		r, err := s.rulesOf(g.b, plural)
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
