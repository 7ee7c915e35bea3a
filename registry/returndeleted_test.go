package registry_test

import (
	"context"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

// A kind with ReturnDeletedObject answers a DELETE that removes the
// object with the object (kube's pods, services…); the others with a
// Success Status. A POST to a handler subresource creates: 201, and the
// handler sees the request's field manager.
func TestReturnDeletedObjectAndSubresourcePost(t *testing.T) {
	var manager string
	things := &registry.Resource{Group: "example.com", Version: "v1", Kind: "Thing", Plural: "things", Namespaced: true,
		Strategy: registry.Strategy{ReturnDeletedObject: true},
		Subresources: map[string]registry.SubresourceHandler{
			"poke": func(_ context.Context, req registry.SubresourceRequest) (any, error) {
				manager = req.Manager
				return map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Success"}, nil
			},
		},
	}
	s := newServer(t, things)
	base := "/apis/example.com/v1/namespaces/default/things"
	s.must(201, "POST", base, map[string]any{"metadata": map[string]any{"name": "a"}})
	s.must(201, "POST", base+"/a/poke?fieldManager=me", map[string]any{})
	if manager != "me" {
		t.Errorf("subresource request manager = %q; want me", manager)
	}
	if got := s.must(200, "GET", base+"/a/poke", nil); got["status"] != "Success" {
		t.Errorf("GET subresource: %v", got)
	}
	if got := s.must(200, "DELETE", base+"/a", nil); got["kind"] != "Thing" || got["metadata"].(map[string]any)["name"] != "a" {
		t.Errorf("DELETE with ReturnDeletedObject answered %v; want the Thing", got)
	}
	s.must(201, "POST", widgetsPath, widget("w", nil, nil))
	if got := s.must(200, "DELETE", widgetsPath+"/w", nil); got["kind"] != "Status" {
		t.Errorf("DELETE without ReturnDeletedObject answered %v; want a Status", got)
	}
}
