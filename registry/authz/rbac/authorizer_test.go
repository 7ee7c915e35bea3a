package rbac

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

var ctx = context.Background()

func user(name string, groups ...string) *request.User {
	return &request.User{Name: name, Groups: groups}
}

func clusterRoleRef(name string) RoleRef {
	return RoleRef{APIGroup: GroupName, Kind: "ClusterRole", Name: name}
}
func roleRef(name string) RoleRef { return RoleRef{APIGroup: GroupName, Kind: "Role", Name: name} }

// withBootstrap is an Authorizer holding Bootstrap's defaults.
func withBootstrap() *Authorizer {
	z := New()
	crs, bs := Bootstrap()
	for i := range crs {
		z.SetClusterRole(&crs[i])
	}
	for i := range bs {
		z.SetClusterRoleBinding(&bs[i])
	}
	return z
}

// example is doc.go's worked example.
func example() *Authorizer {
	z := withBootstrap()
	z.SetClusterRole(&ClusterRole{Metadata: ObjectMeta{Name: "pod-reader"}, Rules: []PolicyRule{
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}},
	}})
	z.SetRole(&Role{Metadata: ObjectMeta{Namespace: "a", Name: "cm-editor"}, Rules: []PolicyRule{
		{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"configmaps"}},
	}})
	z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "a", Name: "read"}, RoleRef: clusterRoleRef("pod-reader"),
		Subjects: []Subject{{Kind: UserKind, APIGroup: GroupName, Name: "alice"}, {Kind: ServiceAccountKind, Name: "ci"}}})
	z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "a", Name: "edit"}, RoleRef: roleRef("cm-editor"),
		Subjects: []Subject{{Kind: GroupKind, APIGroup: GroupName, Name: "dev"}}})
	z.SetClusterRoleBinding(&ClusterRoleBinding{Metadata: ObjectMeta{Name: "gone"}, RoleRef: clusterRoleRef("missing"),
		Subjects: []Subject{{Kind: GroupKind, APIGroup: GroupName, Name: "dev"}}})
	return z
}

func in(ns string, a authz.Attributes) authz.Attributes { a.Namespace = ns; return a }

