package patch_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/benchobj"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
)

// compareWidget is bench/compare's ~2 KiB widget as the registry hands it
// to the field manager on create: JSON form, server fields set.
func compareWidget(counter string) map[string]any {
	o := benchobj.CompareWidget(1, "ns-1")
	o["metadata"].(map[string]any)["generation"] = json.Number("1")
	o["spec"].(map[string]any)["counter"] = json.Number(counter)
	return o
}

func compareManager(tb testing.TB) *patch.FieldManager {
	tb.Helper()
	defs, err := schema.ParseCRDs([]byte(benchobj.CompareCRD))
	if err != nil {
		tb.Fatal(err)
	}
	s := defs[0].Versions[0].Schema
	fm, err := patch.NewFieldManager(s, "example.com/v1", patch.FieldManagerOptions{
		Kind:        "Widget",
		ResetFields: map[string][]string{"": {"status"}, "status": {"metadata", "spec"}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return fm
}

// BenchmarkUpdateCompareWidget measures managedFields tracking of
// bench/compare's widget: a create (live nil) and an update by the same
// manager that changes spec.counter, the object carrying the
// managedFields read back (as client-go's update sends them).
func BenchmarkUpdateCompareWidget(b *testing.B) {
	fm := compareManager(b)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opts := patch.UpdateOptions{Manager: "compare", Now: now}
	b.Run("create", func(b *testing.B) {
		obj := compareWidget("0")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := fm.Update(nil, obj, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update", func(b *testing.B) {
		live, err := fm.Update(nil, compareWidget("0"), opts)
		if err != nil {
			b.Fatal(err)
		}
		live = canonical(b, live).(map[string]any)
		var objs [2]map[string]any
		for i, c := range []string{"1", "2"} {
			o := compareWidget(c)
			o["metadata"].(map[string]any)["managedFields"] = entries(live)
			objs[i] = o
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := fm.Update(live, objs[i%2], opts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
