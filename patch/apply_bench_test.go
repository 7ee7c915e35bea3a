package patch_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/patch"
)

// benchWidget returns a widget of about size bytes of JSON: ports (a list
// map) and settings (a granular map) make up the bulk.
func benchWidget(tb testing.TB, size int) map[string]any {
	tb.Helper()
	var ports []any
	settings := map[string]any{}
	o := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default", "labels": map[string]any{"app": "w"}},
		"spec":     map[string]any{"color": "red", "replicas": json.Number("1")},
	}
	for i := 0; ; i++ {
		if i%16 == 0 {
			if b, _ := json.Marshal(o); len(b) >= size {
				return o
			}
		}
		if i%2 == 0 {
			ports = append(ports, map[string]any{"port": json.Number(fmt.Sprint(1000 + i)), "protocol": "TCP", "name": fmt.Sprintf("port-%d", i)})
			o["spec"].(map[string]any)["ports"] = ports
		} else {
			settings[fmt.Sprintf("setting-%d", i)] = fmt.Sprintf("value-%d", i)
			o["spec"].(map[string]any)["settings"] = settings
		}
	}
}

// benchSetup returns a field manager, a live widget of about size bytes
// applied by "a" (so it carries managedFields), and two configurations
// differing in spec.replicas.
func benchSetup(b *testing.B, size int) (*patch.FieldManager, map[string]any, [2]map[string]any) {
	fm, err := patch.NewFieldManager(widgetSchema(b), "example.com/v1", patch.FieldManagerOptions{Kind: "Widget"})
	if err != nil {
		b.Fatal(err)
	}
	cfg := benchWidget(b, size)
	live, err := fm.Apply(nil, cfg, patch.ApplyOptions{Manager: "a"})
	if err != nil {
		b.Fatal(err)
	}
	live = withUID(live)
	var cfgs [2]map[string]any
	for i := range cfgs {
		c := benchWidget(b, size)
		c["spec"].(map[string]any)["replicas"] = json.Number(fmt.Sprint(i + 2))
		cfgs[i] = c
	}
	return fm, live, cfgs
}

// BenchmarkFieldManager measures server-side apply and managedFields
// tracking of one changed field, beside a merge patch of the same change.
func BenchmarkFieldManager(b *testing.B) {
	for _, size := range []int{2 << 10, 100 << 10} {
		name := fmt.Sprintf("%dKiB", size>>10)
		b.Run("Apply/"+name, func(b *testing.B) {
			fm, live, cfgs := benchSetup(b, size)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := fm.Apply(live, cfgs[i%2], patch.ApplyOptions{Manager: "a"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Update/"+name, func(b *testing.B) {
			fm, live, cfgs := benchSetup(b, size)
			var objs [2]map[string]any
			for i, c := range cfgs {
				c = withUID(c)
				c["metadata"].(map[string]any)["managedFields"] = entries(live)
				objs[i] = c
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := fm.Update(live, objs[i%2], patch.UpdateOptions{Manager: "editor"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("MergePatch/"+name, func(b *testing.B) {
			_, live, _ := benchSetup(b, size)
			orig, _ := json.Marshal(live)
			patches := [2][]byte{[]byte(`{"spec":{"replicas":2}}`), []byte(`{"spec":{"replicas":3}}`)}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := patch.MergePatch(orig, patches[i%2], patch.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
