package patch_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
	"sigs.k8s.io/yaml"
)

// corpusCase is one file of testdata/apply: a sequence of applies and
// updates from a starting object, with the object and managedFields
// expected after each step.
type corpusCase struct {
	Schema     string              `json:"schema"` // "widget" or "none"
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Reset      map[string][]string `json:"resetFields"`
	Live       map[string]any      `json:"live"`
	Steps      []corpusStep        `json:"steps"`
}

type corpusStep struct {
	Op          string         `json:"op"` // apply, update
	Manager     string         `json:"manager"`
	Force       bool           `json:"force"`
	Subresource string         `json:"subresource"`
	Object      map[string]any `json:"object"`
	Error       string         `json:"error"` // substring of the expected error
	Want        map[string]any `json:"want"`  // object without managedFields
	// ManagedFields are the expected entries, in order, without times.
	ManagedFields []any `json:"managedFields"`
	// NoManagedFields expects the object to have none.
	NoManagedFields bool `json:"noManagedFields"`
}

// decodeJSONForm reads YAML or JSON into the JSON form kapi holds objects
// in (numbers json.Number).
func decodeJSONForm(t testing.TB, b []byte, into any) {
	t.Helper()
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	if err := d.Decode(into); err != nil {
		t.Fatal(err)
	}
}

func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	decodeJSONForm(t, []byte(s), &m)
	return m
}

func widgetSchema(t testing.TB) *schema.Schema {
	t.Helper()
	b, err := os.ReadFile("testdata/apply/widget-schema.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// canonical makes a JSON-form value comparable: through JSON, numbers as
// json.Number.
func canonical(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// splitManaged returns obj without managedFields, and its entries
// without times.
func splitManaged(t testing.TB, o map[string]any) (map[string]any, []any) {
	t.Helper()
	c := canonical(t, o).(map[string]any)
	md, _ := c["metadata"].(map[string]any)
	mf, _ := md["managedFields"].([]any)
	delete(md, "managedFields")
	delete(md, "uid")
	if len(md) == 0 {
		delete(c, "metadata")
	}
	for _, e := range mf {
		delete(e.(map[string]any), "time")
	}
	return c, mf
}

func TestApplyCorpus(t *testing.T) {
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
			runCorpus(t, c)
		})
	}
}

func runCorpus(t *testing.T, c corpusCase) {
	var s *schema.Schema
	if c.Schema == "widget" {
		s = widgetSchema(t)
	}
	if c.APIVersion == "" {
		c.APIVersion, c.Kind = "example.com/v1", "Widget"
	}
	fm, err := patch.NewFieldManager(s, c.APIVersion, patch.FieldManagerOptions{Kind: c.Kind, ResetFields: c.Reset})
	if err != nil {
		t.Fatal(err)
	}
	live := c.Live
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, st := range c.Steps {
		now := base.Add(time.Duration(i) * time.Second)
		var got map[string]any
		switch st.Op {
		case "apply":
			got, err = fm.Apply(live, st.Object, patch.ApplyOptions{Manager: st.Manager, Force: st.Force, Subresource: st.Subresource, Now: now})
		case "update":
			got, err = fm.Update(live, st.Object, patch.UpdateOptions{Manager: st.Manager, Subresource: st.Subresource, Now: now})
		default:
			t.Fatalf("step %d: unknown op %q", i, st.Op)
		}
		if st.Error != "" {
			if err == nil || !strings.Contains(err.Error(), st.Error) {
				t.Fatalf("step %d: got error %v; want one containing %q", i, err, st.Error)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		gotObj, gotMF := splitManaged(t, got)
		if st.Want != nil {
			if want := canonical(t, st.Want); !reflect.DeepEqual(gotObj, want) {
				t.Errorf("step %d: got object\n%s\nwant\n%s", i, mustJSON(gotObj), mustJSON(want))
			}
		}
		if st.ManagedFields != nil || st.NoManagedFields {
			want, _ := canonical(t, st.ManagedFields).([]any)
			if !reflect.DeepEqual(gotMF, want) && (len(gotMF) != 0 || len(want) != 0) {
				t.Errorf("step %d: got managedFields\n%s\nwant\n%s", i, mustJSON(gotMF), mustJSON(want))
			}
		}
		live = withUID(got)
	}
}

// withUID marks o as stored, as the registry does on create.
func withUID(o map[string]any) map[string]any {
	md, _ := o["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		o["metadata"] = md
	}
	if _, ok := md["uid"]; !ok {
		md["uid"] = "u-1"
	}
	return o
}
