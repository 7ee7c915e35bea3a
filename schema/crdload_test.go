package schema

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadCRDsFixture(t *testing.T) {
	crds, err := LoadCRDs("testdata/crds")
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 1 {
		t.Fatalf("got %d CRDs; want 1 (kustomization.yaml skipped)", len(crds))
	}
	c := crds[0]
	wantNames := Names{Plural: "cronjobs", Singular: "cronjob", Kind: "CronJob", ListKind: "CronJobList", ShortNames: []string{"cj"}, Categories: []string{"all"}}
	if c.Name != "cronjobs.batch.tutorial.kubebuilder.io" || c.Group != "batch.tutorial.kubebuilder.io" || !c.Namespaced || !reflect.DeepEqual(c.Names, wantNames) {
		t.Errorf("got %s %s %v %+v; want the CronJob CRD", c.Name, c.Group, c.Namespaced, c.Names)
	}
	if len(c.Versions) != 2 {
		t.Fatalf("got %d versions; want 2", len(c.Versions))
	}
	v1, beta := c.Versions[0], c.Versions[1]
	if v1.Name != "v1" || !v1.Served || !v1.Storage || v1.Deprecated || !v1.Status {
		t.Errorf("got v1 %+v; want served storage with status", v1)
	}
	if want := (&Scale{".spec.replicas", ".status.replicas", ".status.selector"}); !reflect.DeepEqual(v1.Scale, want) {
		t.Errorf("got scale %+v; want %+v", v1.Scale, want)
	}
	if len(v1.Columns) != 5 || v1.Columns[3] != (Column{Name: "Replicas", Type: "integer", Format: "int32", Description: "Replicas of each job", Priority: 1, JSONPath: ".status.replicas"}) {
		t.Errorf("got columns %+v", v1.Columns)
	}
	if !reflect.DeepEqual(v1.SelectableFields, []string{"spec.schedule"}) {
		t.Errorf("got selectable fields %v; want [spec.schedule]", v1.SelectableFields)
	}
	if beta.Name != "v1beta1" || beta.Storage || !beta.Deprecated || beta.Status || beta.Scale != nil || !beta.Schema.PreserveUnknownFields {
		t.Errorf("got v1beta1 %+v", beta)
	}
	s := v1.Schema
	checks := []struct {
		path string
		ok   func(*Schema) bool
	}{
		{"spec.jobTemplate.spec.template.spec.containers", func(s *Schema) bool { return s.ListType == "map" && s.ListMapKeys[0] == "name" }},
		{"spec.jobTemplate.spec.template.spec.containers.[].ports", func(s *Schema) bool {
			return reflect.DeepEqual(s.ListMapKeys, []string{"containerPort", "protocol"}) && s.Items.Properties["protocol"].Default == "TCP"
		}},
		{"spec.jobTemplate.spec.template.spec.containers.[].resources.limits", func(s *Schema) bool {
			return s.AdditionalProperties.IntOrString && len(s.AdditionalProperties.AnyOf) == 2
		}},
		{"spec.jobTemplate.metadata", func(s *Schema) bool { return s.PreserveUnknownFields }},
		{"spec.concurrencyPolicy", func(s *Schema) bool { return len(s.Enum) == 3 && s.Default == "Allow" }},
		{"spec", func(s *Schema) bool {
			return len(s.Validations) == 1 && reflect.DeepEqual(s.Required, []string{"jobTemplate", "schedule"})
		}},
		{"status.active", func(s *Schema) bool {
			return s.ListType == "atomic" && s.Items.MapType == "atomic" && *s.MaxItems == 10
		}},
		{"status.conditions", func(s *Schema) bool { return s.ListType == "map" && s.Items.Properties["type"].MaxLength != nil }},
		{"status.lastScheduleTime", func(s *Schema) bool { return s.Format == "date-time" }},
	}
	for _, c := range checks {
		if got := at(s, c.path); got == nil || !c.ok(got) {
			t.Errorf("%s: got %v", c.path, got.JSON())
		}
	}
	roundTrip(t, s)
}

const goodCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, kind: Widget}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`

func TestParseCRDs(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		names []string
	}{
		{"defaults", goodCRD, []string{"widgets.example.com"}},
		{"multi-document with empty and other kinds", "---\n" + goodCRD + "---\n\n--- \n# only a comment\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n" +
			strings.ReplaceAll(goodCRD, "widget", "gadget"), []string{"widgets.example.com", "gadgets.example.com"}},
		{"json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets","kind":"Widget"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`,
			[]string{"widgets.example.com"}},
		{"json list", `{"apiVersion":"v1","kind":"List","items":[{"kind":"ConfigMap"}]}`, nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crds, err := ParseCRDs([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range crds {
				names = append(names, c.Name)
			}
			if !reflect.DeepEqual(names, tt.names) {
				t.Errorf("got %v; want %v", names, tt.names)
			}
		})
	}
	crds, _ := ParseCRDs([]byte(goodCRD))
	if n := crds[0].Names; n.Singular != "widget" || n.ListKind != "WidgetList" || crds[0].Namespaced {
		t.Errorf("got %+v namespaced %v; want singular widget, listKind WidgetList, cluster scope", n, crds[0].Namespaced)
	}
}

func TestParseCRDsErrors(t *testing.T) {
	r := func(oldnew ...string) string { return strings.NewReplacer(oldnew...).Replace(goodCRD) }
	tests := []struct {
		name, in, want string
	}{
		{"v1beta1", r("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"), `widgets.example.com: apiVersion: "apiextensions.k8s.io/v1beta1" is not supported`},
		{"no group", r("group: example.com", "group: ''"), "widgets.example.com: spec.group: required"},
		{"group without dot", r("group: example.com", "group: example", "widgets.example.com", "widgets.example"), `spec.group: "example" should be a domain`},
		{"no plural", r("plural: widgets, ", ""), "spec.names.plural: required"},
		{"plural uppercase", r("plural: widgets", "plural: Widgets", "name: widgets", "name: Widgets"), `spec.names.plural: "Widgets" must be a lowercase DNS label`},
		{"no kind", r("kind: Widget", "kind: ''"), "spec.names.kind: required"},
		{"name mismatch", r("name: widgets.example.com", "name: w.example.com"), `w.example.com: metadata.name: "w.example.com" must be spec.names.plural+"."+spec.group`},
		{"no name", r("metadata: {name: widgets.example.com}", "metadata: {}"), `document 1: metadata.name`},
		{"scope", r("scope: Cluster", "scope: Global"), `spec.scope: "Global" is not Namespaced or Cluster`},
		{"no versions", r("versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n", "versions: []\n"), "spec.versions: must have at least one version"},
		{"no storage", r("storage: true", "storage: false"), "spec.versions: must have exactly one version marked as storage version, not 0"},
		{"not served", r("served: true", "served: false"), "spec.versions: must have at least one served version"},
		{"no schema", r("schema: {openAPIV3Schema: {type: object}}", "x: 1"), "spec.versions[0].schema.openAPIV3Schema: required"},
		{"bad schema", r("openAPIV3Schema: {type: object}", "openAPIV3Schema: {type: object, properties: {a: {type: foo}}}"),
			`widgets.example.com: spec.versions[0].schema.openAPIV3Schema.properties.a: unknown type "foo"`},
		{"scale path", r("storage: true,", "storage: true, subresources: {scale: {specReplicasPath: .replicas, statusReplicasPath: .status.r}},"),
			`spec.versions[0].subresources.scale.specReplicasPath: ".replicas" must be a JSON path under .spec`},
		{"column type", r("storage: true,", "storage: true, additionalPrinterColumns: [{name: A, type: time, jsonPath: .a}],"),
			`spec.versions[0].additionalPrinterColumns[0].type: "time" is not one of`},
		{"selectable field", r("storage: true,", "storage: true, selectableFields: [{}],"), "spec.versions[0].selectableFields[0].jsonPath: required"},
		{"preserveUnknownFields", r("scope: Cluster", "scope: Cluster\n  preserveUnknownFields: true"), "spec.preserveUnknownFields: must be false"},
		{"wrong field type", r("served: true", "served: yes please"), "widgets.example.com: json: cannot unmarshal string"},
		{"duplicate", goodCRD + "---\n" + goodCRD, "schema: widgets.example.com: defined twice"},
		{"not an object", "- a\n", "schema: document 1: not an object but a list"},
		{"bad yaml", goodCRD + "---\na: [\n", "schema: document 2: yaml: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCRDs([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want %q", err, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("got errors.Is(err, ErrInvalid) false for %v", err)
			}
		})
	}
}

