package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

// pods are deleted gracefully, as kube's pods: the period asked for,
// else spec.grace, and 0 when spec.node is empty.
func pods() *registry.Resource {
	return &registry.Resource{
		Group: "example.com", Version: "v1", Kind: "Pod", Plural: "pods", Namespaced: true, Generation: true,
		Strategy: registry.Strategy{ReturnDeletedObject: true, GracePeriod: func(_ context.Context, o registry.Object, requested *int64) int64 {
			if str(o, "spec.node") == "" {
				return 0
			}
			if requested != nil {
				return *requested
			}
			g, _ := path(o, "spec.grace").(json.Number).Int64()
			return g
		}},
	}
}

// DEL-1: a kind with Strategy.GracePeriod is deleted as kube deletes a
// pod (rest.BeforeDelete): marked with deletionTimestamp and its period,
// removed at once when the period is 0, kept otherwise until a delete
// with a shorter one.
func TestGracefulDelete(t *testing.T) {
	const podsPath = "/apis/example.com/v1/namespaces/default/pods"
	type step struct {
		query  string // of the DELETE
		code   int    // its answer
		period any    // deletionGracePeriodSeconds it answers (nil: not checked)
		gone   bool   // a GET then answers 404
	}
	tests := []struct {
		name       string
		spec       map[string]any
		finalizers []any
		steps      []step
	}{
		{"unscheduled goes at once", map[string]any{"grace": 30}, nil,
			[]step{{"", 200, float64(0), true}}},
		{"scheduled stays", map[string]any{"node": "n", "grace": 30}, nil,
			[]step{{"", 200, float64(30), false}, {"", 200, float64(30), false}, {"?gracePeriodSeconds=40", 200, float64(30), false},
				{"?gracePeriodSeconds=10", 200, float64(10), false}, {"?gracePeriodSeconds=0", 200, float64(0), true}}},
		{"scheduled with a period of 0", map[string]any{"node": "n", "grace": 30}, nil,
			[]step{{"?gracePeriodSeconds=0", 200, float64(0), true}}},
		{"negative period is 1", map[string]any{"node": "n"}, nil,
			[]step{{"?gracePeriodSeconds=-5", 200, float64(1), false}}},
		{"finalizer keeps it", map[string]any{"node": "n"}, []any{holdFinalizer},
			[]step{{"?gracePeriodSeconds=0", 200, float64(0), false}}},
		{"dry run", map[string]any{"node": "n"}, nil,
			[]step{{"?gracePeriodSeconds=0&dryRun=All", 200, float64(0), false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, pods())
			g := map[string]any{"apiVersion": "example.com/v1", "kind": "Pod", "metadata": map[string]any{"name": "g"}, "spec": tt.spec}
			if tt.finalizers != nil {
				g["metadata"].(map[string]any)["finalizers"] = tt.finalizers
			}
			created := s.must(201, "POST", podsPath, g)
			for i, st := range tt.steps {
				got := s.do("DELETE", podsPath+"/g"+st.query, nil)
				if got.code != st.code {
					t.Fatalf("step %d: DELETE%s: code %d (%s); want %d", i, st.query, got.code, got.body, st.code)
				}
				o := got.obj(t)
				if p := path(o, "metadata.deletionGracePeriodSeconds"); st.period != nil && p != st.period {
					t.Fatalf("step %d: deletionGracePeriodSeconds %v; want %v", i, p, st.period)
				}
				if str(o, "metadata.deletionTimestamp") == "" {
					t.Fatalf("step %d: no deletionTimestamp in %s", i, got.body)
				}
				if gen := path(o, "metadata.generation"); gen != float64(2) {
					t.Fatalf("step %d: generation %v; want 2 (bumped once)", i, gen)
				}
				if str(o, "metadata.resourceVersion") == str(created, "metadata.resourceVersion") && !strings.Contains(st.query, "dryRun") {
					t.Fatalf("step %d: resourceVersion unchanged; want the marking write's or the delete's", i)
				}
				if code := s.do("GET", podsPath+"/g", nil).code; (code == 404) != st.gone {
					t.Fatalf("step %d: GET after the DELETE answers %d; want gone=%v", i, code, st.gone)
				}
			}
		})
	}
}
