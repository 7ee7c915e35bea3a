package patch_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/patch"
)

// oddWidget is randomWidget with, now and then, what compareJSON must
// leave to smd or get exactly right: nulls, values of the wrong type,
// undeclared fields, duplicate and keyless list items, numbers of every
// Go form, empty maps and lists, atomic and deduced values, metadata's
// typed fields, a status.
func oddWidget(r *rand.Rand) map[string]any {
	o := randomWidget(r)
	spec := o["spec"].(map[string]any)
	md := o["metadata"].(map[string]any)
	pick := func(vs ...any) any { return vs[r.Intn(len(vs))] }
	odd := func() bool { return r.Intn(6) == 0 }
	if odd() {
		spec["replicas"] = pick(json.Number("1"), json.Number("1.0"), json.Number("1e0"), int64(1), float64(1), float64(1.5), "1", nil, true, int(1))
	}
	if odd() {
		spec["color"] = pick(nil, json.Number("2"), "", map[string]any{})
	}
	if odd() {
		spec["bogus"] = pick("x", map[string]any{"a": "b"}, nil)
	}
	if odd() {
		spec["ports"] = pick(
			[]any{map[string]any{"port": json.Number("80"), "protocol": "TCP"}, map[string]any{"port": json.Number("80"), "protocol": "TCP"}},
			[]any{map[string]any{"port": json.Number("80")}},
			[]any{map[string]any{"port": "80", "protocol": "TCP"}},
			[]any{map[string]any{"port": json.Number("80"), "protocol": "TCP", "name": nil}},
			[]any{map[string]any{"port": json.Number("80.0"), "protocol": "TCP"}, map[string]any{"port": int64(81), "protocol": "UDP"}},
			[]any{nil}, []any{"x"}, []any{}, nil, map[string]any{},
		)
	}
	if odd() {
		spec["tags"] = pick([]any{"a", "a"}, []any{"a", json.Number("1")}, []any{map[string]any{}}, []any{nil}, []any{"b", "a"}, []any{})
	}
	if odd() {
		spec["args"] = pick([]any{"a", "a"}, []any{"a", nil}, []any{map[string]any{"x": "y"}}, []any{}, []any{"b"})
	}
	if odd() {
		spec["selector"] = pick(map[string]any{}, map[string]any{"a": json.Number("1")}, map[string]any{"a": "x", "b": "y"}, nil)
	}
	if odd() {
		spec["settings"] = pick(map[string]any{}, map[string]any{"a": nil}, map[string]any{"a": "1", "b": "2"}, map[string]any{"a": json.Number("1")})
	}
	if odd() {
		spec["template"] = pick(
			map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "labels": map[string]any{"a": "b"}}, "spec": map[string]any{"x": []any{"y"}}},
			map[string]any{"metadata": map[string]any{"name": json.Number("1")}},
			map[string]any{},
		)
	}
	if odd() {
		spec["extra"] = pick(map[string]any{"a": nil}, map[string]any{"a": []any{map[string]any{"b": "c"}}, "n": json.Number("2.5")}, map[string]any{}, "scalar")
	}
	if odd() {
		spec["size"] = pick(json.Number("3"), "3", true, []any{"x"})
	}
	if odd() {
		md["finalizers"] = pick([]any{"a", "b"}, []any{"a", "a"}, []any{})
	}
	if odd() {
		md["ownerReferences"] = pick(
			[]any{map[string]any{"uid": "u1", "name": "n", "kind": "K", "apiVersion": "v1"}},
			[]any{map[string]any{"name": "n"}},
			[]any{map[string]any{"uid": "u1"}, map[string]any{"uid": "u1"}},
		)
	}
	if odd() {
		md["annotations"] = pick(map[string]any{"a": "b"}, map[string]any{}, nil)
	}
	if odd() {
		md["creationTimestamp"] = pick(nil, "2026-01-01T00:00:00Z")
	}
	if odd() {
		o["status"] = pick(
			map[string]any{"readyReplicas": json.Number("1"), "conditions": []any{map[string]any{"type": "Ready"}, map[string]any{"type": "Ready"}}},
			map[string]any{"conditions": []any{}},
			map[string]any{},
		)
	}
	if odd() {
		o["kind"] = pick("Gadget", nil, json.Number("1"))
	}
	if r.Intn(10) == 0 {
		delete(o, "spec")
	}
	return o
}

