package registry_test

import (
	"context"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

// A DirectWrite update changes the object but neither its managedFields
// nor its generation, as kube's storage-level writes (assignPod).
func TestDirectWrite(t *testing.T) {
	tests := []struct {
		name    string
		direct  bool
		gen     float64
		entries int
	}{
		{"through the REST update", false, 2, 2},
		{"direct", true, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			s.must(201, "POST", widgetsPath, widget("a", nil, map[string]any{"color": "red"}))
			c, err := registry.NewClient[map[string]any](s.reg, "example.com/v1", "widgets")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tt.direct {
				ctx = registry.DirectWrite(ctx)
			}
			w, err := c.Get(ctx, "default", "a")
			if err != nil {
				t.Fatal(err)
			}
			(*w)["spec"] = map[string]any{"color": "blue"}
			if _, err := c.Update(ctx, "default", w); err != nil {
				t.Fatal(err)
			}
			got := s.must(200, "GET", widgetsPath+"/a", nil)
			mf, _ := path(got, "metadata.managedFields").([]any)
			if str(got, "spec.color") != "blue" || path(got, "metadata.generation") != tt.gen || len(mf) != tt.entries {
				t.Fatalf("got color %q, generation %v, %d managedFields entries; want blue, %v, %d",
					str(got, "spec.color"), path(got, "metadata.generation"), len(mf), tt.gen, tt.entries)
			}
		})
	}
}
