package rbac

import (
	"math/rand/v2"
	"testing"

	"github.com/kapi-dev/kapi/registry/authz"
)

// FuzzSetJSON: any bytes given as any kind are decoded or refused, never
// a panic, and the Authorizer still decides.
func FuzzSetJSON(f *testing.F) {
	f.Add(uint8(0), []byte(`{"metadata":{"name":"r","namespace":"a"},"rules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}]}`))
	f.Add(uint8(2), []byte(`{"metadata":{"name":"b","namespace":"a"},"subjects":[{"kind":"ServiceAccount","name":"x"}],"roleRef":{"kind":"Role","name":"r"}}`))
	f.Add(uint8(3), []byte(`{"metadata":{"name":"b"},"subjects":[{"kind":"Group","name":"g"},{"kind":"User","name":""}],"roleRef":{"kind":"ClusterRole","name":""}}`))
	f.Add(uint8(1), []byte(`{"metadata":{"name":"c"},"aggregationRule":{"clusterRoleSelectors":[{"matchExpressions":[{"key":"k","operator":"In"}]}]}}`))
	kinds := []string{"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		z := withBootstrap()
		_ = z.SetJSON(kinds[int(kind)%len(kinds)], data)
		for _, a := range []authz.Attributes{in("a", res("get", "", "pods", "status", "x")), nonRes("get", "/x")} {
			a.User = user("system:serviceaccount:a:x", "g")
			z.Authorize(ctx, a)
			z.RulesFor(ctx, a.User, "a")
		}
		_ = Reaggregate(z.ClusterRoles())
	})
}

// TestCoversIsSound: when owner's rules cover a role's, every request the
// role allows, owner's allow too (on random rules and requests of a small
// vocabulary, so that they meet often).
func TestCoversIsSound(t *testing.T) {
	var (
		verbs     = []string{"get", "list", "delete", "*"}
		groups    = []string{"", "apps", "*"}
		resources = []string{"pods", "pods/status", "*/status", "deployments/scale", "*/scale", "*", "pods/*"}
		names     = []string{"a", "b"}
		urls      = []string{"/healthz", "/apis", "/apis/*", "/api*", "*", "/"}
	)
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(from []string, max int) []string {
		var out []string
		for n := r.IntN(max + 1); len(out) < n; {
			out = append(out, from[r.IntN(len(from))])
		}
		return out
	}
	rules := func() []PolicyRule {
		var out []PolicyRule
		for n := 1 + r.IntN(3); len(out) < n; {
			if r.IntN(3) == 0 {
				out = append(out, PolicyRule{Verbs: pick(verbs, 2), NonResourceURLs: pick(urls, 2)})
				continue
			}
			out = append(out, PolicyRule{Verbs: pick(verbs, 2), APIGroups: pick(groups, 2), Resources: pick(resources, 2), ResourceNames: pick(names, 1)})
		}
		return out
	}
	covered := 0
	for i := 0; i < 20000; i++ {
		owner, servant := rules(), rules()
		ok, _ := Covers(owner, servant)
		if !ok {
			continue
		}
		covered++
		for j := 0; j < 20; j++ {
			a := nonRes(verbs[r.IntN(3)], []string{"/healthz", "/apis", "/apis/g", "/api", "/", "/x"}[r.IntN(6)])
			if r.IntN(2) == 0 {
				a = res(verbs[r.IntN(3)], groups[r.IntN(2)], []string{"pods", "deployments", "secrets"}[r.IntN(3)], []string{"", "status", "scale"}[r.IntN(3)], []string{"", "a", "c"}[r.IntN(3)])
			}
			if RulesAllow(&a, servant...) && !RulesAllow(&a, owner...) {
				t.Fatalf("Covers(%v, %v) but %+v is allowed by the second only", owner, servant, a)
			}
		}
	}
	if covered < 1000 {
		t.Errorf("only %d covered cases; the vocabulary should meet more often", covered)
	}
}
