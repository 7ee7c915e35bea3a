package registry_test

import (
	"context"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	reqinfo "github.com/kapi-dev/kapi/registry/request"
)

// approvables have a second status subresource, approval, whose writes the
// strategy narrows to status.approved, keep the sent metadata
// (StatusWritesMetadata), and are refused by Admit when they approve
// with a bad reason.
func approvables() *registry.Resource {
	return &registry.Resource{
		Group: "example.com", Version: "v1", Kind: "Approvable", Plural: "approvables", Status: true,
		StatusSubresources: []string{"approval"},
		Strategy: registry.Strategy{
			StatusWritesMetadata: true,
			PrepareForUpdate: func(ctx context.Context, obj, old registry.Object) error {
				if info, ok := reqinfo.InfoFrom(ctx); ok && info.Subresource == "approval" {
					st, _ := obj["status"].(map[string]any)
					next := map[string]any{}
					if o, ok := old["status"].(map[string]any); ok {
						for k, v := range o {
							next[k] = v
						}
					}
					next["approved"] = st["approved"]
					obj["status"] = next
				}
				return nil
			},
			Admit: func(_ context.Context, obj, _ registry.Object) error {
				if st, _ := obj["status"].(map[string]any); st["approved"] == "no-way" {
					return &registry.StatusError{Status: registry.Status{Kind: "Status", APIVersion: "v1", Status: "Failure", Code: 403, Reason: "Forbidden", Message: "not allowed"}}
				}
				return nil
			},
		},
	}
}

// Resource.StatusSubresources are served as status is (get, update,
// patch), write the status alone, are named in discovery, and a write
// through them passes the strategy's hooks, Admit last.
func TestStatusSubresources(t *testing.T) {
	s := newServer(t, approvables())
	const p = "/apis/example.com/v1/approvables"
	s.must(201, "POST", p, map[string]any{"metadata": map[string]any{"name": "g"}, "spec": map[string]any{"size": 1}, "status": map[string]any{"approved": "x"}})
	for _, tt := range []struct {
		name, method, path string
		body               any
		ct                 string
		code               int
		want               map[string]any // dotted path → value
	}{
		{"get approval", "GET", p + "/g/approval", nil, "", 200, map[string]any{"spec.size": float64(1), "status": nil}},
		{"put approval", "PUT", p + "/g/approval", map[string]any{"metadata": map[string]any{"name": "g", "labels": map[string]any{"a": "b"}}, "spec": map[string]any{"size": 9}, "status": map[string]any{"approved": "yes", "other": "z"}}, "", 200,
			map[string]any{"spec.size": float64(1), "status.approved": "yes", "status.other": nil, "metadata.labels.a": "b"}},
		{"patch approval", "PATCH", p + "/g/approval", `{"status":{"approved":"later"}}`, "application/merge-patch+json", 200,
			map[string]any{"status.approved": "later"}},
		{"status writes other fields", "PATCH", p + "/g/status", `{"status":{"other":"z"},"spec":{"size":5}}`, "application/merge-patch+json", 200,
			map[string]any{"status.other": "z", "status.approved": "later", "spec.size": float64(1)}},
		{"admit refuses", "PATCH", p + "/g/approval", `{"status":{"approved":"no-way"}}`, "application/merge-patch+json", 403,
			map[string]any{"message": "not allowed"}},
		{"main resource keeps status", "PATCH", p + "/g", `{"status":{"approved":"main"}}`, "application/merge-patch+json", 200,
			map[string]any{"status.approved": "later"}},
		{"delete not served", "DELETE", p + "/g/approval", nil, "", 405, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var hdr []string
			if tt.ct != "" {
				hdr = []string{"Content-Type", tt.ct}
			}
			got := s.must(tt.code, tt.method, tt.path, tt.body, hdr...)
			for k, want := range tt.want {
				if v := path(got, k); v != want {
					t.Errorf("%s = %v; want %v", k, v, want)
				}
			}
		})
	}
	list := s.must(200, "GET", "/apis/example.com/v1", nil)
	var names []string
	for _, r := range list["resources"].([]any) {
		names = append(names, r.(map[string]any)["name"].(string))
	}
	for _, want := range []string{"approvables/approval", "approvables/status"} {
		if !slices.Contains(names, want) {
			t.Errorf("discovery lists %v; want %s among them", names, want)
		}
	}
}
