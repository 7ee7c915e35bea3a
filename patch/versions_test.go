package patch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
)

// Gauges have two versions whose fields differ, as HPAs' do:
// example.com/v1 has one metric (spec.cpu) and an atomic spec.ref;
// example.com/v2 a list of metrics and a granular spec.ref. v1 keeps
// v2's other metrics in an annotation, as autoscaling/v1 does.
const (
	gaugeV1 = `{type: object, properties: {apiVersion: {type: string}, kind: {type: string},
  metadata: {type: object, properties: {name: {type: string}, uid: {type: string}, annotations: {type: object, additionalProperties: {type: string}}}},
  spec: {type: object, properties: {max: {type: integer}, cpu: {type: integer},
    ref: {type: object, x-kubernetes-map-type: atomic, properties: {kind: {type: string}, name: {type: string}}}}}}}`
	gaugeV2 = `{type: object, properties: {apiVersion: {type: string}, kind: {type: string},
  metadata: {type: object, properties: {name: {type: string}, uid: {type: string}, annotations: {type: object, additionalProperties: {type: string}}}},
  spec: {type: object, properties: {max: {type: integer},
    metrics: {type: array, x-kubernetes-list-type: atomic, items: {type: object, properties: {name: {type: string}, value: {type: integer}}}},
    ref: {type: object, properties: {kind: {type: string}, name: {type: string}}}}}}}`
	gaugeMetrics = "example.com/metrics"
)

type gauges struct {
	v1, v2 *patch.FieldManager
	calls  int // conversions
}