// mutate returns a deep copy of o with a few fields of an odd widget
// put in or taken out, so that most of it is shared.
func mutate(t testing.TB, r *rand.Rand, o map[string]any) map[string]any {
	c := canonicalKeepNumbers(t, o)
	n := oddWidget(r)
	for _, part := range []string{"spec", "metadata"} {
		dst, ok := c[part].(map[string]any)
		src, _ := n[part].(map[string]any)
		if !ok {
			continue
		}
		// In key order, so that a seed makes the same pair.
		for _, k := range slices.Sorted(maps.Keys(src)) {
			if r.Intn(4) == 0 {
				dst[k] = src[k]
			}
		}
		for _, k := range slices.Sorted(maps.Keys(dst)) {
			if r.Intn(8) == 0 {
				delete(dst, k)
			}
		}
	}
	return c
}

// canonicalKeepNumbers is a deep copy of o that keeps every value's Go
// type (canonical would turn int64 and float64 into json.Number).
func canonicalKeepNumbers(t testing.TB, v map[string]any) map[string]any {
	var cp func(any) any
	cp = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			m := make(map[string]any, len(v))
			for k, e := range v {
				m[k] = cp(e)
			}
			return m
		case []any:
			l := make([]any, len(v))
			for i, e := range v {
				l[i] = cp(e)
			}
			return l
		}
		return v
	}
	return cp(v).(map[string]any)
}

// comparePairs are pairs of objects for compareJSON: creates (live only
// apiVersion and kind), random pairs, and objects beside a mutation.
func comparePairs(t testing.TB, r *rand.Rand, n int) [][2]map[string]any {
	var pairs [][2]map[string]any
	for range n {
		a := oddWidget(r)
		pairs = append(pairs,
			[2]map[string]any{{"apiVersion": "example.com/v1", "kind": "Widget"}, a},
			[2]map[string]any{a, oddWidget(r)},
			[2]map[string]any{a, mutate(t, r, a)},
			[2]map[string]any{mutate(t, r, a), a},
		)
	}
	return pairs
}

// checkCompare fails when compareJSON answers for a pair and smd does not
// validate both or compares them otherwise. It returns whether
// compareJSON answered.
func checkCompare(t testing.TB, fm *patch.FieldManager, l, o map[string]any) bool {
	t.Helper()
	fast, smd, ok, err := patch.CompareJSON(fm, l, o)
	switch {
	case ok && err != nil:
		t.Fatalf("live %s\nobj %s\ngot comparison %s; want smd's error %v", mustJSON(l), mustJSON(o), fast, err)
	case ok && fast != smd:
		t.Fatalf("live %s\nobj %s\ngot comparison\n%s\nwant\n%s", mustJSON(l), mustJSON(o), fast, smd)
	}
	return ok
}

