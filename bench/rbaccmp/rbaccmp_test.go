package rbaccmp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	kubevalidation "k8s.io/component-helpers/auth/rbac/validation"
	kuberegistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
	"github.com/kapi-dev/kapi/registry/request"
)

var ctx = context.Background()

// The vocabulary of the random objects and requests: small, so that
// rules, subjects and requests meet often.
var (
	verbs      = []string{"get", "list", "create", "delete", "*"}
	groups     = []string{"", "apps", "*"}
	resources  = []string{"pods", "pods/status", "pods/log", "*/status", "deployments", "deployments/scale", "*/scale", "*", "pods/*"}
	names      = []string{"a", "b"}
	urls       = []string{"/healthz", "/healthz/etcd", "/apis", "/apis/*", "/api*", "*", "/version/"}
	namespaces = []string{"n0", "n1"}
	users      = []string{"u0", "u1", "system:serviceaccount:n0:sa", "system:serviceaccount:n1:sa"}
	userGroups = []string{"g0", "g1", "system:authenticated"}
)

func pick(r *rand.Rand, from []string, max int) []string {
	var out []string
	for n := r.IntN(max + 1); len(out) < n; {
		out = append(out, from[r.IntN(len(from))])
	}
	return out
}

func randomRules(r *rand.Rand) []rbac.PolicyRule {
	var rules []rbac.PolicyRule
	for n := 1 + r.IntN(4); len(rules) < n; {
		rule := rbac.PolicyRule{Verbs: pick(r, verbs, 2)}
		if r.IntN(3) == 0 {
			rule.NonResourceURLs = pick(r, urls, 2)
		} else {
			rule.APIGroups, rule.Resources = pick(r, groups, 2), pick(r, resources, 2)
			if r.IntN(3) == 0 {
				rule.ResourceNames = pick(r, names, 1)
			}
		}
		rules = append(rules, rule)
	}
	return rules
}

func randomSubjects(r *rand.Rand) []rbac.Subject {
	var out []rbac.Subject
	for n := 1 + r.IntN(2); len(out) < n; {
		switch r.IntN(4) {
		case 0:
			out = append(out, rbac.Subject{Kind: rbac.UserKind, APIGroup: rbac.GroupName, Name: users[r.IntN(len(users))]})
		case 1:
			out = append(out, rbac.Subject{Kind: rbac.GroupKind, APIGroup: rbac.GroupName, Name: userGroups[r.IntN(len(userGroups))]})
		case 2:
			out = append(out, rbac.Subject{Kind: rbac.ServiceAccountKind, Name: "sa"})
			if r.IntN(2) == 0 {
				out[len(out)-1].Namespace = namespaces[r.IntN(len(namespaces))]
			}
		default:
			out = append(out, rbac.Subject{Kind: "Robot", Name: users[r.IntN(len(users))]})
		}
	}
	return out
}

// random is a random set of objects; some bindings name missing roles.
func random(r *rand.Rand) *Objects {
	o := &Objects{}
	for i := 0; i < 4; i++ {
		o.ClusterRoles = append(o.ClusterRoles, rbac.ClusterRole{Metadata: rbac.ObjectMeta{Name: fmt.Sprint("cr", i)}, Rules: randomRules(r)})
		ns := namespaces[r.IntN(len(namespaces))]
		o.Roles = append(o.Roles, rbac.Role{Metadata: rbac.ObjectMeta{Namespace: ns, Name: fmt.Sprint("r", i)}, Rules: randomRules(r)})
	}
	ref := func() rbac.RoleRef {
		if r.IntN(2) == 0 {
			return rbac.RoleRef{APIGroup: rbac.GroupName, Kind: "ClusterRole", Name: fmt.Sprint("cr", r.IntN(5))}
		}
		return rbac.RoleRef{APIGroup: rbac.GroupName, Kind: "Role", Name: fmt.Sprint("r", r.IntN(5))}
	}
	for i := 0; i < 8; i++ {
		rr := ref()
		rr.Kind = "ClusterRole"
		o.ClusterRoleBindings = append(o.ClusterRoleBindings, rbac.ClusterRoleBinding{Metadata: rbac.ObjectMeta{Name: fmt.Sprint("crb", i)}, RoleRef: rr, Subjects: randomSubjects(r)})
		o.RoleBindings = append(o.RoleBindings, rbac.RoleBinding{Metadata: rbac.ObjectMeta{Namespace: namespaces[r.IntN(len(namespaces))], Name: fmt.Sprint("rb", i)}, RoleRef: ref(), Subjects: randomSubjects(r)})
	}
	return o
}

