package builtin_test

import (
	"context"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage/memory"
)

// The times the kinds' strategies stamp are the registry's clock
// (registry.Options.Now, read by registry.Now), as its creation
// timestamps are: one row per field.
func TestStrategiesUseRegistryClock(t *testing.T) {
	fixed := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	clock := func() time.Time { return fixed }
	const (
		pods = "/api/v1/namespaces/default/pods"
		pod  = `{"metadata":{"name":"p","labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`
		pv   = `{"metadata":{"name":"pv"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/tmp"}}}`
		pdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
	)
	stamp := fixed.Format(time.RFC3339)
	type call struct{ method, path, ct, body string }
	condition := func(typ string) func(map[string]any) any {
		return func(m map[string]any) any {
			for _, c := range at(m, "status.conditions").([]any) {
				if c := c.(map[string]any); c["type"] == typ {
					return c["lastTransitionTime"]
				}
			}
			return nil
		}
	}
	field := func(path string) func(map[string]any) any { return func(m map[string]any) any { return at(m, path) } }
	for _, tt := range []struct {
		name  string
		calls []call // the last one's answer is read
		got   func(map[string]any) any
		want  string
	}{
		{"persistent volume lastPhaseTransitionTime", []call{{"POST", "/api/v1/persistentvolumes", "", pv}},
			field("status.lastPhaseTransitionTime"), stamp},
		{"gated pod's PodScheduled condition", []call{{"POST", pods, "", `{"metadata":{"name":"g"},"spec":{"schedulingGates":[{"name":"example.com/wait"}],"containers":[{"name":"app","image":"nginx"}]}}`}},
			condition("PodScheduled"), stamp},
		{"binding's PodScheduled condition", []call{{"POST", pods, "", pod},
			{"POST", pods + "/p/binding", "", `{"metadata":{"name":"p"},"target":{"kind":"Node","name":"node-1"}}`},
			{"GET", pods + "/p", "", ""}},
			condition("PodScheduled"), stamp},
		{"eviction's disruptedPods", []call{{"POST", pods, "", pod},
			{"PATCH", pods + "/p/status", "application/merge-patch+json", `{"status":{"phase":"Running"}}`},
			{"POST", pdbs, "", `{"metadata":{"name":"b"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}}`},
			{"PATCH", pdbs + "/b/status", "application/merge-patch+json", `{"status":{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2}}`},
			{"POST", pods + "/p/eviction", "", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`},
			{"GET", pdbs + "/b", "", ""}},
			field("status.disruptedPods.p"), stamp},
		{"token request's creationTimestamp", []call{{"POST", "/api/v1/namespaces/default/serviceaccounts", "", `{"metadata":{"name":"sa"}}`},
			{"POST", "/api/v1/namespaces/default/serviceaccounts/sa/token", "", `{"spec":{"expirationSeconds":3600}}`}},
			field("metadata.creationTimestamp"), stamp},
		{"token request's expirationTimestamp", []call{{"POST", "/api/v1/namespaces/default/serviceaccounts", "", `{"metadata":{"name":"sa"}}`},
			{"POST", "/api/v1/namespaces/default/serviceaccounts/sa/token", "", `{"spec":{"expirationSeconds":3600}}`}},
			field("status.expirationTimestamp"), fixed.Add(time.Hour).Format(time.RFC3339)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := clockedRegistry(t, clock)
			var m map[string]any
			for _, c := range tt.calls {
				var code int
				code, _, m = do(t, r, c.method, c.path, c.ct, c.body)
				if code >= 300 {
					t.Fatalf("%s %s: %d %v", c.method, c.path, code, m)
				}
			}
			if got := tt.got(m); got != tt.want {
				t.Errorf("got %v, want %s (the registry's clock)", got, tt.want)
			}
		})
	}

	// A Client's write carries the clock too, and a hook outside any
	// request reads time.Now.
	r := clockedRegistry(t, clock)
	c, err := registry.NewClient[map[string]any](r, "v1", "persistentvolumes")
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"metadata": map[string]any{"name": "pv"}, "spec": map[string]any{"capacity": map[string]any{"storage": "1Gi"},
		"accessModes": []any{"ReadWriteOnce"}, "hostPath": map[string]any{"path": "/tmp"}}}
	out, err := c.Create(context.Background(), "", &obj)
	if err != nil {
		t.Fatal(err)
	}
	if got := at(*out, "status.lastPhaseTransitionTime"); got != stamp {
		t.Errorf("Client: lastPhaseTransitionTime %v, want %s", got, stamp)
	}
	if got := registry.Now(context.Background()); time.Until(got).Abs() > time.Hour {
		t.Errorf("Now outside a request: %v, want time.Now", got)
	}
}

// clockedRegistry serves the built-in kinds with the clock now, its
// tokens' too (as the example server wires them).
func clockedRegistry(t *testing.T, now func() time.Time) *registry.Registry {
	t.Helper()
	r, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := builtin.NewTokens(builtin.TokenOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := builtin.Register(r, builtin.Options{Tokens: tokens}); err != nil {
		t.Fatal(err)
	}
	return r
}
