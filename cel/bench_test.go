package cel

import (
	"context"
	"fmt"
	"testing"
)

// benchWidget builds a widget whose spec.ports has n entries; n = 20 is
// about 2 KiB of JSON, n = 1300 about 100 KiB.
func benchWidget(n int) map[string]any {
	ports := make([]any, n)
	for i := range ports {
		ports[i] = map[string]any{"name": fmt.Sprintf("port-%d", i), "port": int64(1000 + i), "protocol": "TCP"}
	}
	tags := []any{"alpha", "beta", "gamma", "delta"}
	return map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default", "labels": map[string]any{"app": "bench"}},
		"spec":     map[string]any{"color": "red", "replicas": int64(3), "minReplicas": int64(1), "size": "512Mi", "url": "https://example.com/x", "name": "widget", "tags": tags, "ports": ports},
	}
}

// benchRules are a typical rule set: spec-level checks, a transition rule
// and two rules per list item.
const (
	benchSpecRules = `[{rule: "self.minReplicas <= self.replicas", fieldPath: ".minReplicas"},
	  {rule: "self.color == oldSelf.color", message: "immutable"},
	  {rule: "quantity(self.size).isLessThan(quantity('1Gi'))"},
	  {rule: "isURL(self.url)"},
	  {rule: "self.tags.all(t, t.size() < 16)"}]`
	benchPortRules = `[{rule: "self.port > 0 && self.port < 65536"}, {rule: "!has(self.protocol) || self.protocol in ['TCP', 'UDP']"}]`
)

func BenchmarkValidate(b *testing.B) {
	for _, size := range []struct {
		name  string
		ports int
	}{{"2KiB", 20}, {"100KiB", 1300}} {
		obj := benchWidget(size.ports)
		old := benchWidget(size.ports)
		for _, rs := range []struct {
			name        string
			spec, ports string
		}{{"no-rules", "", ""}, {"rules", benchSpecRules, benchPortRules}} {
			r := mustCompile(b, widgetSchema(b, rs.spec, rs.ports))
			b.Run(size.name+"/"+rs.name+"/create", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if errs := r.Validate(context.Background(), obj, nil); len(errs) != 0 {
						b.Fatalf("Validate: %v", errs)
					}
				}
			})
			b.Run(size.name+"/"+rs.name+"/update", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if errs := r.Validate(context.Background(), obj, old); len(errs) != 0 {
						b.Fatalf("Validate: %v", errs)
					}
				}
			})
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	s := widgetSchema(b, benchSpecRules, benchPortRules)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(s); err != nil {
			b.Fatal(err)
		}
	}
}
