package conformance

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestRBACKindsTypedClient: the RBAC kinds through client-go's typed
// client in its default configuration (protobuf both ways): create, get,
// list, update, watch and delete of a Role, and a binding's roleRef
// refused as immutable.
func TestRBACKindsTypedClient(t *testing.T) {
	e := newEnv(t)
	ctx := testContext(t)
	cs, err := kubernetes.NewForConfig(e.config())
	if err != nil {
		t.Fatal(err)
	}
	roles := cs.RbacV1().Roles("default")
	w, err := roles.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}}
	got, err := roles.Create(ctx, role, metav1.CreateOptions{})
	if err != nil || len(got.Rules) != 1 || got.Rules[0].Verbs[1] != "list" {
		t.Fatalf("create: %+v, %v", got, err)
	}
	if ev := <-w.ResultChan(); ev.Type != "ADDED" || ev.Object.(*rbacv1.Role).Name != "reader" {
		t.Errorf("watch: got %v", ev)
	}
	got.Rules[0].Verbs = append(got.Rules[0].Verbs, "watch")
	if got, err = roles.Update(ctx, got, metav1.UpdateOptions{}); err != nil || len(got.Rules[0].Verbs) != 3 {
		t.Fatalf("update: %+v, %v", got, err)
	}
	list, err := roles.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	bindings := cs.RbacV1().RoleBindings("default")
	b, err := bindings.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.RoleRef.Name = "other"
	if _, err := bindings.Update(ctx, b, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "roleRef: Invalid value: ") || !strings.Contains(err.Error(), "field is immutable") {
		t.Errorf("roleRef change: got %v; want 422", err)
	}
	if err := roles.Delete(ctx, "reader", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range e.log.matching(func(r request) bool { return strings.Contains(r.Path, "/rbac.authorization.k8s.io/") && r.Status < 300 }) {
		if !strings.HasPrefix(r.ContentType, "application/vnd.kubernetes.protobuf") {
			t.Errorf("%v; want protobuf", r)
		}
	}
}