// TestCompareJSONMatchesSMD checks compareJSON against smd's validation
// and Compare on random pairs of widgets, with the widget schema, the
// bench schema and no schema, and on every corpus object after the last.
func TestCompareJSONMatchesSMD(t *testing.T) {
	widget, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	none, err := patch.NewFieldManager(nil, "example.com/v1", patch.FieldManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bench := compareManager(t)
	r := rand.New(rand.NewSource(1))
	pairs := comparePairs(t, r, 500)
	var prev map[string]any
	for _, o := range corpusObjects(t) {
		if prev != nil {
			pairs = append(pairs, [2]map[string]any{prev, o})
		}
		prev = o
	}
	pairs = append(pairs, [2]map[string]any{{"apiVersion": "example.com/v1", "kind": "Widget"}, compareWidget("0")},
		[2]map[string]any{compareWidget("0"), compareWidget("1")})
	answered, valid := map[*patch.FieldManager]int{}, map[*patch.FieldManager]int{}
	for _, p := range pairs {
		for _, fm := range []*patch.FieldManager{widget, none, bench} {
			if checkCompare(t, fm, p[0], p[1]) {
				answered[fm]++
			}
			if _, _, _, err := patch.CompareJSON(fm, p[0], p[1]); err == nil {
				valid[fm]++
			}
		}
	}
	// The check is only worth as much as what compareJSON answers itself:
	// most pairs smd validates (a null beside a value, duplicates, ...
	// are left to smd).
	for name, fm := range map[string]*patch.FieldManager{"widget": widget, "none": none} {
		t.Logf("%s schema: %d pairs, %d valid, %d compared without smd", name, len(pairs), valid[fm], answered[fm])
		if got, want := answered[fm], valid[fm]/2; got < want {
			t.Errorf("%s schema: got %d of %d valid pairs compared without smd; want at least %d", name, got, valid[fm], want)
		}
	}
	if got := answered[bench]; got < 2 {
		t.Errorf("bench schema: got %d pairs compared without smd; want the bench widget's 2 at least", got)
	}
}

// corpusObjects returns every object of the apply corpus's steps.
func corpusObjects(t testing.TB) []map[string]any {
	var objs []map[string]any
	files, _ := filepath.Glob("testdata/apply/*.yaml")
	for _, f := range files {
		if strings.HasSuffix(f, "-schema.yaml") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c corpusCase
		decodeJSONForm(t, b, &c)
		if c.Live != nil {
			objs = append(objs, c.Live)
		}
		for _, st := range c.Steps {
			if st.Object != nil {
				objs = append(objs, st.Object)
			}
		}
	}
	return objs
}

// FuzzCompareJSON checks compareJSON against smd on pairs of random
// widgets drawn from the fuzzer's seed.
func FuzzCompareJSON(f *testing.F) {
	for _, s := range []int64{0, 1, 2, 42} {
		f.Add(s)
	}
	fm, err := patch.NewFieldManager(widgetSchema(f), "example.com/v1", patch.FieldManagerOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		for _, p := range comparePairs(t, rand.New(rand.NewSource(seed)), 4) {
			checkCompare(t, fm, p[0], p[1])
		}
	})
}

