package patch_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/patch"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func configMaps(t *testing.T) *patch.FieldManager {
	t.Helper()
	fm, err := patch.NewFieldManager(nil, "v1", patch.FieldManagerOptions{Kind: "ConfigMap"})
	if err != nil {
		t.Fatal(err)
	}
	return fm
}

func entries(o map[string]any) []any {
	md, _ := o["metadata"].(map[string]any)
	mf, _ := md["managedFields"].([]any)
	return mf
}

func TestApplyConflictError(t *testing.T) {
	fm := configMaps(t)
	live, err := fm.Update(nil, obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: x, b: y}}`),
		patch.UpdateOptions{Manager: "kubectl-client-side-apply", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	live = withUID(live)
	tests := []struct {
		name, config string
		wantMsg      string
		want         []patch.Conflict
	}{{
		name:    "one",
		config:  `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: z}}`,
		wantMsg: `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a`,
		want:    []patch.Conflict{{Manager: "kubectl-client-side-apply", Operation: "Update", APIVersion: "v1", Field: ".data.a"}},
	}, {
		name:    "two",
		config:  `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: z, b: z}}`,
		wantMsg: "Apply failed with 2 conflicts: conflicts with \"kubectl-client-side-apply\" using v1:\n- .data.a\n- .data.b",
		want: []patch.Conflict{
			{Manager: "kubectl-client-side-apply", Operation: "Update", APIVersion: "v1", Field: ".data.a"},
			{Manager: "kubectl-client-side-apply", Operation: "Update", APIVersion: "v1", Field: ".data.b"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fm.Apply(live, obj(t, tt.config), patch.ApplyOptions{Manager: "mgr", Now: t0})
			var ce *patch.ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, patch.ErrConflict) {
				t.Fatalf("got %v; want a *ConflictError", err)
			}
			if got := err.Error(); got != tt.wantMsg {
				t.Errorf("got message %q; want %q", got, tt.wantMsg)
			}
			if !reflect.DeepEqual(ce.Conflicts, tt.want) {
				t.Errorf("got conflicts %+v; want %+v", ce.Conflicts, tt.want)
			}
			if got, want := ce.Conflicts[0].Message(), `conflict with "kubectl-client-side-apply" using v1`; got != want {
				t.Errorf("got cause message %q; want %q", got, want)
			}
		})
	}
}

func TestApplyBadConfig(t *testing.T) {
	fm := configMaps(t)
	tests := []struct{ name, config, msg string }{
		{"managedFields", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, managedFields: [{manager: x}]}}`, "metadata.managedFields must be nil"},
		{"empty managedFields", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, managedFields: []}}`, "metadata.managedFields must be nil"},
		{"apiVersion", `{apiVersion: v2, kind: ConfigMap, metadata: {name: c}}`, "invalid object type: /v2, Kind=ConfigMap"},
		{"kind", `{apiVersion: v1, kind: Secret, metadata: {name: c}}`, "invalid object type: /v1, Kind=Secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fm.Apply(nil, obj(t, tt.config), patch.ApplyOptions{Manager: "m"})
			var pe *patch.Error
			if !errors.As(err, &pe) || !errors.Is(err, patch.ErrBadPatch) || pe.Msg != tt.msg {
				t.Errorf("got %v; want ErrBadPatch %q", err, tt.msg)
			}
		})
	}
	// managedFields: null is no managedFields.
	if _, err := fm.Apply(nil, obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, managedFields: null}}`), patch.ApplyOptions{Manager: "m"}); err != nil {
		t.Errorf("managedFields null: got %v; want no error", err)
	}
}

func TestApplyNoopKeepsTime(t *testing.T) {
	fm := configMaps(t)
	cfg := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: x}}`)
	first, err := fm.Apply(nil, cfg, patch.ApplyOptions{Manager: "a", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	second, err := fm.Apply(withUID(first), cfg, patch.ApplyOptions{Manager: "a", Now: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	got := entries(second)[0].(map[string]any)["time"]
	if want := "2026-01-02T03:04:05Z"; got != want {
		t.Errorf("got time %v; want %v (unchanged)", got, want)
	}
	third, err := fm.Apply(withUID(second), obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: y}}`), patch.ApplyOptions{Manager: "a", Now: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := entries(third)[0].(map[string]any)["time"], "2026-01-02T04:04:05Z"; got != want {
		t.Errorf("got time %v; want %v", got, want)
	}
}

func TestManagedFieldsOrder(t *testing.T) {
	fm := configMaps(t)
	var o map[string]any
	steps := []struct {
		op, manager string
		at          time.Duration
		data        string
	}{
		{"update", "z-creator", 0, `{a: "1"}`},
		{"apply", "b", 2 * time.Second, `{b: "1"}`},
		{"apply", "a", 2 * time.Second, `{c: "1"}`},
		{"update", "y", time.Second, `{a: "1", b: "1", c: "1", d: "1"}`},
	}
	for _, st := range steps {
		in := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: `+st.data+`}`)
		var err error
		if st.op == "apply" {
			o, err = fm.Apply(o, in, patch.ApplyOptions{Manager: st.manager, Now: t0.Add(st.at)})
		} else {
			if o != nil {
				in["metadata"].(map[string]any)["uid"] = "u-1"
			}
			o, err = fm.Update(o, in, patch.UpdateOptions{Manager: st.manager, Now: t0.Add(st.at)})
		}
		if err != nil {
			t.Fatal(err)
		}
		o = withUID(o)
	}
	var got []string
	for _, e := range entries(o) {
		m := e.(map[string]any)
		got = append(got, m["operation"].(string)+" "+m["manager"].(string)+" "+m["time"].(string))
	}
	want := []string{ // Apply first, then by time, then by manager
		"Apply a 2026-01-02T03:04:07Z",
		"Apply b 2026-01-02T03:04:07Z",
		"Update z-creator 2026-01-02T03:04:05Z",
		"Update y 2026-01-02T03:04:06Z",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
}

func TestApplyNumbersAndInputs(t *testing.T) {
	fm := configMaps(t)
	cfg := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
		"n": json.Number("1.0"), "i": int64(3), "f": 2.5, "big": json.Number("12345678901234567890")}
	before, _ := json.Marshal(cfg)
	out, err := fm.Apply(nil, cfg, patch.ApplyOptions{Manager: "a", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(cfg); string(after) != string(before) {
		t.Errorf("Apply modified its config: %s; was %s", after, before)
	}
	for k, want := range map[string]json.Number{"n": "1", "i": "3", "f": "2.5", "big": "12345678901234567000"} {
		if got := out[k]; got != want {
			t.Errorf("%s: got %#v; want json.Number %q", k, got, want)
		}
	}
}

func TestUpdateKeepsLiveManagedFieldsOnError(t *testing.T) {
	fm, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{Kind: "Widget"})
	if err != nil {
		t.Fatal(err)
	}
	live, err := fm.Apply(nil, obj(t, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {color: red}}`), patch.ApplyOptions{Manager: "a", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	live = withUID(live)
	out, err := fm.Update(live, obj(t, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, uid: u-1}, spec: {nope: 1}}`), patch.UpdateOptions{Manager: "b"})
	if !errors.Is(err, patch.ErrSchema) {
		t.Fatalf("got %v; want ErrSchema", err)
	}
	if !reflect.DeepEqual(entries(out), entries(live)) {
		t.Errorf("got managedFields %v; want live's %v", entries(out), entries(live))
	}
}