func TestLoadCRDs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gadget := strings.ReplaceAll(goodCRD, "widget", "gadget")
	write("b.yaml", goodCRD)
	write("a.yml", gadget)
	write("notes.txt", "not yaml: [")
	write("sub/c.yaml", "not yaml: [")
	write("kustomization.yaml", "resources: [a.yml, b.yaml]\n")

	crds, err := LoadCRDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 2 || crds[0].Name != "gadgets.example.com" || crds[1].Name != "widgets.example.com" {
		t.Errorf("got %v; want gadgets then widgets (file name order)", crds)
	}

	bad := write("bad/z.json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"x.example.com"}}`)
	_, err = LoadCRDs(bad)
	var e *Error
	if !errors.As(err, &e) || e.File != bad || e.CRD != "x.example.com" || !strings.HasPrefix(err.Error(), "schema: "+bad+": x.example.com: ") {
		t.Errorf("got %v; want an *Error naming %s and x.example.com", err, bad)
	}
	if _, err := LoadCRDs(dir, filepath.Join(dir, "b.yaml")); err == nil || !strings.Contains(err.Error(), "defined twice (first in") {
		t.Errorf("got %v; want widgets defined twice", err)
	}
	if _, err := LoadCRDs(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v; want not exist", err)
	}
}

// ParseCRD reads one JSON CRD as ParseCRDs reads it: the same CRD, or
// the same error.
func TestParseCRDAgrees(t *testing.T) {
	r := func(oldnew ...string) string { return strings.NewReplacer(oldnew...).Replace(goodCRD) }
	tests := []struct{ name, yaml string }{
		{"good", goodCRD},
		{"namespaced with columns and scale", r("scope: Cluster", "scope: Namespaced", "storage: true,", "storage: true, subresources: {status: {}, scale: {specReplicasPath: .spec.r, statusReplicasPath: .status.r}}, additionalPrinterColumns: [{name: A, type: string, jsonPath: .spec.a}],")},
		{"v1beta1", r("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")},
		{"no plural", r("plural: widgets, ", "")},
		{"name mismatch", r("name: widgets.example.com", "name: w.example.com")},
		{"no name", r("metadata: {name: widgets.example.com}", "metadata: {}")},
		{"no storage", r("storage: true", "storage: false")},
		{"bad schema", r("openAPIV3Schema: {type: object}", "openAPIV3Schema: {type: object, properties: {a: {type: foo}}}")},
		{"wrong field type", r("served: true", "served: yes please")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := decode([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			j, _ := json.Marshal(v)
			want, wantErr := ParseCRDs(j)
			got, err := ParseCRD(j)
			switch {
			case wantErr != nil:
				if err == nil || err.Error() != wantErr.Error() || !errors.Is(err, ErrInvalid) {
					t.Errorf("got error %v; want %v", err, wantErr)
				}
			case err != nil:
				t.Errorf("got error %v; want %+v", err, want[0])
			case !reflect.DeepEqual(got, want[0]):
				t.Errorf("got %+v; want %+v", got, want[0])
			}
		})
	}
	if _, err := ParseCRD([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)); err == nil || !strings.Contains(err.Error(), `"ConfigMap" is not CustomResourceDefinition`) {
		t.Errorf("a ConfigMap: got %v; want an error naming its kind", err)
	}
}
