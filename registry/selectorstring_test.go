package registry

import "testing"

func TestSelectorString(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   any
		want string
		ok   bool
	}{
		{"string", "app=web", "app=web", true},
		{"labels map", map[string]any{"tier": "a", "app": "web"}, "app=web,tier=a", true},
		{"label selector", map[string]any{"matchLabels": map[string]any{"app": "web"}, "matchExpressions": []any{
			map[string]any{"key": "tier", "operator": "In", "values": []any{"b", "a"}},
			map[string]any{"key": "legacy", "operator": "DoesNotExist"},
			map[string]any{"key": "zone", "operator": "NotIn", "values": []any{"x"}},
			map[string]any{"key": "canary", "operator": "Exists"}}}, "app=web,canary,!legacy,tier in (a,b),zone notin (x)", true},
		{"bad operator", map[string]any{"matchExpressions": []any{map[string]any{"key": "a", "operator": "Gt"}}}, "", false},
		{"number", 3, "", false},
	} {
		got, ok := selectorString(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: selectorString = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