func TestWorkedExample(t *testing.T) {
	z := example()
	alice := user("alice", request.AllAuthenticated)
	bob := user("bob", "dev", request.AllAuthenticated)
	ci := user("system:serviceaccount:a:ci", "system:serviceaccounts", request.AllAuthenticated)
	anon := user(request.Anonymous, request.AllUnauthenticated)
	tests := []struct {
		name       string
		u          *request.User
		a          authz.Attributes
		want       authz.Decision
		wantReason string
	}{
		{"alice list pods in a", alice, in("a", res("list", "", "pods", "", "")), authz.Allow, `RBAC: allowed by RoleBinding "read/a" of ClusterRole "pod-reader" to User "alice"`},
		{"alice list pods in b", alice, in("b", res("list", "", "pods", "", "")), authz.NoOpinion, ""},
		{"alice list pods everywhere", alice, res("list", "", "pods", "", ""), authz.NoOpinion, ""},
		{"ci get pod in a", ci, in("a", res("get", "", "pods", "", "x")), authz.Allow, `RBAC: allowed by RoleBinding "read/a" of ClusterRole "pod-reader" to ServiceAccount "ci/a"`},
		{"alice get pods/log in a", alice, in("a", res("get", "", "pods", "log", "x")), authz.NoOpinion, ""},
		{"bob delete configmaps in a", bob, in("a", res("delete", "", "configmaps", "", "c")), authz.Allow, `RBAC: allowed by RoleBinding "edit/a" of Role "cm-editor" to Group "dev"`},
		{"bob get pods in a", bob, in("a", res("get", "", "pods", "", "")), authz.NoOpinion, `RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found`},
		{"anonymous healthz", anon, nonRes("get", "/healthz"), authz.Allow, `RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole "system:public-info-viewer" to Group "system:unauthenticated"`},
		{"anonymous apis", anon, nonRes("get", "/apis"), authz.NoOpinion, ""},
		{"alice apis", alice, nonRes("get", "/apis/apps"), authz.Allow, `RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"`},
		{"alice selfsubjectrulesreviews", alice, res("create", "authorization.k8s.io", "selfsubjectrulesreviews", "", ""), authz.Allow, `RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated"`},
		{"masters anything", user("root", request.SystemPrivileged), in("x", res("escalate", "rbac.authorization.k8s.io", "roles", "", "r")), authz.Allow, `RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.a.User = tt.u
			d, reason, err := z.Authorize(ctx, tt.a)
			if d != tt.want || reason != tt.wantReason || err != nil {
				t.Errorf("got %v %q %v; want %v %q", d, reason, err, tt.want, tt.wantReason)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	rule := []PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	get := res("get", "", "pods", "", "")
	tests := []struct {
		name    string
		subject Subject
		cluster bool // a ClusterRoleBinding, else a RoleBinding in ns
		u       *request.User
		ns      string
		want    authz.Decision
	}{
		{"user", Subject{Kind: UserKind, Name: "alice"}, true, user("alice"), "a", authz.Allow},
		{"user other", Subject{Kind: UserKind, Name: "alice"}, true, user("bob"), "a", authz.NoOpinion},
		{"user is not a group", Subject{Kind: UserKind, Name: "dev"}, true, user("bob", "dev"), "a", authz.NoOpinion},
		{"group", Subject{Kind: GroupKind, Name: "dev"}, true, user("bob", "x", "dev"), "", authz.Allow},
		{"group is not a user", Subject{Kind: GroupKind, Name: "bob"}, true, user("bob"), "", authz.NoOpinion},
		{"sa with namespace", Subject{Kind: ServiceAccountKind, Namespace: "ns", Name: "ci"}, true, user("system:serviceaccount:ns:ci"), "", authz.Allow},
		{"sa other namespace", Subject{Kind: ServiceAccountKind, Namespace: "ns", Name: "ci"}, true, user("system:serviceaccount:other:ci"), "", authz.NoOpinion},
		{"sa name prefix", Subject{Kind: ServiceAccountKind, Namespace: "ns", Name: "ci"}, true, user("system:serviceaccount:ns:ci2"), "", authz.NoOpinion},
		{"sa without namespace in a cluster binding", Subject{Kind: ServiceAccountKind, Name: "ci"}, true, user("system:serviceaccount::ci"), "", authz.NoOpinion},
		{"sa defaults to the binding's namespace", Subject{Kind: ServiceAccountKind, Name: "ci"}, false, user("system:serviceaccount:a:ci"), "a", authz.Allow},
		{"sa defaulted, other namespace", Subject{Kind: ServiceAccountKind, Name: "ci"}, false, user("system:serviceaccount:b:ci"), "a", authz.NoOpinion},
		{"sa of another namespace in a role binding", Subject{Kind: ServiceAccountKind, Namespace: "b", Name: "ci"}, false, user("system:serviceaccount:b:ci"), "a", authz.Allow},
		{"unknown kind", Subject{Kind: "Robot", Name: "alice"}, true, user("alice"), "", authz.NoOpinion},
		{"role binding, request elsewhere", Subject{Kind: UserKind, Name: "alice"}, false, user("alice"), "b", authz.NoOpinion},
		{"role binding, cluster-wide request", Subject{Kind: UserKind, Name: "alice"}, false, user("alice"), "", authz.NoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := New()
			z.SetClusterRole(&ClusterRole{Metadata: ObjectMeta{Name: "r"}, Rules: rule})
			if tt.cluster {
				z.SetClusterRoleBinding(&ClusterRoleBinding{Metadata: ObjectMeta{Name: "b"}, RoleRef: clusterRoleRef("r"), Subjects: []Subject{tt.subject}})
			} else {
				z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "a", Name: "b"}, RoleRef: clusterRoleRef("r"), Subjects: []Subject{tt.subject}})
			}
			a := in(tt.ns, get)
			a.User = tt.u
			if d, reason, _ := z.Authorize(ctx, a); d != tt.want {
				t.Errorf("got %v (%q); want %v", d, reason, tt.want)
			}
		})
	}
}

func TestFirstSubjectNamesTheSource(t *testing.T) {
	z := New()
	z.SetClusterRole(&ClusterRole{Metadata: ObjectMeta{Name: "r"}, Rules: []PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}}}})
	z.SetClusterRoleBinding(&ClusterRoleBinding{Metadata: ObjectMeta{Name: "b"}, RoleRef: clusterRoleRef("r"),
		Subjects: []Subject{{Kind: GroupKind, Name: "dev"}, {Kind: UserKind, Name: "alice"}, {Kind: UserKind, Name: "alice"}}})
	a := nonRes("get", "/x")
	a.User = user("alice", "dev")
	_, reason, _ := z.Authorize(ctx, a)
	if want := `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to Group "dev"`; reason != want {
		t.Errorf("got %q; want %q", reason, want)
	}
	rules, err := z.Rules(a.User, "")
	if len(rules) != 1 || err != nil {
		t.Errorf("Rules: got %v %v; want the binding's one rule once", rules, err)
	}
}

func TestMissingRoles(t *testing.T) {
	z := New()
	dev := []Subject{{Kind: GroupKind, Name: "dev"}}
	z.SetClusterRoleBinding(&ClusterRoleBinding{Metadata: ObjectMeta{Name: "b1"}, RoleRef: clusterRoleRef("x"), Subjects: dev})
	z.SetClusterRoleBinding(&ClusterRoleBinding{Metadata: ObjectMeta{Name: "b2"}, RoleRef: clusterRoleRef("x"), Subjects: dev})
	z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "a", Name: "b3"}, RoleRef: roleRef("y"), Subjects: dev})
	z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "a", Name: "b4"}, RoleRef: RoleRef{Kind: "Thing", Name: "z"}, Subjects: dev})
	a := in("a", res("get", "", "pods", "", ""))
	a.User = user("bob", "dev")
	d, reason, err := z.Authorize(ctx, a)
	want := `RBAC: [clusterrole.rbac.authorization.k8s.io "x" not found, role.rbac.authorization.k8s.io "y" not found, unsupported role reference kind: "Thing"]`
	if d != authz.NoOpinion || reason != want || err != nil {
		t.Errorf("got %v %q %v; want NoOpinion %q", d, reason, err, want)
	}
	// Once the role exists, the binding grants.
	z.SetRole(&Role{Metadata: ObjectMeta{Namespace: "a", Name: "y"}, Rules: []PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}})
	if d, _, _ := z.Authorize(ctx, a); d != authz.Allow {
		t.Errorf("after SetRole: got %v; want Allow", d)
	}
	z.DeleteRole("a", "y")
	if d, _, _ := z.Authorize(ctx, a); d != authz.NoOpinion {
		t.Errorf("after DeleteRole: got %v; want NoOpinion", d)
	}
	_, err = z.RulesOfRef("a", roleRef("y"))
	if !errors.Is(err, ErrNotFound) || err.Error() != `roles.rbac.authorization.k8s.io "y" not found` {
		t.Errorf("RulesOfRef: got %v; want the plural NotFound", err)
	}
	_, err = z.RulesOfRef("", clusterRoleRef("x"))
	if !errors.Is(err, ErrNotFound) || err.Error() != `clusterroles.rbac.authorization.k8s.io "x" not found` {
		t.Errorf("RulesOfRef: got %v; want the plural NotFound", err)
	}
	if _, err = z.RulesOfRef("", RoleRef{Kind: "Thing"}); !errors.Is(err, ErrUnsupportedRoleRef) {
		t.Errorf("RulesOfRef: got %v; want ErrUnsupportedRoleRef", err)
	}
}

func TestRoleBindingToClusterRoleIsScoped(t *testing.T) {
	z := New()
	z.SetClusterRole(&ClusterRole{Metadata: ObjectMeta{Name: "admin-ish"}, Rules: []PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}})
	z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "a", Name: "b"}, RoleRef: clusterRoleRef("admin-ish"), Subjects: []Subject{{Kind: UserKind, Name: "alice"}}})
	for _, tt := range []struct {
		ns   string
		want authz.Decision
	}{{"a", authz.Allow}, {"b", authz.NoOpinion}, {"", authz.NoOpinion}} {
		a := in(tt.ns, res("delete", "", "secrets", "", "s"))
		a.User = user("alice")
		if d, _, _ := z.Authorize(ctx, a); d != tt.want {
			t.Errorf("namespace %q: got %v; want %v", tt.ns, d, tt.want)
		}
	}
}

func TestReplaceAndDeleteBindings(t *testing.T) {
	z := New()
	z.SetClusterRole(&ClusterRole{Metadata: ObjectMeta{Name: "r"}, Rules: []PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}}}})
	a := nonRes("get", "/x")
	check := func(step, name string, want authz.Decision) {
		t.Helper()
		a.User = user(name)
		if d, _, _ := z.Authorize(ctx, a); d != want {
			t.Errorf("%s: %s got %v; want %v", step, name, d, want)
		}
	}
	z.SetClusterRoleBinding(&ClusterRoleBinding{Metadata: ObjectMeta{Name: "b"}, RoleRef: clusterRoleRef("r"), Subjects: []Subject{{Kind: UserKind, Name: "alice"}}})
	check("set", "alice", authz.Allow)
	z.SetClusterRoleBinding(&ClusterRoleBinding{Metadata: ObjectMeta{Name: "b"}, RoleRef: clusterRoleRef("r"), Subjects: []Subject{{Kind: UserKind, Name: "bob"}}})
	check("replace", "alice", authz.NoOpinion)
	check("replace", "bob", authz.Allow)
	z.DeleteClusterRoleBinding("b")
	check("delete", "bob", authz.NoOpinion)
	if s := z.state.Load(); s.clusterUsers.len()+s.clusterGroups.len() != 0 || s.clusterUsers.shards != nil {
		t.Errorf("index after delete: got %+v; want empty", s)
	}
	z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "n", Name: "b"}, RoleRef: clusterRoleRef("r"), Subjects: []Subject{{Kind: UserKind, Name: "bob"}}})
	z.DeleteRoleBinding("n", "b")
	if s := z.state.Load(); s.localUsers.len()+s.localGroups.len() != 0 || len(z.roleBindings) != 0 {
		t.Errorf("index after delete: got %+v; want empty", s)
	}
}

func TestRulesFor(t *testing.T) {
	z := example()
	got := z.RulesFor(ctx, user("bob", "dev", request.AllAuthenticated), "a")
	want := authz.Rules{
		Resource: []authz.ResourceRule{
			{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}},
			{Verbs: []string{"create"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}},
			{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"configmaps"}},
		},
		NonResource: []authz.NonResourceRule{
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"}},
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}},
		},
		Err: `clusterrole.rbac.authorization.k8s.io "missing" not found`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// Cluster-wide: the RoleBindings of a do not count.
	if got := z.RulesFor(ctx, user("alice"), ""); len(got.Resource)+len(got.NonResource) != 0 || got.Err != "" || got.Incomplete {
		t.Errorf("alice cluster-wide: got %+v; want nothing", got)
	}
	if got := z.RulesFor(ctx, user("alice"), "a"); len(got.Resource) != 1 || !reflect.DeepEqual(got.Resource[0].Resources, []string{"pods"}) {
		t.Errorf("alice in a: got %+v; want pod-reader's rule", got)
	}
}

func TestSetJSON(t *testing.T) {
	z := New()
	for _, o := range []struct{ kind, json string }{
		{"ClusterRole", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r","uid":"u","resourceVersion":"5"},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`},
		{"RoleBinding", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"b","namespace":"a"},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"r"}}`},
	} {
		if err := z.SetJSON(o.kind, []byte(o.json)); err != nil {
			t.Fatal(err)
		}
	}
	a := in("a", res("get", "", "pods", "", ""))
	a.User = user("alice")
	if d, _, _ := z.Authorize(ctx, a); d != authz.Allow {
		t.Errorf("got %v; want Allow", d)
	}
	if err := z.Delete("RoleBinding", "a", "b"); err != nil {
		t.Fatal(err)
	}
	if d, _, _ := z.Authorize(ctx, a); d != authz.NoOpinion {
		t.Errorf("after Delete: got %v; want NoOpinion", d)
	}
	if err := z.SetJSON("Pod", []byte(`{}`)); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("Pod: got %v; want ErrUnknownKind", err)
	}
	if err := z.SetJSON("Role", []byte(`{"rules":3}`)); err == nil || !strings.HasPrefix(err.Error(), "rbac: decoding a Role") {
		t.Errorf("bad JSON: got %v", err)
	}
}

func TestNilUser(t *testing.T) {
	if d, reason, err := withBootstrap().Authorize(ctx, nonRes("get", "/healthz")); d != authz.NoOpinion || reason != "" || err != nil {
		t.Errorf("got %v %q %v; want NoOpinion", d, reason, err)
	}
}

// A RoleBinding with no namespace (which the registry would not store)
// grants nothing, not cluster-wide rules.
func TestRoleBindingWithoutNamespace(t *testing.T) {
	z := New()
	z.SetClusterRole(&ClusterRole{Metadata: ObjectMeta{Name: "r"}, Rules: []PolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}})
	z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Name: "b"}, RoleRef: clusterRoleRef("r"), Subjects: []Subject{{Kind: UserKind, Name: "alice"}}})
	a := nonRes("get", "/x")
	a.User = user("alice")
	if d, _, _ := z.Authorize(ctx, a); d != authz.NoOpinion {
		t.Errorf("got %v; want NoOpinion", d)
	}
	if rules, _ := z.Rules(a.User, ""); len(rules) != 0 {
		t.Errorf("Rules: got %v; want none", rules)
	}
}
