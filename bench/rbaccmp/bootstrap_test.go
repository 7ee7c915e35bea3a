package rbaccmp

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"

	"github.com/kapi-dev/kapi/registry/authz/rbac"
)

// TestSameBootstrap: each default ClusterRole and ClusterRoleBinding of
// rbac.Bootstrap is kube's bootstrappolicy's of that name, field for
// field once decoded into k8s.io/api types.
func TestSameBootstrap(t *testing.T) {
	crs, bs := rbac.Bootstrap()
	kubeRoles := map[string]rbacv1.ClusterRole{}
	for _, r := range bootstrappolicy.ClusterRoles() {
		kubeRoles[r.Name] = r
	}
	for _, c := range crs {
		var got rbacv1.ClusterRole
		if err := convert(c, &got); err != nil {
			t.Fatal(err)
		}
		want, ok := kubeRoles[c.Metadata.Name]
		if !ok {
			t.Errorf("%s: not one of kube's", c.Metadata.Name)
			continue
		}
		want.TypeMeta = got.TypeMeta
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.Metadata.Name, got, want)
		}
	}
	kubeBindings := map[string]rbacv1.ClusterRoleBinding{}
	for _, b := range bootstrappolicy.ClusterRoleBindings() {
		kubeBindings[b.Name] = b
	}
	for _, b := range bs {
		var got rbacv1.ClusterRoleBinding
		if err := convert(b, &got); err != nil {
			t.Fatal(err)
		}
		want, ok := kubeBindings[b.Metadata.Name]
		if !ok {
			t.Errorf("%s: not one of kube's", b.Metadata.Name)
			continue
		}
		want.TypeMeta = got.TypeMeta
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", b.Metadata.Name, got, want)
		}
	}
}
