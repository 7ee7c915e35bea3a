package registry_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

func hooked(s registry.Strategy) *registry.Resource {
	return &registry.Resource{
		Group: "example.com", Version: "v1", Kind: "Hooked", Plural: "hookeds",
		Namespaced: true, Status: true, Generation: true, Strategy: s,
	}
}

const hookedPath = "/apis/example.com/v1/namespaces/default/hookeds"

func hookedObj(name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Hooked", "metadata": map[string]any{"name": name}, "spec": spec}
}

// TestUpdateRetryHookStartsFromRequest: an update retried after a
// conflicting write runs its hooks again on the object as sent, not on
// the one the first attempt's hook changed.
func TestUpdateRetryHookStartsFromRequest(t *testing.T) {
	var s *server
	var calls atomic.Int32
	var sawChanged atomic.Bool
	res := hooked(registry.Strategy{PrepareForUpdate: func(_ context.Context, obj, _ registry.Object) error {
		n := calls.Add(1)
		spec := obj["spec"].(map[string]any)
		if _, ok := spec["hooked"]; ok {
			sawChanged.Store(true)
		}
		spec["hooked"] = int64(n)
		obj.Meta()["labels"] = map[string]any{"hook": "ran"}
		if n == 1 { // a concurrent write: the first attempt conflicts
			s.must(http.StatusOK, http.MethodPut, hookedPath+"/g", hookedObj("g", map[string]any{"color": "blue"}))
		}
		return nil
	}})
	s = newServer(t, res)
	s.must(http.StatusCreated, http.MethodPost, hookedPath, hookedObj("g", map[string]any{"color": "red"}))
	got := s.must(http.StatusOK, http.MethodPut, hookedPath+"/g", hookedObj("g", map[string]any{"color": "green"}))
	if n := calls.Load(); n != 3 {
		t.Fatalf("got %d hook calls; want 3 (first attempt, concurrent write, retry)", n)
	}
	if sawChanged.Load() {
		t.Errorf("got a hook call on an object a previous attempt changed; want the request's object each time")
	}
	if c, h := str(got, "spec.color"), path(got, "spec.hooked"); c != "green" || h != float64(3) {
		t.Errorf("got spec.color %q, spec.hooked %v; want green, 3", c, h)
	}
}

// TestUpdateRetryWithoutHooks: without hooks, an update retried after the
// object was deleted and created again (new uid, new status) stores the
// request's object over the new state, as on a first attempt.
func TestUpdateRetryWithoutHooks(t *testing.T) {
	var s *server
	var calls atomic.Int32
	res := hooked(registry.Strategy{ValidateName: func(context.Context, string) []string {
		if calls.Add(1) == 2 { // the update's first attempt
			s.must(http.StatusOK, http.MethodDelete, hookedPath+"/g", nil)
			s.must(http.StatusCreated, http.MethodPost, hookedPath, hookedObj("g", map[string]any{"color": "blue"}))
			st := hookedObj("g", nil)
			st["status"] = map[string]any{"phase": "again"}
			s.must(http.StatusOK, http.MethodPut, hookedPath+"/g/status", st)
		}
		return nil
	}})
	s = newServer(t, res)
	first := s.must(http.StatusCreated, http.MethodPost, hookedPath, hookedObj("g", map[string]any{"color": "red"}))
	got := s.must(http.StatusOK, http.MethodPut, hookedPath+"/g", hookedObj("g", map[string]any{"color": "green"}))
	if n := calls.Load(); n < 4 {
		t.Fatalf("got %d name checks; want a retried update", n)
	}
	if str(got, "metadata.uid") == str(first, "metadata.uid") {
		t.Errorf("got the first object's uid; want the recreated object's")
	}
	if c, p := str(got, "spec.color"), str(got, "status.phase"); c != "green" || p != "again" {
		t.Errorf("got spec.color %q, status.phase %q; want green, again", c, p)
	}
}
