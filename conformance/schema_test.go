package conformance

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	kschema "github.com/kapi-dev/kapi/schema"
)

const cronJobCRD = "../schema/testdata/crds/batch.tutorial.kubebuilder.io_cronjobs.yaml"

// EXT-7, VAL-1: kapi's CRD loader reads the kubebuilder fixture as
// k8s.io/apiextensions-apiserver's v1 types do: names, scope, versions,
// subresources, printer columns, selectable fields, and the whole
// openAPIV3Schema (kapi's JSON form equals the JSONSchemaProps' JSON).
func TestSchemaCRDMatchesApiextensions(t *testing.T) {
	b, err := os.ReadFile(cronJobCRD)
	if err != nil {
		t.Fatal(err)
	}
	var ref apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(b, &ref); err != nil {
		t.Fatalf("apiextensions decode: %v", err)
	}
	crds, err := kschema.ParseCRDs(b)
	if err != nil || len(crds) != 1 {
		t.Fatalf("ParseCRDs: got %d CRDs, %v; want 1", len(crds), err)
	}
	got, n := crds[0], ref.Spec.Names
	wantNames := kschema.Names{Plural: n.Plural, Singular: n.Singular, Kind: n.Kind, ListKind: n.ListKind, ShortNames: n.ShortNames, Categories: n.Categories}
	if got.Name != ref.Name || got.Group != ref.Spec.Group || !reflect.DeepEqual(got.Names, wantNames) ||
		got.Namespaced != (ref.Spec.Scope == apiextensionsv1.NamespaceScoped) {
		t.Errorf("got %s %s %+v namespaced=%v; want %s %s %+v %s", got.Name, got.Group, got.Names, got.Namespaced, ref.Name, ref.Spec.Group, wantNames, ref.Spec.Scope)
	}
	if len(got.Versions) != len(ref.Spec.Versions) {
		t.Fatalf("got %d versions; want %d", len(got.Versions), len(ref.Spec.Versions))
	}
	for i, rv := range ref.Spec.Versions {
		v := got.Versions[i]
		t.Run(rv.Name, func(t *testing.T) {
			if v.Name != rv.Name || v.Served != rv.Served || v.Storage != rv.Storage || v.Deprecated != rv.Deprecated {
				t.Errorf("got %s served=%v storage=%v deprecated=%v; want %s %v %v %v", v.Name, v.Served, v.Storage, v.Deprecated, rv.Name, rv.Served, rv.Storage, rv.Deprecated)
			}
			var status bool
			var scale *kschema.Scale
			if sr := rv.Subresources; sr != nil {
				status = sr.Status != nil
				if sc := sr.Scale; sc != nil {
					scale = &kschema.Scale{SpecReplicasPath: sc.SpecReplicasPath, StatusReplicasPath: sc.StatusReplicasPath}
					if sc.LabelSelectorPath != nil {
						scale.LabelSelectorPath = *sc.LabelSelectorPath
					}
				}
			}
			if v.Status != status || !reflect.DeepEqual(v.Scale, scale) {
				t.Errorf("got status=%v scale=%+v; want %v %+v", v.Status, v.Scale, status, scale)
			}
			var cols []kschema.Column
			for _, c := range rv.AdditionalPrinterColumns {
				cols = append(cols, kschema.Column{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority, JSONPath: c.JSONPath})
			}
			if !reflect.DeepEqual(v.Columns, cols) {
				t.Errorf("got columns %+v; want %+v", v.Columns, cols)
			}
			var fields []string
			for _, f := range rv.SelectableFields {
				fields = append(fields, strings.TrimPrefix(f.JSONPath, "."))
			}
			if !reflect.DeepEqual(v.SelectableFields, fields) {
				t.Errorf("got selectable fields %v; want %v", v.SelectableFields, fields)
			}
			refJSON, err := json.Marshal(rv.Schema.OpenAPIV3Schema)
			if err != nil {
				t.Fatal(err)
			}
			gotJSON, err := json.Marshal(v.Schema.JSON())
			if err != nil {
				t.Fatal(err)
			}
			if g, w := generic(t, gotJSON), generic(t, refJSON); !reflect.DeepEqual(g, w) {
				t.Errorf("schema JSON differs:\ngot  %s\nwant %s", gotJSON, refJSON)
			}
		})
	}
}