func randomRequest(r *rand.Rand) authz.Attributes {
	u := &request.User{Name: users[r.IntN(len(users))], Groups: pick(r, userGroups, 2)}
	if r.IntN(3) == 0 {
		return authz.Attributes{User: u, Verb: verbs[r.IntN(4)], Path: []string{"/healthz", "/healthz/etcd", "/apis", "/apis/apps", "/api", "/version/", "/"}[r.IntN(7)]}
	}
	a := authz.Attributes{User: u, ResourceRequest: true, Verb: verbs[r.IntN(4)], APIGroup: groups[r.IntN(2)], APIVersion: "v1",
		Resource: []string{"pods", "deployments", "secrets"}[r.IntN(3)]}
	if r.IntN(2) == 0 {
		a.Name = names[r.IntN(2)]
	}
	if r.IntN(3) == 0 {
		a.Subresource = []string{"status", "log", "scale"}[r.IntN(3)]
	}
	if r.IntN(4) != 0 {
		a.Namespace = namespaces[r.IntN(len(namespaces))]
	}
	return a
}

// reasons are the errors a NoOpinion's reason lists, as a set (kube's
// order is its listers', a map's).
func reasons(s string) []string {
	s = strings.TrimPrefix(s, "RBAC: ")
	if strings.HasPrefix(s, "[") {
		s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	}
	out := strings.Split(s, ", ")
	sort.Strings(out)
	return out
}

// TestSameDecisions: on random roles, bindings and requests, kapi's
// authorizer decides as kube's, with the same reasons for a NoOpinion,
// and RulesFor lists the same rules.
func TestSameDecisions(t *testing.T) {
	count := map[string]int{}
	defer func() { t.Logf("decisions compared: %v", count) }()
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		o := random(r)
		z := o.Kapi()
		kube, err := o.Kube()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100; i++ {
			a := randomRequest(r)
			d, reason, _ := z.Authorize(ctx, a)
			kd, kreason, _ := kube.Authorize(ctx, KubeAttributes(a))
			if d != Decision(kd) {
				t.Fatalf("seed %d, %+v (user %+v): kapi %v %q; kube %v %q\nobjects %+v", seed, a, *a.User, d, reason, kd, kreason, o)
			}
			switch {
			case d == authz.Allow:
				count["allowed"]++
			case reason != "":
				count["no opinion, with a reason"]++
			default:
				count["no opinion"]++
			}
			switch {
			case d == authz.Allow && !strings.HasPrefix(reason, "RBAC: allowed by "):
				t.Errorf("seed %d: allow reason %q", seed, reason)
			case d == authz.NoOpinion && !slices.Equal(reasons(reason), reasons(kreason)):
				t.Errorf("seed %d, %+v: kapi reason %q; kube %q", seed, a, reason, kreason)
			}
		}
		for _, u := range users {
			for _, ns := range append([]string{""}, namespaces...) {
				ku := &request.User{Name: u, Groups: []string{"g0"}}
				got := z.RulesFor(ctx, ku, ns)
				kres, knon, kinc, kerr := kube.RulesFor(ctx, &user.DefaultInfo{Name: u, Groups: []string{"g0"}}, ns)
				var g, w []string
				for _, x := range got.Resource {
					g = append(g, fmt.Sprint(x.Verbs, x.APIGroups, x.Resources, x.ResourceNames))
				}
				for _, x := range got.NonResource {
					g = append(g, fmt.Sprint(x.Verbs, x.NonResourceURLs))
				}
				for _, x := range kres {
					w = append(w, fmt.Sprint(x.GetVerbs(), x.GetAPIGroups(), x.GetResources(), x.GetResourceNames()))
				}
				for _, x := range knon {
					w = append(w, fmt.Sprint(x.GetVerbs(), x.GetNonResourceURLs()))
				}
				sort.Strings(g)
				sort.Strings(w)
				kerrText := ""
				if kerr != nil {
					kerrText = kerr.Error()
				}
				if !slices.Equal(g, w) || got.Incomplete != kinc || !slices.Equal(reasons(got.Err), reasons(kerrText)) {
					t.Errorf("seed %d, RulesFor(%s, %q): kapi %v %v %q; kube %v %v %q", seed, u, ns, g, got.Incomplete, got.Err, w, kinc, kerrText)
				}
			}
		}
	}
}

