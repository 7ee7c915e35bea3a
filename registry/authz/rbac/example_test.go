package rbac_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
	"github.com/kapi-dev/kapi/registry/request"
)

func Example() {
	z := rbac.New()
	clusterRoles, bindings := rbac.Bootstrap()
	for i := range clusterRoles {
		z.SetClusterRole(&clusterRoles[i])
	}
	for i := range bindings {
		z.SetClusterRoleBinding(&bindings[i])
	}
	z.SetClusterRole(&rbac.ClusterRole{Metadata: rbac.ObjectMeta{Name: "pod-reader"}, Rules: []rbac.PolicyRule{
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}},
	}})
	z.SetRoleBinding(&rbac.RoleBinding{
		Metadata: rbac.ObjectMeta{Namespace: "a", Name: "read-pods"},
		Subjects: []rbac.Subject{{Kind: rbac.UserKind, APIGroup: rbac.GroupName, Name: "alice"}},
		RoleRef:  rbac.RoleRef{APIGroup: rbac.GroupName, Kind: "ClusterRole", Name: "pod-reader"},
	})

	alice := &request.User{Name: "alice", Groups: []string{request.AllAuthenticated}}
	for _, path := range []string{"/api/v1/namespaces/a/pods", "/api/v1/namespaces/b/pods", "/api/v1/namespaces/a/secrets", "/version"} {
		u, _ := url.Parse(path)
		info, _ := request.Parse("GET", u)
		d, reason, _ := z.Authorize(context.Background(), authz.AttributesFrom(alice, info))
		fmt.Printf("%s %s: %v %q\n", info.Verb, path, d, reason)
	}

	// A Role alice writes in a may grant only what she holds there.
	err := z.ConfirmNoEscalation(alice, "a", []rbac.PolicyRule{
		{Verbs: []string{"get", "delete"}, APIGroups: []string{""}, Resources: []string{"pods"}},
	})
	fmt.Println(errors.Is(err, rbac.ErrEscalation))
	fmt.Println(rbac.ForbiddenMessage("roles", "pod-admin", err))
	// Output:
	// list /api/v1/namespaces/a/pods: Allow "RBAC: allowed by RoleBinding \"read-pods/a\" of ClusterRole \"pod-reader\" to User \"alice\""
	// list /api/v1/namespaces/b/pods: NoOpinion ""
	// list /api/v1/namespaces/a/secrets: NoOpinion ""
	// get /version: Allow "RBAC: allowed by ClusterRoleBinding \"system:discovery\" of ClusterRole \"system:discovery\" to Group \"system:authenticated\""
	// true
	// roles.rbac.authorization.k8s.io "pod-admin" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
	// {APIGroups:[""], Resources:["pods"], Verbs:["delete"]}
}
