package conformance

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
)

// RBAC as kube-apiserver runs it (issue: "a user bound to a Role may list
// configmaps in namespace a and is refused in b with kube's 403 message"):
// the example server with AuthorizationMode RBAC and the real
// kube-apiserver with --authorization-mode=RBAC read the same token file
// (refTokens), get the same namespaces, Roles and RoleBindings from the
// admin through client-go, then the same requests — raw HTTP, client-go
// and kubectl — from alice, bob and the admin; their answers are compared
// once normalised (metadata the servers make up, such as uids and
// resourceVersions, left out).

// rbacRuns numbers the runs of TestRBACAsKube in a process (-count), so
// that each has namespaces of its own on the shared kube-apiserver.
var rbacRuns atomic.Int64

// rbacSide is one of the two servers compared.
type rbacSide struct {
	name string
	url  string
	ca   []byte
}

func (s rbacSide) config(token string) *rest.Config {
	return &rest.Config{Host: s.url, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: s.ca}, QPS: -1}
}

func (s rbacSide) kubectl(t *testing.T, token string) *kubectl {
	return kubectlAs(t, s.url, server.Credentials{Token: token, CertificateAuthPEM: s.ca})
}

func TestRBACAsKube(t *testing.T) {
	kube := kubeAPIServer(t)
	srv, ca := authServer(t, server.Auth{TokenAuthFile: writeTemp(t, "tokens.csv", []byte(refTokens)), AuthorizationMode: "RBAC"})
	sides := []rbacSide{{name: "kube-apiserver", url: kube.URL, ca: kube.CA}, {name: "kapi", url: srv.URL, ca: ca}}

	nsA, nsB := "a", "b"
	if n := rbacRuns.Add(1); n > 1 {
		nsA, nsB = fmt.Sprintf("a-%d", n), fmt.Sprintf("b-%d", n)
	}
	for _, s := range sides {
		setUpRBAC(t, s, nsA, nsB)
	}

	// compare runs f on each side and fails on any difference.
	compare := func(t *testing.T, f func(t *testing.T, s rbacSide) any) {
		t.Helper()
		want := f(t, sides[0])
		got := f(t, sides[1])
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("kapi differs from kube-apiserver (-kube +kapi):\n%s", d)
		}
		t.Logf("both: %+v", want)
	}

	for _, c := range []struct {
		name, token, method, path, body string
		header                          http.Header
		code                            int // kube-apiserver's, checked so that the test cannot pass on two servers equally wrong
	}{
		{name: "alice lists configmaps in a", token: "alice-token", method: "GET", path: "/api/v1/namespaces/" + nsA + "/configmaps", code: 200},
		{name: "alice lists configmaps in b", token: "alice-token", method: "GET", path: "/api/v1/namespaces/" + nsB + "/configmaps", code: 403},
		{name: "alice gets a configmap in b", token: "alice-token", method: "GET", path: "/api/v1/namespaces/" + nsB + "/configmaps/c1", code: 403},
		{name: "alice lists configmaps everywhere", token: "alice-token", method: "GET", path: "/api/v1/configmaps", code: 403},
		{name: "alice creates a configmap in a", token: "alice-token", method: "POST", path: "/api/v1/namespaces/" + nsA + "/configmaps",
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c2"}}`, code: 403},
		{name: "bob creates a Role granting secrets", token: "bob-token", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/" + nsA + "/roles",
			body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"secret-reader"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}]}`, code: 403},
		{name: "bob binds cluster-admin to himself", token: "bob-token", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/" + nsA + "/rolebindings",
			body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"bob-admin"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"bob"}]}`, code: 403},
		{name: "bob creates a Role he holds", token: "bob-token", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/" + nsA + "/roles",
			body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"cm-lister"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["list"]}]}`, code: 201},
		{name: "bob binds cm-reader to himself", token: "bob-token", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/" + nsA + "/rolebindings",
			body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"bob-cm-reader"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-reader"},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"bob"}]}`, code: 403},
		{name: "bob impersonates alice", token: "bob-token", method: "GET", path: "/api/v1/namespaces/" + nsA + "/configmaps",
			header: http.Header{"Impersonate-User": {"alice"}}, code: 403},
		{name: "admin impersonates alice in b", token: "admin-token", method: "GET", path: "/api/v1/namespaces/" + nsB + "/configmaps",
			header: http.Header{"Impersonate-User": {"alice"}}, code: 403},
		{name: "admin as system:anonymous asks who he is", token: "admin-token", method: "POST", path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
			body: `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, header: http.Header{"Impersonate-User": {"system:anonymous"}}, code: 403},
		{name: "admin as alice in system:unauthenticated asks who she is", token: "admin-token", method: "POST", path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
			body: `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, header: http.Header{"Impersonate-User": {"alice"}, "Impersonate-Group": {"system:unauthenticated"}}, code: 403},
		{name: "an unknown token", token: "nope", method: "GET", path: "/api/v1/namespaces/" + nsA + "/configmaps", code: 401},
		{name: "anonymous lists configmaps", method: "GET", path: "/api/v1/namespaces/" + nsA + "/configmaps", code: 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			compare(t, func(t *testing.T, s rbacSide) any {
				a := rbacDo(t, s, c.token, c.method, c.path, c.body, c.header)
				if a.Code != c.code {
					t.Errorf("%s: got %d; want %d", s.name, a.Code, c.code)
				}
				return a
			})
		})
	}

	for _, c := range []struct {
		name  string
		token string
		spec  string
		// several default bindings allow: see anyBinding.
		several bool
	}{
		{"alice list configmaps in a", "alice-token", `{"resourceAttributes":{"namespace":"` + nsA + `","verb":"list","resource":"configmaps"}}`, false},
		{"alice list configmaps in b", "alice-token", `{"resourceAttributes":{"namespace":"` + nsB + `","verb":"list","resource":"configmaps"}}`, false},
		{"alice create configmaps in a", "alice-token", `{"resourceAttributes":{"namespace":"` + nsA + `","verb":"create","resource":"configmaps"}}`, false},
		{"alice get configmap c1 in a", "alice-token", `{"resourceAttributes":{"namespace":"` + nsA + `","verb":"get","resource":"configmaps","name":"c1"}}`, false},
		{"alice list namespaces", "alice-token", `{"resourceAttributes":{"verb":"list","resource":"namespaces"}}`, false},
		{"alice get /healthz", "alice-token", `{"nonResourceAttributes":{"verb":"get","path":"/healthz"}}`, true},
		{"alice get /apis", "alice-token", `{"nonResourceAttributes":{"verb":"get","path":"/apis"}}`, false},
		{"alice get /metrics", "alice-token", `{"nonResourceAttributes":{"verb":"get","path":"/metrics"}}`, false},
		{"bob create roles in a", "bob-token", `{"resourceAttributes":{"namespace":"` + nsA + `","verb":"create","group":"rbac.authorization.k8s.io","resource":"roles"}}`, false},
		{"bob get secrets in a", "bob-token", `{"resourceAttributes":{"namespace":"` + nsA + `","verb":"get","resource":"secrets"}}`, false},
		{"admin delete namespaces", "admin-token", `{"resourceAttributes":{"verb":"delete","resource":"namespaces","name":"` + nsB + `"}}`, false},
	} {
		t.Run("SelfSubjectAccessReview "+c.name, func(t *testing.T) {
			compare(t, func(t *testing.T, s rbacSide) any {
				body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":` + c.spec + `}`
				a := rbacDo(t, s, c.token, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body, nil)
				if c.several {
					a.Review = anyBinding(a.Review)
				}
				return a
			})
		})
	}

	for _, c := range []struct{ name, spec string }{
		{"alice's token", `{"token":"alice-token"}`},
		{"an unknown token", `{"token":"nope"}`},
		{"alice's token for audience x", `{"token":"alice-token","audiences":["x"]}`},
		{"no token", `{}`},
	} {
		t.Run("TokenReview as admin of "+c.name, func(t *testing.T) {
			compare(t, func(t *testing.T, s rbacSide) any {
				body := `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":` + c.spec + `}`
				a := rbacDo(t, s, "admin-token", "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body, nil)
				// A review that names no audience is answered for the
				// server's own: kube-apiserver's default to its
				// --service-account-issuer (https://127.0.0.1:PORT/);
				// kapi, which issues no service-account tokens, has none.
				if st, ok := a.Review.(authnv1.TokenReviewStatus); ok && !strings.Contains(c.spec, "audiences") {
					st.Audiences = nil
					a.Review = st
				}
				return a
			})
		})
	}

	t.Run("SubjectAccessReview as admin for alice", func(t *testing.T) {
		compare(t, func(t *testing.T, s rbacSide) any {
			body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"alice","resourceAttributes":{"namespace":"` + nsA + `","verb":"list","resource":"configmaps"}}}`
			return rbacDo(t, s, "admin-token", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body, nil)
		})
	})

	for _, c := range []struct {
		name  string
		token string
		args  []string
		yes   bool // kube-apiserver's answer
	}{
		{"alice can-i list configmaps -n a", "alice-token", []string{"list", "configmaps", "-n", nsA}, true},
		{"alice can-i list configmaps -n b", "alice-token", []string{"list", "configmaps", "-n", nsB}, false},
		{"alice can-i get configmaps/c1 -n a", "alice-token", []string{"get", "configmaps/c1", "-n", nsA}, true},
		{"alice can-i create configmaps -n a", "alice-token", []string{"create", "configmaps", "-n", nsA}, false},
		{"bob can-i create roles -n a", "bob-token", []string{"create", "roles", "-n", nsA}, true},
		{"alice can-i get /healthz", "alice-token", []string{"get", "/healthz"}, true},
		{"admin can-i list configmaps --as=alice -n b", "admin-token", []string{"list", "configmaps", "-n", nsB, "--as=alice"}, false},
	} {
		t.Run("kubectl auth can-i "+c.name, func(t *testing.T) {
			compare(t, func(t *testing.T, s rbacSide) any {
				r := canI(t, s.kubectl(t, c.token), c.args...)
				if want := map[bool]kubectlResult{true: {Stdout: "yes\n"}, false: {Stdout: "no\n", Code: 1}}[c.yes]; r != want {
					t.Errorf("%s: got %+v; want %+v", s.name, r, want)
				}
				return r
			})
		})
	}

	// The whole list: kube-apiserver's bootstrap policy has more roles
	// than kapi's (its controllers' and components'), but what alice and
	// bob hold beyond the test's roles is what every authenticated user
	// holds, the same default roles in both. kubectl sorts the rules.
	for _, who := range []string{"alice", "bob"} {
		t.Run("kubectl auth can-i --list -n a as "+who, func(t *testing.T) {
			compare(t, func(t *testing.T, s rbacSide) any {
				return s.kubectl(t, who+"-token").mustRun(t, "auth", "can-i", "--list", "-n", nsA)
			})
		})
		t.Run("SelfSubjectRulesReview in a as "+who, func(t *testing.T) {
			compare(t, func(t *testing.T, s rbacSide) any {
				body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"` + nsA + `"}}`
				return rbacDo(t, s, who+"-token", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body, nil)
			})
		})
	}

	for _, c := range []struct {
		name  string
		token string
		args  []string
	}{
		{"whoami as alice", "alice-token", []string{"auth", "whoami", "-o", "json"}},
		{"whoami as bob", "bob-token", []string{"auth", "whoami", "-o", "json"}},
		{"whoami as admin --as=alice --as-group=g1", "admin-token", []string{"auth", "whoami", "-o", "json", "--as=alice", "--as-group=g1"}},
		{"whoami as admin --as=system:anonymous", "admin-token", []string{"auth", "whoami", "-o", "json", "--as=system:anonymous"}},
		{"whoami as admin --as=a service account", "admin-token", []string{"auth", "whoami", "-o", "json", "--as=system:serviceaccount:" + nsA + ":sa1"}},
		{"whoami as admin --as=a node", "admin-token", []string{"auth", "whoami", "-o", "json", "--as=system:node:n1"}},
		{"whoami as admin --as=alice --as-group=system:unauthenticated", "admin-token", []string{"auth", "whoami", "-o", "json", "--as=alice", "--as-group=system:unauthenticated"}},
		{"whoami as admin --as=alice --as-uid=u1", "admin-token", []string{"auth", "whoami", "-o", "json", "--as=alice", "--as-uid=u1"}},
		{"admin --as=alice get configmaps -n b", "admin-token", []string{"--as=alice", "get", "configmaps", "-n", nsB}},
		{"alice get configmaps -n a", "alice-token", []string{"get", "configmaps", "-n", nsA, "-o", "name"}},
		{"bob --as=alice get configmaps -n a", "bob-token", []string{"--as=alice", "get", "configmaps", "-n", nsA}},
		{"bob create role cm-deleter", "bob-token", []string{"create", "role", "cm-deleter", "--verb=delete", "--resource=configmaps", "-n", nsA}},
	} {
		t.Run("kubectl "+c.name, func(t *testing.T) {
			compare(t, func(t *testing.T, s rbacSide) any {
				stdout, stderr, err := s.kubectl(t, c.token).run(c.args...)
				r := kubectlResult{Stdout: stdout, Stderr: stderr}
				if err != nil {
					r.Err = err.Error()
				}
				if len(c.args) > 2 && c.args[1] == "whoami" && err == nil {
					r.Stdout = normaliseWhoami(t, stdout)
				}
				return r
			})
		})
	}
}