func generic(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// PATCH-3: schema.For on k8s.io/api's Pod carries the patch strategies
// and merge keys strategic merge patch reads from the Go struct tags.
func TestSchemaForPodPatchMeta(t *testing.T) {
	pod, err := kschema.For(reflect.TypeOf(corev1.Pod{}))
	if err != nil {
		t.Fatalf("For(Pod): %v", err)
	}
	ref, err := strategicpatch.NewPatchMetaFromStruct(corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path          string // dotted; "[]" steps into a list's items
		strategy, key string
	}{
		{path: "spec.containers", strategy: "merge", key: "name"},
		{path: "spec.containers.[].ports", strategy: "merge", key: "containerPort"},
		{path: "metadata.ownerReferences", strategy: "merge", key: "uid"},
		{path: "spec.volumes", strategy: "merge,retainKeys", key: "name"},
		{path: "metadata.finalizers", strategy: "merge"},
		{path: "spec.containers.[].env", strategy: "merge", key: "name"},
		{path: "status.conditions", strategy: "merge", key: "type"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			s, lookup := pod, strategicpatch.LookupPatchMeta(ref)
			var meta strategicpatch.PatchMeta
			parts := strings.Split(tt.path, ".")
			for i, p := range parts {
				if p == "[]" {
					s = s.Items
					continue
				}
				s = s.Properties[p]
				var err error
				if i+1 < len(parts) && parts[i+1] == "[]" {
					lookup, meta, err = lookup.LookupPatchMetadataForSlice(p)
				} else {
					lookup, meta, err = lookup.LookupPatchMetadataForStruct(p)
				}
				if err != nil || s == nil {
					t.Fatalf("%s: lookup error %v, schema %v", p, err, s)
				}
			}
			refStrategy := strings.Join(meta.GetPatchStrategies(), ",")
			if refStrategy != tt.strategy || meta.GetPatchMergeKey() != tt.key {
				t.Errorf("strategicpatch reports %q/%q; the table says %q/%q", refStrategy, meta.GetPatchMergeKey(), tt.strategy, tt.key)
			}
			if s.PatchStrategy != tt.strategy || s.PatchMergeKey != tt.key {
				t.Errorf("got %q/%q; want %q/%q", s.PatchStrategy, s.PatchMergeKey, tt.strategy, tt.key)
			}
		})
	}

	// Every field For finds, at every depth, agrees with strategicpatch.
	var fields int
	var walk func(s *kschema.Schema, lookup strategicpatch.LookupPatchMeta, path string)
	walk = func(s *kschema.Schema, lookup strategicpatch.LookupPatchMeta, path string) {
		for name, p := range s.Properties {
			fields++
			sub, meta, err := lookup.LookupPatchMetadataForStruct(name)
			if err != nil {
				t.Errorf("%s.%s: strategicpatch: %v", path, name, err)
				continue
			}
			if got, want := p.PatchStrategy+"/"+p.PatchMergeKey, strings.Join(meta.GetPatchStrategies(), ",")+"/"+meta.GetPatchMergeKey(); got != want {
				t.Errorf("%s.%s: got %s; want %s", path, name, got, want)
			}
			switch {
			case p.Properties != nil:
				walk(p, sub, path+"."+name)
			case p.Items != nil && p.Items.Properties != nil:
				if sub, _, err = lookup.LookupPatchMetadataForSlice(name); err == nil {
					walk(p.Items, sub, path+"."+name+"[]")
				}
			}
		}
	}
	walk(pod, ref, "pod")
	if fields < 500 {
		t.Errorf("walked %d fields of Pod; want hundreds", fields)
	}
}