func kubeRules(t *testing.T, rules []rbac.PolicyRule) []rbacv1.PolicyRule {
	out := []rbacv1.PolicyRule{}
	if err := convert(rules, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSameCovers: Covers and the escalation message are kube's on random
// rules.
func TestSameCovers(t *testing.T) {
	refused := 0
	defer func() { t.Logf("%d of 2000 refused", refused) }()
	for seed := uint64(0); seed < 2000; seed++ {
		r := rand.New(rand.NewPCG(seed, 2))
		owner, servant := randomRules(r), randomRules(r)
		ok, missing := rbac.Covers(owner, servant)
		kok, kmissing := kubevalidation.Covers(kubeRules(t, owner), kubeRules(t, servant))
		if ok != kok || len(missing) != len(kmissing) {
			t.Fatalf("seed %d: Covers(%v, %v): kapi %v %v; kube %v %v", seed, owner, servant, ok, missing, kok, kmissing)
		}
		// The escalation error's text, from a ClusterRoleBinding of the owner's rules.
		o := &Objects{
			ClusterRoles:        []rbac.ClusterRole{{Metadata: rbac.ObjectMeta{Name: "owner"}, Rules: owner}},
			ClusterRoleBindings: []rbac.ClusterRoleBinding{{Metadata: rbac.ObjectMeta{Name: "b"}, RoleRef: rbac.RoleRef{APIGroup: rbac.GroupName, Kind: "ClusterRole", Name: "owner"}, Subjects: []rbac.Subject{{Kind: rbac.UserKind, Name: "alice"}}}},
		}
		kubeObjects := struct {
			crs  []*rbacv1.ClusterRole
			crbs []*rbacv1.ClusterRoleBinding
		}{}
		var cr rbacv1.ClusterRole
		var crb rbacv1.ClusterRoleBinding
		_ = convert(o.ClusterRoles[0], &cr)
		_ = convert(o.ClusterRoleBindings[0], &crb)
		kubeObjects.crs, kubeObjects.crbs = []*rbacv1.ClusterRole{&cr}, []*rbacv1.ClusterRoleBinding{&crb}
		resolver, _ := kuberegistryvalidation.NewTestRuleResolver(nil, nil, kubeObjects.crs, kubeObjects.crbs)
		alice := &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated", "dev"}}
		kerr := kuberegistryvalidation.ConfirmNoEscalation(genericapirequest.WithUser(ctx, alice), resolver, kubeRules(t, servant))
		err := o.Kapi().ConfirmNoEscalation(&request.User{Name: "alice", Groups: []string{"system:authenticated", "dev"}}, "", servant)
		if err != nil {
			refused++
		}
		if (err == nil) != (kerr == nil) || err != nil && err.Error() != kerr.Error() {
			t.Fatalf("seed %d: ConfirmNoEscalation:\nkapi %v\nkube %v", seed, err, kerr)
		}
	}
}

// BenchmarkAuthorize decides the same two requests on kapi's and kube's
// authorizers holding the same objects, as bindings grow.
func BenchmarkAuthorize(b *testing.B) {
	allowed, denied := ScaleRequests()
	for _, n := range []int{10, 100, 1000, 10000} {
		o := Scale(n)
		z := o.Kapi()
		kube, err := o.Kube()
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			a    authz.Attributes
			want authz.Decision
		}{{"allowed", allowed, authz.Allow}, {"denied", denied, authz.NoOpinion}} {
			b.Run(fmt.Sprintf("bindings=%d/%s/kapi", n, c.name), func(b *testing.B) {
				if d, _, _ := z.Authorize(ctx, c.a); d != c.want {
					b.Fatalf("got %v; want %v", d, c.want)
				}
				b.ReportAllocs()
				for b.Loop() {
					z.Authorize(ctx, c.a)
				}
			})
			b.Run(fmt.Sprintf("bindings=%d/%s/kube", n, c.name), func(b *testing.B) {
				ka := KubeAttributes(c.a)
				if d, _, _ := kube.Authorize(ctx, ka); Decision(d) != c.want {
					b.Fatalf("got %v; want %v", d, c.want)
				}
				b.ReportAllocs()
				for b.Loop() {
					kube.Authorize(ctx, ka)
				}
			})
		}
	}
}
