package conformance

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
)

// impersonationRuns numbers the runs of TestImpersonationAsKube in a
// process (-count): its namespace and ClusterRole are its own.
var impersonationRuns atomic.Int64

// TestImpersonationAsKube: constrained impersonation (kube-apiserver's
// ConstrainedImpersonation, on by default since 1.36) and legacy
// impersonation, answered alike. carol holds only constrained verbs: to
// impersonate alice, group g1, uid u1 and extra acme.io/team=x
// (user-info), node n1 (arbitrary-node) and service account sa1
// (serviceaccount), each for some verbs on configmaps.
func TestImpersonationAsKube(t *testing.T) {
	kube := kubeAPIServer(t)
	srv, ca := authServer(t, server.Auth{TokenAuthFile: writeTemp(t, "tokens.csv", []byte(refTokens)), AuthorizationMode: "RBAC"})
	sides := []rbacSide{{name: "kube-apiserver", url: kube.URL, ca: kube.CA}, {name: "kapi", url: srv.URL, ca: ca}}
	n := impersonationRuns.Add(1)
	ns, role := fmt.Sprintf("imp-%d", n), fmt.Sprintf("carol-impersonates-%d", n)
	for _, s := range sides {
		setUpImpersonation(t, s, ns, role)
	}

	list := "/api/v1/namespaces/" + ns + "/configmaps"
	get := list + "/c1"
	for _, c := range []struct {
		name   string
		path   string
		header http.Header
		code   int // kube-apiserver's
	}{
		{"alice, list", list, http.Header{"Impersonate-User": {"alice"}}, 200},
		{"alice, get", get, http.Header{"Impersonate-User": {"alice"}}, 403},
		{"bob", list, http.Header{"Impersonate-User": {"bob"}}, 403},
		{"alice in g1", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Group": {"g1"}}, 200},
		{"alice in g2", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Group": {"g2"}}, 403},
		{"alice in system:masters", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Group": {"system:masters"}}, 403},
		{"alice in the empty group", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Group": {""}}, 403},
		{"alice with uid u1", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Uid": {"u1"}}, 200},
		{"alice with uid u2", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Uid": {"u2"}}, 403},
		{"alice with extra acme.io/team=x", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Extra-Acme.io%2fteam": {"x"}}, 200},
		{"alice with extra acme.io/team=y", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Extra-Acme.io%2fteam": {"y"}}, 403},
		{"alice with extra scopes=x", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Extra-Scopes": {"x"}}, 403},
		{"alice with extra bad_host/x=x", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Extra-Bad_host%2fx": {"x"}}, 403},
		{"alice with extra acme.io/a b=x", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Extra-Acme.io%2fa%20b": {"x"}}, 403},
		{"alice with extra -a_/b c=x", list, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Extra--A_%2fb%20c": {"x"}}, 403},
		{"node n1, get", get, http.Header{"Impersonate-User": {"system:node:n1"}}, 403},
		{"node n1, list", list, http.Header{"Impersonate-User": {"system:node:n1"}}, 403},
		{"node n2, get", get, http.Header{"Impersonate-User": {"system:node:n2"}}, 403},
		{"node n1 in g1", get, http.Header{"Impersonate-User": {"system:node:n1"}, "Impersonate-Group": {"g1"}}, 403},
		{"service account sa1, list", list, http.Header{"Impersonate-User": {"system:serviceaccount:" + ns + ":sa1"}}, 403},
		{"service account sa2, list", list, http.Header{"Impersonate-User": {"system:serviceaccount:" + ns + ":sa2"}}, 403},
		{"a group without a user", list, http.Header{"Impersonate-Group": {"g1"}}, 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := rbacDo(t, sides[0], "carol-token", "GET", c.path, "", c.header.Clone())
			got := rbacDo(t, sides[1], "carol-token", "GET", c.path, "", c.header.Clone())
			if want.Code != c.code {
				t.Errorf("kube-apiserver: got %d; want %d", want.Code, c.code)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("kapi differs from kube-apiserver (-kube +kapi):\n%s", d)
			}
			t.Logf("both: %+v", want)
		})
	}
}

// setUpImpersonation creates, as the admin, namespace ns with configmap
// c1, Role cm-reader (get, list) bound to alice, and ClusterRole role,
// bound to carol, granting her the constrained impersonation the test
// names.
func setUpImpersonation(t *testing.T, s rbacSide, ns, role string) {
	t.Helper()
	ctx := testContext(t)
	c := kubernetes.NewForConfigOrDie(s.config("admin-token"))
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %s: %v", s.name, what, err)
		}
	}
	_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	must("create namespace", err)
	_, err = c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}, metav1.CreateOptions{})
	must("create configmap", err)
	_, err = c.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{})
	must("create role", err)
	_, err = c.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-cm-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "cm-reader"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice"}}}, metav1.CreateOptions{})
	must("create rolebinding", err)
	const authn = "authentication.k8s.io"
	_, err = c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{authn}, Resources: []string{"users"}, ResourceNames: []string{"alice"}, Verbs: []string{"impersonate:user-info"}},
			{APIGroups: []string{authn}, Resources: []string{"groups"}, ResourceNames: []string{"g1"}, Verbs: []string{"impersonate:user-info"}},
			{APIGroups: []string{authn}, Resources: []string{"uids"}, ResourceNames: []string{"u1"}, Verbs: []string{"impersonate:user-info"}},
			{APIGroups: []string{authn}, Resources: []string{"userextras/acme.io/team"}, ResourceNames: []string{"x"}, Verbs: []string{"impersonate:user-info"}},
			{APIGroups: []string{authn}, Resources: []string{"userextras/scopes"}, Verbs: []string{"impersonate:user-info"}},
			{APIGroups: []string{authn}, Resources: []string{"nodes"}, ResourceNames: []string{"n1"}, Verbs: []string{"impersonate:arbitrary-node"}},
			{APIGroups: []string{authn}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{"sa1"}, Verbs: []string{"impersonate:serviceaccount"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"impersonate-on:user-info:list", "impersonate-on:arbitrary-node:get", "impersonate-on:serviceaccount:list"}},
		}}, metav1.CreateOptions{})
	must("create clusterrole", err)
	_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "carol"}}}, metav1.CreateOptions{})
	must("create clusterrolebinding", err)
	waitAllowed(t, s, "carol-token", authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
		Namespace: ns, Verb: "impersonate-on:user-info:list", Resource: "configmaps"}})
	waitAllowed(t, s, "alice-token", authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
		Namespace: ns, Verb: "list", Resource: "configmaps"}})
}
