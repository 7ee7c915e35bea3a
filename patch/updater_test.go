package patch_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/patch"
)

// step runs one corpus step, with prune's shortcut on or off.
func step(fm *patch.FieldManager, live map[string]any, st corpusStep, now time.Time, shortcut bool) (map[string]any, string) {
	defer patch.SetPruneShortcut(patch.SetPruneShortcut(shortcut))
	var got map[string]any
	var err error
	if st.Op == "apply" {
		got, err = fm.Apply(live, st.Object, patch.ApplyOptions{Manager: st.Manager, Force: st.Force, Subresource: st.Subresource, Now: now})
	} else {
		got, err = fm.Update(live, st.Object, patch.UpdateOptions{Manager: st.Manager, Subresource: st.Subresource, Now: now})
	}
	if err != nil {
		return nil, err.Error()
	}
	return got, ""
}

// sameBothWays runs steps from live with the shortcut on and off and
// fails on any difference in objects, managedFields or errors.
func sameBothWays(t *testing.T, fm *patch.FieldManager, live map[string]any, steps []corpusStep) {
	t.Helper()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, st := range steps {
		now := base.Add(time.Duration(i) * time.Second)
		on, onErr := step(fm, live, st, now, true)
		off, offErr := step(fm, live, st, now, false)
		if onErr != offErr {
			t.Fatalf("step %d: got error %q with the shortcut; want %q", i, onErr, offErr)
		}
		if !reflect.DeepEqual(on, off) {
			t.Fatalf("step %d: got\n%s\nwith the shortcut; want\n%s", i, mustJSON(on), mustJSON(off))
		}
		if on != nil {
			live = withUID(on)
		}
	}
}

func TestPruneShortcutCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/apply/*.yaml")
	for _, f := range files {
		if strings.HasSuffix(f, "-schema.yaml") {
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var c corpusCase
			decodeJSONForm(t, b, &c)
			if c.APIVersion == "" {
				c.APIVersion, c.Kind = "example.com/v1", "Widget"
			}
			s := widgetSchema(t)
			if c.Schema != "widget" {
				s = nil
			}
			fm, err := patch.NewFieldManager(s, c.APIVersion, patch.FieldManagerOptions{Kind: c.Kind, ResetFields: c.Reset})
			if err != nil {
				t.Fatal(err)
			}
			sameBothWays(t, fm, c.Live, c.Steps)
		})
	}
}

// randomWidget is a widget configuration with a random part of every
// field: list-map items, map entries, set items, scalars.
func randomWidget(r *rand.Rand) map[string]any {
	spec := map[string]any{}
	if r.Intn(2) == 0 {
		spec["color"] = []string{"red", "blue"}[r.Intn(2)]
	}
	if r.Intn(2) == 0 {
		spec["replicas"] = json.Number(fmt.Sprint(r.Intn(3)))
	}
	var ports, tags []any
	settings := map[string]any{}
	for i := 0; i < 4; i++ {
		if r.Intn(2) == 0 {
			p := map[string]any{"port": json.Number(fmt.Sprint(80 + i)), "protocol": "TCP"}
			if r.Intn(2) == 0 {
				p["name"] = fmt.Sprintf("p%d-%d", i, r.Intn(2))
			}
			ports = append(ports, p)
		}
		if r.Intn(2) == 0 {
			settings[fmt.Sprintf("s%d", i)] = fmt.Sprintf("v%d", r.Intn(2))
		}
		if r.Intn(2) == 0 {
			tags = append(tags, fmt.Sprintf("t%d", i))
		}
	}
	for k, v := range map[string]any{"ports": ports, "tags": tags} {
		if v.([]any) != nil {
			spec[k] = v
		}
	}
	if len(settings) > 0 || r.Intn(4) == 0 {
		spec["settings"] = settings
	}
	if r.Intn(3) == 0 {
		spec["selector"] = map[string]any{"app": fmt.Sprint(r.Intn(2)), "tier": "web"}
	}
	if r.Intn(3) == 0 { // preserve-unknown-fields: deduced maps and lists
		spec["extra"] = map[string]any{"a": map[string]any{"b": fmt.Sprint(r.Intn(2)), "c": "x"}, "l": []any{"x", fmt.Sprint(r.Intn(2))}}
	}
	if r.Intn(4) == 0 { // int-or-string: untyped
		spec["size"] = []any{json.Number("3"), "3"}[r.Intn(2)]
	}
	md := map[string]any{"name": "w"}
	if r.Intn(2) == 0 {
		md["labels"] = map[string]any{fmt.Sprintf("l%d", r.Intn(2)): "x"}
	}
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": md, "spec": spec}
}

// TestPruneShortcutRandom applies and updates random widgets by three
// managers, forced or not, and checks every step gives the same result
// with prune's shortcut as without.
func TestPruneShortcutRandom(t *testing.T) {
	fm, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{Kind: "Widget"})
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(0); seed < 100; seed++ {
		r := rand.New(rand.NewSource(seed))
		var steps []corpusStep
		for i := 0; i < 12; i++ {
			st := corpusStep{Op: "apply", Manager: []string{"a", "b", "kubectl"}[r.Intn(3)], Force: r.Intn(3) == 0, Object: randomWidget(r)}
			if r.Intn(4) == 0 {
				st.Op, st.Manager = "update", "editor"
			}
			steps = append(steps, st)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { sameBothWays(t, fm, nil, steps) })
	}
}

// TestUpdateValidatesChange checks that an update is refused for a bad
// value in what it changes, though only that part is validated again.
func TestUpdateValidatesChange(t *testing.T) {
	fm, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{Kind: "Widget"})
	if err != nil {
		t.Fatal(err)
	}
	live, err := fm.Apply(nil, benchWidget(t, 1<<10), patch.ApplyOptions{Manager: "a"})
	if err != nil {
		t.Fatal(err)
	}
	live = withUID(live)
	for _, tc := range []struct {
		name string
		edit func(spec map[string]any)
		want string // "" for no error
	}{
		{"valid", func(spec map[string]any) { spec["replicas"] = json.Number("5") }, ""},
		{"scalar", func(spec map[string]any) { spec["replicas"] = "five" }, ".spec.replicas"},
		{"nested", func(spec map[string]any) { spec["ports"].([]any)[1].(map[string]any)["name"] = json.Number("1") }, ".spec.ports"},
		{"new map", func(spec map[string]any) { spec["selector"] = map[string]any{"a": []any{"x"}} }, ".spec.selector.a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := withUID(benchWidget(t, 1<<10))
			obj["metadata"].(map[string]any)["managedFields"] = entries(live)
			tc.edit(obj["spec"].(map[string]any))
			got, err := fm.Update(live, obj, patch.UpdateOptions{Manager: "editor"})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("got error %v; want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "failed to convert new object") || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got error %v; want one about the new object at %s", err, tc.want)
			case tc.want != "" && !reflect.DeepEqual(entries(got), entries(live)):
				t.Fatalf("got managedFields %s; want live's", mustJSON(entries(got)))
			}
		})
	}
}

// TestUpdateLeavesObjectAlone checks that Update's result has its own
// metadata: a create's managedFields do not show up in the caller's
// object.
func TestUpdateLeavesObjectAlone(t *testing.T) {
	fm, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{Kind: "Widget"})
	if err != nil {
		t.Fatal(err)
	}
	obj := benchWidget(t, 1<<10)
	got, err := fm.Update(nil, obj, patch.UpdateOptions{Manager: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries(got)) != 1 {
		t.Fatalf("got managedFields %s; want the creator's entry", mustJSON(entries(got)))
	}
	if _, has := obj["metadata"].(map[string]any)["managedFields"]; has {
		t.Fatalf("got managedFields in the caller's object; want none")
	}
}

// TestFieldSetMatchesSMD checks kapi's field set walk against smd's
// ToFieldSet on random widgets and on every corpus object, with the
// widget schema and without a schema.
func TestFieldSetMatchesSMD(t *testing.T) {
	var objs []map[string]any
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		o := randomWidget(r)
		if i%5 == 0 {
			o["spec"].(map[string]any)["size"] = []any{json.Number("3"), "3"}[r.Intn(2)]
			o["spec"].(map[string]any)["extra"] = map[string]any{"a": map[string]any{"b": []any{"c"}}, "n": nil}
			o["status"] = map[string]any{"readyReplicas": json.Number("1"), "conditions": []any{map[string]any{"type": "Ready"}}}
		}
		objs = append(objs, o)
	}
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
		for _, st := range c.Steps {
			if st.Object != nil {
				objs = append(objs, st.Object)
			}
		}
	}
	widget, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	none, err := patch.NewFieldManager(nil, "example.com/v1", patch.FieldManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i, o := range objs {
		for _, fm := range []*patch.FieldManager{widget, none} {
			fast, smd, err := patch.FieldSets(fm, o)
			if err != nil {
				continue // not an object of this schema
			}
			checked++
			if fast != smd {
				t.Fatalf("object %d %s: got field set\n%s\nwant\n%s", i, mustJSON(o), fast, smd)
			}
		}
	}
	if checked < len(objs) {
		t.Fatalf("got %d objects checked; want at least %d", checked, len(objs))
	}
}
