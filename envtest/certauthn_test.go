package envtest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/envtest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Users provisioned with client certificates (envtest's CertAuthn) are
// authenticated by their certificate — name from its common name, groups
// from its organizations — over TLS and in-process, and authorized by
// RBAC; a certificate of another CA is refused (401).
func TestCertAuthn(t *testing.T) {
	t.Parallel()
	for _, inProcess := range []bool{false, true} {
		t.Run(fmt.Sprintf("in-process=%v", inProcess), func(t *testing.T) {
			t.Parallel()
			ca, err := envtest.NewCertAuthn()
			if err != nil {
				t.Fatal(err)
			}
			e := &envtest.Environment{InProcess: inProcess}
			e.ControlPlane.GetAPIServer().SecureServing.Authn = ca
			cfg := start(t, e)
			if len(cfg.CertData) == 0 && !inProcess {
				t.Errorf("the admin's config has no client certificate")
			}
			vera, err := e.AddUser(envtest.User{Name: "vera", Groups: []string{"viewers"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := ctxFor(t)
			for _, tc := range []struct {
				name     string
				cs       *kubernetes.Clientset
				wantCode int
				wantMsg  string
			}{
				{name: "admin (system:masters)", cs: kubernetes.NewForConfigOrDie(cfg), wantCode: 200},
				{name: "vera (viewers): no role", cs: kubernetes.NewForConfigOrDie(vera.Config()), wantCode: 403, wantMsg: `User "vera" cannot list resource "configmaps"`},
			} {
				_, err := tc.cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
				code := 200
				if err != nil {
					code = codeOf(err)
				}
				if code != tc.wantCode || (tc.wantMsg != "" && !strings.Contains(fmt.Sprint(err), tc.wantMsg)) {
					t.Errorf("%s: list configmaps: %v (code %d); want code %d %s", tc.name, err, code, tc.wantCode, tc.wantMsg)
				}
			}
			if !inProcess { // in-process, a config's certificate is always this CA's
				other, err := envtest.NewCertAuthn()
				if err != nil {
					t.Fatal(err)
				}
				strangerCfg, err := other.AddUser(envtest.User{Name: "stranger", Groups: []string{"system:masters"}}, vera.Config())
				if err != nil {
					t.Fatal(err)
				}
				_, err = kubernetes.NewForConfigOrDie(strangerCfg).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
				if !apierrors.IsUnauthorized(err) {
					t.Errorf("a certificate of another CA: %v; want 401", err)
				}
			}
			var users []string
			for _, r := range e.Requests() {
				if r.Resource == "configmaps" {
					users = append(users, r.User)
				}
			}
			if !strings.Contains(strings.Join(users, ","), "admin,vera") {
				t.Errorf("the request log's users %v; want admin then vera", users)
			}
		})
	}
}
