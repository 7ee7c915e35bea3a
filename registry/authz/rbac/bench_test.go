package rbac

import (
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

// benchAuthorizer holds Bootstrap's defaults, 1,000 Roles (10 namespaces
// × 100, 3 rules each) and n bindings: RoleBindings of user-i to role
// i%100 of its namespace, and every tenth a ClusterRoleBinding of group-i
// to a ClusterRole.
func benchAuthorizer(n int) *Authorizer {
	z := withBootstrap()
	for ns := 0; ns < 10; ns++ {
		for i := 0; i < 100; i++ {
			z.SetRole(&Role{Metadata: ObjectMeta{Namespace: fmt.Sprint("ns-", ns), Name: fmt.Sprint("role-", i)}, Rules: []PolicyRule{
				{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}},
				{Verbs: []string{"create", "update", "patch", "delete"}, APIGroups: []string{"apps"}, Resources: []string{"deployments", "deployments/scale"}},
				{Verbs: []string{"get"}, APIGroups: []string{"example.com"}, Resources: []string{fmt.Sprint("widgets-", i)}},
			}})
		}
	}
	z.SetClusterRole(&ClusterRole{Metadata: ObjectMeta{Name: "reader"}, Rules: []PolicyRule{
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{"*"}, Resources: []string{"nodes"}},
	}})
	for i := 0; i < n; i++ {
		if i%10 == 9 {
			z.SetClusterRoleBinding(&ClusterRoleBinding{Metadata: ObjectMeta{Name: fmt.Sprint("crb-", i)}, RoleRef: clusterRoleRef("reader"),
				Subjects: []Subject{{Kind: GroupKind, APIGroup: GroupName, Name: fmt.Sprint("group-", i)}}})
			continue
		}
		ns := fmt.Sprint("ns-", i%10)
		z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: ns, Name: fmt.Sprint("rb-", i)}, RoleRef: roleRef(fmt.Sprint("role-", i%100)),
			Subjects: []Subject{{Kind: UserKind, APIGroup: GroupName, Name: fmt.Sprint("user-", i)}}})
	}
	return z
}

// BenchmarkAuthorize decides for user-1 (groups system:authenticated and
// group-9) in ns-1 as the number of bindings grows: allowed through its
// RoleBinding, and denied after visiting all its bindings.
func BenchmarkAuthorize(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		z := benchAuthorizer(n)
		u := &request.User{Name: "user-1", Groups: []string{request.AllAuthenticated, "group-9"}}
		cases := []struct {
			name string
			a    authz.Attributes
			want authz.Decision
		}{
			{"allowed", authz.Attributes{User: u, ResourceRequest: true, Verb: "patch", APIGroup: "apps", Resource: "deployments", Subresource: "scale", Namespace: "ns-1", Name: "d"}, authz.Allow},
			{"denied", authz.Attributes{User: u, ResourceRequest: true, Verb: "delete", APIGroup: "", Resource: "secrets", Namespace: "ns-1", Name: "s"}, authz.NoOpinion},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("bindings=%d/%s", n, c.name), func(b *testing.B) {
				if d, _, _ := z.Authorize(ctx, c.a); d != c.want {
					b.Fatalf("got %v; want %v", d, c.want)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					z.Authorize(ctx, c.a)
				}
			})
		}
	}
}

// BenchmarkAuthorizeParallel is the allowed case with 1,000 bindings from
// every core at once (the read lock's cost under contention).
func BenchmarkAuthorizeParallel(b *testing.B) {
	z := benchAuthorizer(1000)
	u := &request.User{Name: "user-1", Groups: []string{request.AllAuthenticated, "group-9"}}
	a := authz.Attributes{User: u, ResourceRequest: true, Verb: "get", Resource: "configmaps", Namespace: "ns-1", Name: "c"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			z.Authorize(ctx, a)
		}
	})
}

// BenchmarkSetRoleBinding replaces one RoleBinding (a new user each time)
// among n bindings: the copy-on-write cost of a write.
func BenchmarkSetRoleBinding(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint("bindings=", n), func(b *testing.B) {
			z := benchAuthorizer(n)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "ns-1", Name: "rb-1"}, RoleRef: roleRef("role-1"),
					Subjects: []Subject{{Kind: UserKind, Name: fmt.Sprint("writer-", i%1000)}}})
			}
		})
	}
}
