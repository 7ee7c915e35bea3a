package registry_test

import (
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

// A path nothing serves under a group no built-in kind serves answers
// kube's text/plain "404 page not found" (its CRD handler hands it to the
// mux); under the core group or a built-in kind's group, a NotFound
// Status.
func TestNotServedPaths(t *testing.T) {
	globals := &registry.Resource{Group: "custom.example.com", Version: "v1", Kind: "Global", Plural: "globals", Custom: true}
	things := &registry.Resource{Group: "custom.example.com", Version: "v1", Kind: "Thing", Plural: "things", Namespaced: true, Custom: true}
	s := newServer(t, globals, things)
	tests := []struct {
		method, path string
		plain        bool
	}{
		{"GET", "/apis/custom.example.com/v1/namespaces/default/globals", true}, // cluster-scoped kind under a namespace
		{"GET", "/apis/custom.example.com/v1/nopes", true},
		{"GET", "/apis/custom.example.com/v2/things", true},
		{"GET", "/apis/custom.example.com/v1/things/a", true}, // namespaced kind, no namespace
		{"POST", "/apis/custom.example.com/v1/things", true},  // create across namespaces
		{"GET", "/apis/gone.example.com/v1/namespaces/default/things", true},
		{"GET", "/api/v1/namespaces/default/nopes", false},
		{"GET", "/api/v1/configmaps/a", false},
		{"GET", "/apis/custom.example.com/v1/globals", false}, // served: a list
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := s.do(tt.method, tt.path, nil)
			ct := r.header.Get("Content-Type")
			switch {
			case tt.plain && (r.code != 404 || ct != "text/plain; charset=utf-8" || string(r.body) != "404 page not found\n"):
				t.Fatalf("got %d %s %q; want 404 text/plain \"404 page not found\"", r.code, ct, r.body)
			case !tt.plain && strings.HasPrefix(ct, "text/plain"):
				t.Fatalf("got %d %s %q; want a Status", r.code, ct, r.body)
			}
		})
	}
}
