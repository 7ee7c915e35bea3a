package rbaccmp

import (
	"encoding/json"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	kuberbac "k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
	"github.com/kapi-dev/kapi/registry/request"
)

// Objects are one set of RBAC objects, in kapi's types.
type Objects struct {
	Roles               []rbac.Role
	ClusterRoles        []rbac.ClusterRole
	RoleBindings        []rbac.RoleBinding
	ClusterRoleBindings []rbac.ClusterRoleBinding
}

// Kapi is kapi's authorizer holding o.
func (o *Objects) Kapi() *rbac.Authorizer {
	z := rbac.New()
	for i := range o.Roles {
		z.SetRole(&o.Roles[i])
	}
	for i := range o.ClusterRoles {
		z.SetClusterRole(&o.ClusterRoles[i])
	}
	for i := range o.RoleBindings {
		z.SetRoleBinding(&o.RoleBindings[i])
	}
	for i := range o.ClusterRoleBindings {
		z.SetClusterRoleBinding(&o.ClusterRoleBindings[i])
	}
	return z
}

// convert decodes the JSON of kapi's object in into kube's out.
func convert(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// Kube is kube's RBAC authorizer over listers holding o, as
// kube-apiserver builds it from its informers.
func (o *Objects) Kube() (*kuberbac.RBACAuthorizer, error) {
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	roles, clusterRoles, roleBindings, clusterRoleBindings := idx(), idx(), idx(), idx()
	for i := range o.Roles {
		var r rbacv1.Role
		if err := convert(o.Roles[i], &r); err != nil {
			return nil, err
		}
		_ = roles.Add(&r)
	}
	for i := range o.ClusterRoles {
		var r rbacv1.ClusterRole
		if err := convert(o.ClusterRoles[i], &r); err != nil {
			return nil, err
		}
		_ = clusterRoles.Add(&r)
	}
	for i := range o.RoleBindings {
		var b rbacv1.RoleBinding
		if err := convert(o.RoleBindings[i], &b); err != nil {
			return nil, err
		}
		_ = roleBindings.Add(&b)
	}
	for i := range o.ClusterRoleBindings {
		var b rbacv1.ClusterRoleBinding
		if err := convert(o.ClusterRoleBindings[i], &b); err != nil {
			return nil, err
		}
		_ = clusterRoleBindings.Add(&b)
	}
	return kuberbac.New(
		&kuberbac.RoleGetter{Lister: rbaclisters.NewRoleLister(roles)},
		&kuberbac.RoleBindingLister{Lister: rbaclisters.NewRoleBindingLister(roleBindings)},
		&kuberbac.ClusterRoleGetter{Lister: rbaclisters.NewClusterRoleLister(clusterRoles)},
		&kuberbac.ClusterRoleBindingLister{Lister: rbaclisters.NewClusterRoleBindingLister(clusterRoleBindings)},
	), nil
}

// KubeAttributes are a's as kube's authorizer reads them.
func KubeAttributes(a authz.Attributes) authorizer.AttributesRecord {
	var u user.Info
	if a.User != nil {
		u = &user.DefaultInfo{Name: a.User.Name, UID: a.User.UID, Groups: a.User.Groups}
	}
	return authorizer.AttributesRecord{
		User: u, Verb: a.Verb, Namespace: a.Namespace, APIGroup: a.APIGroup, APIVersion: a.APIVersion,
		Resource: a.Resource, Subresource: a.Subresource, Name: a.Name, ResourceRequest: a.ResourceRequest, Path: a.Path,
	}
}

// Decision is kube's decision in kapi's terms.
func Decision(d authorizer.Decision) authz.Decision {
	switch d {
	case authorizer.DecisionAllow:
		return authz.Allow
	case authorizer.DecisionDeny:
		return authz.Deny
	}
	return authz.NoOpinion
}

// Scale is the benchmark's fixture, as registry/authz/rbac's
// BenchmarkAuthorize builds it: kube's default roles and bindings, 1,000
// Roles (10 namespaces × 100, 3 rules each) and n bindings: RoleBindings
// of user-i to role i%100 of namespace ns-(i%10), and every tenth a
// ClusterRoleBinding of group-i to a ClusterRole.
func Scale(n int) *Objects {
	o := &Objects{}
	o.ClusterRoles, o.ClusterRoleBindings = rbac.Bootstrap()
	for ns := 0; ns < 10; ns++ {
		for i := 0; i < 100; i++ {
			o.Roles = append(o.Roles, rbac.Role{Metadata: rbac.ObjectMeta{Namespace: fmt.Sprint("ns-", ns), Name: fmt.Sprint("role-", i)}, Rules: []rbac.PolicyRule{
				{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}},
				{Verbs: []string{"create", "update", "patch", "delete"}, APIGroups: []string{"apps"}, Resources: []string{"deployments", "deployments/scale"}},
				{Verbs: []string{"get"}, APIGroups: []string{"example.com"}, Resources: []string{fmt.Sprint("widgets-", i)}},
			}})
		}
	}
	o.ClusterRoles = append(o.ClusterRoles, rbac.ClusterRole{Metadata: rbac.ObjectMeta{Name: "reader"}, Rules: []rbac.PolicyRule{
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{"*"}, Resources: []string{"nodes"}},
	}})
	for i := 0; i < n; i++ {
		if i%10 == 9 {
			o.ClusterRoleBindings = append(o.ClusterRoleBindings, rbac.ClusterRoleBinding{
				Metadata: rbac.ObjectMeta{Name: fmt.Sprint("crb-", i)},
				RoleRef:  rbac.RoleRef{APIGroup: rbac.GroupName, Kind: "ClusterRole", Name: "reader"},
				Subjects: []rbac.Subject{{Kind: rbac.GroupKind, APIGroup: rbac.GroupName, Name: fmt.Sprint("group-", i)}},
			})
			continue
		}
		o.RoleBindings = append(o.RoleBindings, rbac.RoleBinding{
			Metadata: rbac.ObjectMeta{Namespace: fmt.Sprint("ns-", i%10), Name: fmt.Sprint("rb-", i)},
			RoleRef:  rbac.RoleRef{APIGroup: rbac.GroupName, Kind: "Role", Name: fmt.Sprint("role-", i%100)},
			Subjects: []rbac.Subject{{Kind: rbac.UserKind, APIGroup: rbac.GroupName, Name: fmt.Sprint("user-", i)}},
		})
	}
	return o
}

// ScaleRequests are the benchmark's two requests, by user-1 (groups
// system:authenticated and group-9) in ns-1: one its RoleBinding allows,
// one no binding allows.
func ScaleRequests() (allowed, denied authz.Attributes) {
	u := &request.User{Name: "user-1", Groups: []string{request.AllAuthenticated, "group-9"}}
	allowed = authz.Attributes{User: u, ResourceRequest: true, Verb: "patch", APIGroup: "apps", APIVersion: "v1", Resource: "deployments", Subresource: "scale", Namespace: "ns-1", Name: "d"}
	denied = authz.Attributes{User: u, ResourceRequest: true, Verb: "delete", APIVersion: "v1", Resource: "secrets", Namespace: "ns-1", Name: "s"}
	return allowed, denied
}