func newGauges(t testing.TB) *gauges {
	t.Helper()
	g := &gauges{}
	for _, v := range []struct {
		s  string
		av string
		fm **patch.FieldManager
	}{{gaugeV1, "example.com/v1", &g.v1}, {gaugeV2, "example.com/v2", &g.v2}} {
		s, err := schema.Parse([]byte(mustYAMLJSON(t, v.s)))
		if err != nil {
			t.Fatal(err)
		}
		if *v.fm, err = patch.NewFieldManager(s, v.av, patch.FieldManagerOptions{Kind: "Gauge"}); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func mustYAMLJSON(t testing.TB, s string) string {
	t.Helper()
	var m map[string]any
	decodeJSONForm(t, []byte(s), &m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// convert is the Gauges' patch.ConvertFunc: v2's metrics other than cpu
// travel in v1's annotation.
func (g *gauges) convert(obj map[string]any, apiVersion string) (map[string]any, *patch.FieldManager, error) {
	g.calls++
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	from := obj["apiVersion"]
	obj["apiVersion"] = apiVersion
	switch {
	case apiVersion == from && from == "example.com/v1":
		return obj, g.v1, nil
	case apiVersion == from && from == "example.com/v2":
		return obj, g.v2, nil
	case apiVersion == "example.com/v1":
		var rest []any
		ms, _ := spec["metrics"].([]any)
		for _, m := range ms {
			if m.(map[string]any)["name"] == "cpu" {
				spec["cpu"] = m.(map[string]any)["value"]
			} else {
				rest = append(rest, m)
			}
		}
		delete(spec, "metrics")
		if rest != nil {
			b, _ := json.Marshal(rest)
			md["annotations"] = map[string]any{gaugeMetrics: string(b)}
		}
		return obj, g.v1, nil
	case apiVersion == "example.com/v2":
		var ms []any
		if a, ok := md["annotations"].(map[string]any); ok {
			if s, ok := a[gaugeMetrics].(string); ok {
				if err := json.Unmarshal([]byte(s), &ms); err != nil {
					return nil, nil, err
				}
			}
			delete(md, "annotations")
		}
		if cpu, ok := spec["cpu"]; ok {
			ms = append(ms, map[string]any{"name": "cpu", "value": cpu})
			delete(spec, "cpu")
		}
		if ms != nil {
			spec["metrics"] = ms
		}
		return obj, g.v2, nil
	}
	return nil, nil, fmt.Errorf("%w: %s", patch.ErrMissingVersion, apiVersion)
}

// at converts o to apiVersion (a copy), as a read at that version would.
func (g *gauges) at(t testing.TB, o map[string]any, apiVersion string) map[string]any {
	t.Helper()
	b, _ := json.Marshal(o)
	c := obj(t, string(b))
	out, _, err := g.convert(c, apiVersion)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fieldsOf is the fieldsV1 of o's entry of manager at apiVersion (nil: none).
func fieldsOf(o map[string]any, manager, apiVersion string) any {
	for _, e := range entries(o) {
		m := e.(map[string]any)
		if m["manager"] == manager && m["apiVersion"] == apiVersion {
			return m["fieldsV1"]
		}
	}
	return nil
}

func TestManagersAtOtherVersions(t *testing.T) {
	const created = `{apiVersion: example.com/v2, kind: Gauge, metadata: {name: g},
  spec: {max: 5, metrics: [{name: qps, value: 10}], ref: {kind: Deployment, name: web}}}`
	tests := []struct {
		name string
		// a writes created at v2 (apply or update); then b writes at v1
		// (apply or update) its spec.
		aApplies, bApplies bool
		bSpec              string
		convert            bool
		wantA              string // a's fieldsV1 after; "" none
		wantB              string
		wantConflicts      []patch.Conflict
	}{{
		name:  "update at v1: the v2 manager loses the metrics changed at v2, keeps ref's fields",
		bSpec: `{max: 6, cpu: 75, ref: {kind: Deployment, name: web}}`, convert: true,
		wantA: `{f:spec: {.: {}, f:ref: {.: {}, f:kind: {}, f:name: {}}}}`,
		wantB: `{f:spec: {f:cpu: {}, f:max: {}}}`,
	}, {
		name:  "update at v1 without a converter: compared at v1 (identity)",
		bSpec: `{max: 6, cpu: 75, ref: {kind: Deployment, name: web}}`,
		wantA: `{f:spec: {.: {}, f:metrics: {}, f:ref: {}}}`,
		wantB: `{f:spec: {f:cpu: {}, f:max: {}}}`,
	}, {
		name:     "apply at v1 conflicts with the v2 applier at v2's path",
		aApplies: true, bApplies: true, convert: true,
		bSpec:         `{cpu: 75}`,
		wantConflicts: []patch.Conflict{{Manager: "a", Operation: "Apply", Field: ".spec.metrics"}},
	}, {
		name:     "apply at v1 without a converter: no conflict seen",
		aApplies: true, bApplies: true,
		bSpec: `{cpu: 75}`,
		wantA: `{f:spec: {f:max: {}, f:metrics: {}, f:ref: {}}}`,
		wantB: `{f:spec: {f:cpu: {}}}`,
	}, {
		name:     "apply at v1 of what v2 has: the v2 applier keeps its fields",
		aApplies: true, bApplies: true, convert: true,
		bSpec: `{max: 5}`,
		wantA: `{f:spec: {f:max: {}, f:metrics: {}, f:ref: {f:kind: {}, f:name: {}}}}`,
		wantB: `{f:spec: {f:max: {}}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGauges(t)
			var conv patch.ConvertFunc
			if tt.convert {
				conv = g.convert
			}
			var live map[string]any
			var err error
			if tt.aApplies {
				live, err = g.v2.Apply(nil, obj(t, created), patch.ApplyOptions{Manager: "a", Now: t0, Convert: conv})
			} else {
				live, err = g.v2.Update(nil, obj(t, created), patch.UpdateOptions{Manager: "a", Now: t0, Convert: conv})
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.calls != 0 {
				t.Fatalf("writing at v2 with every manager at v2 converted %d times; want 0", g.calls)
			}
			live = g.at(t, withUID(live), "example.com/v1")
			var out map[string]any
			if tt.bApplies {
				out, err = g.v1.Apply(live, obj(t, `{apiVersion: example.com/v1, kind: Gauge, metadata: {name: g}, spec: `+tt.bSpec+`}`),
					patch.ApplyOptions{Manager: "b", Now: t0, Convert: conv})
			} else {
				next := g.at(t, live, "example.com/v1")
				next["spec"] = obj(t, tt.bSpec)
				out, err = g.v1.Update(live, next, patch.UpdateOptions{Manager: "b", Now: t0, Convert: conv})
			}
			if tt.wantConflicts != nil {
				var ce *patch.ConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("got %v; want a conflict", err)
				}
				if !reflect.DeepEqual(ce.Conflicts, tt.wantConflicts) {
					t.Fatalf("got conflicts %+v; want %+v", ce.Conflicts, tt.wantConflicts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []struct{ manager, av, want string }{{"a", "example.com/v2", tt.wantA}, {"b", "example.com/v1", tt.wantB}} {
				got := fieldsOf(out, w.manager, w.av)
				var want any
				if w.want != "" {
					want = obj(t, w.want)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s's fields: got %s; want %s", w.manager, mustJSON(got), mustJSON(want))
				}
			}
		})
	}
}

func TestManagersAtOtherVersionsEdges(t *testing.T) {
	const v1Live = `{apiVersion: example.com/v1, kind: Gauge, metadata: {name: g, uid: u-1, managedFields: [
  {manager: a, operation: Update, apiVersion: example.com/v1, fieldsType: FieldsV1, fieldsV1: {f:spec: {f:max: {}}}},
  {manager: z, operation: Update, apiVersion: example.com/v9, fieldsType: FieldsV1, fieldsV1: {f:spec: {f:cpu: {}}}}]},
  spec: {max: 5, cpu: 10}}`
	const v1Next = `{apiVersion: example.com/v1, kind: Gauge, metadata: {name: g, uid: u-1}, spec: {max: 6, cpu: 10}}`
	broken := func(map[string]any, string) (map[string]any, *patch.FieldManager, error) {
		return nil, nil, errors.New("webhook down")
	}
	tests := []struct {
		name    string
		apply   bool
		convert func(g *gauges) patch.ConvertFunc
		wantErr error
		// wantConversionErr: a *patch.ConversionError wrapping the
		// converter's
		wantConversionErr bool
		wantZ             bool // z's entry kept
		wantKept          bool // live's managedFields kept as they were
	}{
		{name: "update: a manager at a missing version is dropped", convert: func(g *gauges) patch.ConvertFunc { return g.convert }},
		{name: "apply: a manager at a missing version is dropped", apply: true, convert: func(g *gauges) patch.ConvertFunc { return g.convert }},
		{name: "update without a converter: kept", convert: func(*gauges) patch.ConvertFunc { return nil }, wantZ: true},
		{name: "update: a failed conversion keeps live's managedFields", convert: func(*gauges) patch.ConvertFunc { return broken },
			wantErr: patch.ErrSchema, wantZ: true, wantKept: true},
		{name: "apply: a failed conversion fails the apply", apply: true, convert: func(*gauges) patch.ConvertFunc { return broken },
			wantConversionErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGauges(t)
			live := obj(t, v1Live)
			var out map[string]any
			var err error
			if tt.apply {
				out, err = g.v1.Apply(live, obj(t, `{apiVersion: example.com/v1, kind: Gauge, metadata: {name: g}, spec: {max: 6}}`),
					patch.ApplyOptions{Manager: "b", Force: true, Now: t0, Convert: tt.convert(g)})
			} else {
				out, err = g.v1.Update(live, obj(t, v1Next), patch.UpdateOptions{Manager: "b", Now: t0, Convert: tt.convert(g)})
			}
			var cv *patch.ConversionError
			switch {
			case tt.wantConversionErr:
				if !errors.As(err, &cv) || cv.Err.Error() != "webhook down" {
					t.Fatalf("got error %v; want a *patch.ConversionError of the converter's", err)
				}
			case !errors.Is(err, tt.wantErr):
				t.Fatalf("got error %v; want %v", err, tt.wantErr)
			}
			if tt.apply && err != nil {
				return
			}
			if got := fieldsOf(out, "z", "example.com/v9") != nil; got != tt.wantZ {
				t.Errorf("z's entry there: %v; want %v (%s)", got, tt.wantZ, mustJSON(entries(out)))
			}
			if kept := reflect.DeepEqual(entries(out), entries(live)); kept != tt.wantKept {
				t.Errorf("live's managedFields kept: %v; want %v", kept, tt.wantKept)
			}
		})
	}
}

// An applier whose last apply was at v2 applies at v1 without v2's
// metrics: they are pruned at v2 (where its last set names them), so the
// v1 annotation that carries them goes too.
func TestApplyPrunesAtLastAppliedVersion(t *testing.T) {
	for _, convert := range []bool{true, false} {
		t.Run(fmt.Sprint("convert=", convert), func(t *testing.T) {
			g := newGauges(t)
			var conv patch.ConvertFunc
			if convert {
				conv = g.convert
			}
			live, err := g.v2.Apply(nil, obj(t, `{apiVersion: example.com/v2, kind: Gauge, metadata: {name: g}, spec: {max: 5, metrics: [{name: qps, value: 10}]}}`),
				patch.ApplyOptions{Manager: "a", Now: t0, Convert: conv})
			if err != nil {
				t.Fatal(err)
			}
			live = g.at(t, withUID(live), "example.com/v1")
			out, err := g.v1.Apply(live, obj(t, `{apiVersion: example.com/v1, kind: Gauge, metadata: {name: g}, spec: {max: 5}}`),
				patch.ApplyOptions{Manager: "a", Now: t0, Convert: conv})
			if err != nil {
				t.Fatal(err)
			}
			md := out["metadata"].(map[string]any)
			_, annotated := md["annotations"]
			if annotated == convert {
				t.Errorf("the v1 object has v2's metrics annotation: %v; want %v (%s)", annotated, !convert, mustJSON(out))
			}
		})
	}
}

// A write whose managers are all at its version converts nothing.
func TestSameVersionDoesNotConvert(t *testing.T) {
	g := newGauges(t)
	live, err := g.v1.Apply(nil, obj(t, `{apiVersion: example.com/v1, kind: Gauge, metadata: {name: g}, spec: {max: 5}}`),
		patch.ApplyOptions{Manager: "a", Now: t0, Convert: g.convert})
	if err != nil {
		t.Fatal(err)
	}
	live = withUID(live)
	if _, err = g.v1.Update(live, obj(t, `{apiVersion: example.com/v1, kind: Gauge, metadata: {name: g, uid: u-1}, spec: {max: 6, cpu: 1}}`),
		patch.UpdateOptions{Manager: "b", Now: t0, Convert: g.convert}); err != nil {
		t.Fatal(err)
	}
	if _, err = g.v1.Apply(live, obj(t, `{apiVersion: example.com/v1, kind: Gauge, metadata: {name: g}, spec: {cpu: 2}}`),
		patch.ApplyOptions{Manager: "c", Now: t0, Convert: g.convert}); err != nil {
		t.Fatal(err)
	}
	if g.calls != 0 {
		t.Errorf("converted %d times; want 0", g.calls)
	}
}

// randomGauge is a random Gauge spec at apiVersion.
func randomGauge(r *rand.Rand, apiVersion string) map[string]any {
	spec := map[string]any{}
	if r.Intn(2) == 0 {
		spec["max"] = json.Number(fmt.Sprint(1 + r.Intn(3)))
	}
	if r.Intn(2) == 0 {
		ref := map[string]any{"kind": "Deployment"}
		if r.Intn(2) == 0 {
			ref["name"] = []string{"web", "api"}[r.Intn(2)]
		}
		spec["ref"] = ref
	}
	var ms []any
	for _, n := range []string{"qps", "rps"} {
		if r.Intn(2) == 0 {
			ms = append(ms, map[string]any{"name": n, "value": json.Number(fmt.Sprint(r.Intn(3)))})
		}
	}
	cpu := r.Intn(3)
	if apiVersion == "example.com/v1" {
		if cpu > 0 {
			spec["cpu"] = json.Number(fmt.Sprint(cpu))
		}
	} else {
		if cpu > 0 {
			ms = append(ms, map[string]any{"name": "cpu", "value": json.Number(fmt.Sprint(cpu))})
		}
		if ms != nil {
			spec["metrics"] = ms
		}
	}
	return map[string]any{"apiVersion": apiVersion, "kind": "Gauge", "metadata": map[string]any{"name": "g"}, "spec": spec}
}

// Random writes at both versions by three managers: every step's
// managers (and an apply's object) are structured-merge-diff's own,
// run with the same conversion.
func TestManagersAtOtherVersionsMatchSMD(t *testing.T) {
	g := newGauges(t)
	r := rand.New(rand.NewSource(1))
	live, err := g.v2.Update(nil, randomGauge(r, "example.com/v2"), patch.UpdateOptions{Manager: "a", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	live = withUID(live)
	fms := map[string]*patch.FieldManager{"example.com/v1": g.v1, "example.com/v2": g.v2}
	conflicts, steps := 0, 300
	for i := range steps {
		av := []string{"example.com/v1", "example.com/v2"}[r.Intn(2)]
		manager := []string{"a", "b", "c"}[r.Intn(3)]
		apply, force := r.Intn(2) == 0, r.Intn(3) == 0
		at := g.at(t, live, av)
		next := randomGauge(r, av)
		if !apply {
			next["metadata"] = at["metadata"]
		}
		kapi, smd, err := patch.WithSMD(fms[av], at, next, apply, force, manager, g.convert)
		if err != nil {
			t.Fatal(err)
		}
		if kapi != smd {
			t.Fatalf("step %d (%s at %s, apply %v, force %v) of\n%s\nwith\n%s:\ngot\n%s\nwant (smd)\n%s", i, manager, av, apply, force, mustJSON(at), mustJSON(next), kapi, smd)
		}
		var out map[string]any
		if apply {
			out, err = fms[av].Apply(at, next, patch.ApplyOptions{Manager: manager, Force: force, Now: t0, Convert: g.convert})
		} else {
			out, err = fms[av].Update(at, next, patch.UpdateOptions{Manager: manager, Now: t0, Convert: g.convert})
		}
		var ce *patch.ConflictError
		if errors.As(err, &ce) {
			conflicts++
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		live = out
	}
	if conflicts == 0 || conflicts == steps {
		t.Errorf("%d of %d steps conflicted: the walk does not test both", conflicts, steps)
	}
}

// An update at v1 of a Gauge whose other manager is at v1 (nothing to
// convert) or at v2 (live converted twice, the new object once).
func BenchmarkUpdateOtherVersion(b *testing.B) {
	g := newGauges(b)
	for _, bc := range []struct{ name, av string }{{"same", "example.com/v1"}, {"other", "example.com/v2"}} {
		b.Run(bc.name, func(b *testing.B) {
			fm := g.v1
			if bc.av == "example.com/v2" {
				fm = g.v2
			}
			live, err := fm.Update(nil, randomGauge(rand.New(rand.NewSource(2)), bc.av), patch.UpdateOptions{Manager: "a", Now: t0})
			if err != nil {
				b.Fatal(err)
			}
			live = g.at(b, withUID(live), "example.com/v1")
			next := g.at(b, live, "example.com/v1")
			next["spec"] = map[string]any{"max": json.Number("7"), "cpu": json.Number("9")}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := g.v1.Update(live, next, patch.UpdateOptions{Manager: "b", Now: t0, Convert: g.convert}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