// updateBothWays runs Update(live, obj) with its shortcuts (compareJSON,
// fieldsV1 reused) and without (smd's walks, every fieldsV1 written) and fails on any difference in the object, managedFields or
// error (its class).
func updateBothWays(t *testing.T, fm *patch.FieldManager, live, obj map[string]any, opts patch.UpdateOptions) (map[string]any, error) {
	t.Helper()
	run := func(fast bool) (map[string]any, error) {
		defer patch.SetFastUpdate(patch.SetFastUpdate(fast))
		return fm.Update(live, obj, opts)
	}
	got, gotErr := run(true)
	want, wantErr := run(false)
	// smd's validation errors list in map order: only their class and
	// place (before the first ": ") are compared.
	class := func(err error) string {
		if err == nil {
			return ""
		}
		return strings.SplitN(err.Error(), ": ", 2)[0]
	}
	if class(gotErr) != class(wantErr) {
		t.Fatalf("live %s\nobj %s\ngot error %v; want %v", mustJSON(live), mustJSON(obj), gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("live %s\nobj %s\ngot\n%s\nwant\n%s", mustJSON(live), mustJSON(obj), mustJSON(got), mustJSON(want))
	}
	return got, gotErr
}

// TestUpdateFastCompareSame runs creates and chains of updates by several
// managers (with and without the managedFields read back, on the main
// resource and status) over random widgets and the corpus, and checks
// each gives the same object, managedFields and error with Update's
// shortcuts as without.
func TestUpdateShortcutsSame(t *testing.T) {
	reset := map[string][]string{"": {"status"}, "status": {"metadata", "spec"}}
	fm, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{Kind: "Widget", ResetFields: reset})
	if err != nil {
		t.Fatal(err)
	}
	none, err := patch.NewFieldManager(nil, "example.com/v1", patch.FieldManagerOptions{Kind: "Widget"})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for seed := int64(0); seed < 150; seed++ {
		r := rand.New(rand.NewSource(seed))
		m := fm
		if seed%4 == 3 {
			m = none
		}
		var live map[string]any
		obj := oddWidget(r)
		for i := range 8 {
			opts := patch.UpdateOptions{Manager: []string{"a", "b", "c"}[r.Intn(3)], Now: base.Add(time.Duration(i) * time.Second)}
			if r.Intn(5) == 0 {
				opts.Subresource = "status"
			}
			got, err := updateBothWays(t, m, live, obj, opts)
			if err == nil {
				live = withUID(got)
			}
			if live == nil {
				obj = oddWidget(r)
				continue
			}
			obj = mutate(t, r, live)
			if r.Intn(3) == 0 {
				delete(obj["metadata"].(map[string]any), "managedFields")
			}
		}
	}
	// Creates (no managers before: createFields) with and without reset
	// fields, by named and unnamed managers.
	plain, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deep, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{
		ResetFields: map[string][]string{"": {"spec.settings", "metadata.labels", "spec.ports"}, "status": {"metadata", "spec"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(7))
	created := 0
	for i := range 1000 {
		m := []*patch.FieldManager{fm, none, plain, deep}[i%4]
		opts := patch.UpdateOptions{Manager: []string{"a", "", "kubectl-create"}[r.Intn(3)], Now: base}
		if r.Intn(5) == 0 {
			opts.Subresource = "status"
		}
		if got, err := updateBothWays(t, m, nil, oddWidget(r), opts); err == nil && len(entries(got)) > 0 {
			created++
		}
	}
	if created < 500 {
		t.Fatalf("got %d of 1000 creates tracked; want most", created)
	}
	// The corpus objects as updates of each other.
	var live map[string]any
	for i, o := range corpusObjects(t) {
		got, err := updateBothWays(t, fm, live, o, patch.UpdateOptions{Manager: fmt.Sprint("m", i%3), Now: base})
		if err == nil {
			live = withUID(got)
		}
	}
	// The bench widget: a create and an update.
	bench := compareManager(t)
	opts := patch.UpdateOptions{Manager: "compare", Now: base}
	live, _ = updateBothWays(t, bench, nil, compareWidget("0"), opts)
	obj := compareWidget("1")
	obj["metadata"].(map[string]any)["managedFields"] = entries(live)
	updateBothWays(t, bench, withUID(live), obj, opts)
}

// TestReconcileNoop checks safeTypes.noop against smd's
// ReconcileFieldSetWithSchema: field sets of random widgets under one
// schema (or none, where every map is granular) reconciled with another,
// where atomic maps and lists make smd change some.
func TestReconcileNoop(t *testing.T) {
	widget, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	none, err := patch.NewFieldManager(nil, "example.com/v1", patch.FieldManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fms := []*patch.FieldManager{widget, none, compareManager(t)}
	r := rand.New(rand.NewSource(5))
	var noops, changes int
	for range 300 {
		o := oddWidget(r)
		for _, from := range fms {
			f, err := patch.EncodedFieldSet(from, o)
			if err != nil {
				continue
			}
			for _, to := range fms {
				noop, changed, err := patch.Reconcile(to, f)
				if noop && (changed || err != nil) {
					t.Fatalf("set %s: got no change; want smd's change (%v) or error %v", mustJSON(f), changed, err)
				}
				if noop {
					noops++
				}
				if changed {
					changes++
				}
			}
		}
	}
	if noops == 0 || changes == 0 {
		t.Fatalf("got %d sets unchanged and %d changed; want some of each", noops, changes)
	}
	t.Logf("%d unchanged, %d changed", noops, changes)
}