// setUpRBAC creates, as the admin through client-go, namespaces a and b
// with a configmap c1 each, Role cm-reader in a (get and list configmaps)
// bound to alice, and Role dev in a (create roles and rolebindings, list
// configmaps) bound to group dev.
func setUpRBAC(t *testing.T, s rbacSide, nsA, nsB string) {
	t.Helper()
	ctx := testContext(t)
	c := kubernetes.NewForConfigOrDie(s.config("admin-token"))
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %s: %v", s.name, what, err)
		}
	}
	for _, ns := range []string{nsA, nsB} {
		_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			must("create namespace "+ns, err)
		}
		_, err = c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		must("create configmap c1 in "+ns, err)
	}
	roles := c.RbacV1().Roles(nsA)
	_, err := roles.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{})
	must("create role cm-reader", err)
	_, err = roles.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "dev"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "rolebindings"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}},
		}}, metav1.CreateOptions{})
	must("create role dev", err)
	bindings := c.RbacV1().RoleBindings(nsA)
	_, err = bindings.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-cm-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "cm-reader"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice"}}}, metav1.CreateOptions{})
	must("create rolebinding alice-cm-reader", err)
	_, err = bindings.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dev"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "dev"},
		Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "dev"}}}, metav1.CreateOptions{})
	must("create rolebinding dev", err)
	waitAllowed(t, s, "alice-token", authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{Namespace: nsA, Verb: "list", Resource: "configmaps"}})
	waitAllowed(t, s, "bob-token", authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{Namespace: nsA, Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "roles"}})
}
