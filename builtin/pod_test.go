package builtin

import (
	"context"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

// podGracePeriod is kube's CheckGracefulDelete.
func TestPodGracePeriod(t *testing.T) {
	p := func(n int64) *int64 { return &n }
	tests := []struct {
		name      string
		spec      map[string]any
		phase     string
		requested *int64
		want      int64
	}{
		{"unscheduled", map[string]any{"terminationGracePeriodSeconds": num(30)}, "Pending", nil, 0},
		{"unscheduled asking for time", map[string]any{}, "Pending", p(20), 0},
		{"scheduled takes its own", map[string]any{"nodeName": "n", "terminationGracePeriodSeconds": num(30)}, "Running", nil, 30},
		{"scheduled without its own", map[string]any{"nodeName": "n"}, "Running", nil, 0},
		{"scheduled asking", map[string]any{"nodeName": "n", "terminationGracePeriodSeconds": num(30)}, "Running", p(5), 5},
		{"scheduled asking for none", map[string]any{"nodeName": "n", "terminationGracePeriodSeconds": num(30)}, "Running", p(0), 0},
		{"succeeded", map[string]any{"nodeName": "n", "terminationGracePeriodSeconds": num(30)}, "Succeeded", nil, 0},
		{"failed", map[string]any{"nodeName": "n"}, "Failed", p(9), 0},
		{"negative own", map[string]any{"nodeName": "n", "terminationGracePeriodSeconds": num(-3)}, "Running", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := registry.Object{"spec": tt.spec, "status": map[string]any{"phase": tt.phase}}
			if got := podGracePeriod(context.Background(), pod, tt.requested); got != tt.want {
				t.Fatalf("podGracePeriod = %d; want %d", got, tt.want)
			}
		})
	}
}
