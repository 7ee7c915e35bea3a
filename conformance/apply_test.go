package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/patch"
	kschema "github.com/kapi-dev/kapi/schema"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/openapi/openapitest"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"
)

// The server-side apply corpus of the patch package, run through
// k8s.io/apimachinery's field manager (what kube-apiserver uses for CRDs)
// and kapi's; objects, managedFields (times only as present or absent;
// entries in kube's order with equal times) and errors must agree.

const applyCorpus = "../patch/testdata/apply"

type applyCase struct {
	Schema     string              `json:"schema"`
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Reset      map[string][]string `json:"resetFields"`
	Live       map[string]any      `json:"live"`
	Steps      []struct {
		Op          string         `json:"op"`
		Manager     string         `json:"manager"`
		Force       bool           `json:"force"`
		Subresource string         `json:"subresource"`
		Object      map[string]any `json:"object"`
	} `json:"steps"`
}

func readYAMLJSONForm(t testing.TB, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
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

// kubeForm converts a JSON-form object to what kube's unstructured holds
// (int64 / float64 numbers), deep-copied.
func kubeForm(t testing.TB, o map[string]any) map[string]any {
	t.Helper()
	if o == nil {
		return nil
	}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// kubeFieldManagers builds kube's field managers of a corpus case, one per
// subresource.
type kubeFieldManagers struct {
	tc    managedfields.TypeConverter
	gvk   schema.GroupVersionKind
	by    map[string]*managedfields.FieldManager
	reset map[string][]string // per subresource
}

func (k *kubeFieldManagers) get(t testing.TB, sub string) *managedfields.FieldManager {
	if fm, ok := k.by[sub]; ok {
		return fm
	}
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if paths, ok := k.reset[sub]; ok {
		set := fieldpath.NewSet()
		for _, p := range paths {
			set.Insert(fieldpath.MakePathOrDie(p))
		}
		reset = fieldpath.NewExcludeFilterSetMap(map[fieldpath.APIVersion]*fieldpath.Set{fieldpath.APIVersion(k.gvk.GroupVersion().String()): set})
	}
	fm, err := managedfields.NewDefaultCRDFieldManager(k.tc, identityConvertor{}, noDefaults{}, unstructuredCreater{}, k.gvk, k.gvk.GroupVersion(), sub, reset)
	if err != nil {
		t.Fatal(err)
	}
	k.by[sub] = fm
	return fm
}

type identityConvertor struct{}

func (identityConvertor) Convert(in, out, context any) error { return errors.New("unsupported") }
func (identityConvertor) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}
func (identityConvertor) ConvertFieldLabel(_ schema.GroupVersionKind, l, v string) (string, string, error) {
	return l, v, nil
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// widgetTypeConverter is kube's type converter for the corpus' widget
// schema, built as apiextensions-apiserver builds it: the CRD schema with
// metadata as ObjectMeta (at the root and in embedded resources), and
// ObjectMeta from the core OpenAPI document.
func widgetTypeConverter(t testing.TB, gvk schema.GroupVersionKind) managedfields.TypeConverter {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(applyCorpus, "widget-schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	var root spec.Schema
	if err := json.Unmarshal(j, &root); err != nil {
		t.Fatal(err)
	}
	const objectMeta = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	var kubeNative func(s *spec.Schema, embedded bool)
	kubeNative = func(s *spec.Schema, embedded bool) {
		for k, p := range s.Properties {
			emb, _ := p.Extensions.GetBool("x-kubernetes-embedded-resource")
			kubeNative(&p, emb)
			s.Properties[k] = p
		}
		if s.Items != nil && s.Items.Schema != nil {
			kubeNative(s.Items.Schema, false)
		}
		if embedded {
			s.SetProperty("metadata", *spec.RefSchema(objectMeta))
			s.SetProperty("apiVersion", *spec.StringProperty())
			s.SetProperty("kind", *spec.StringProperty())
		}
	}
	kubeNative(&root, true)
	root.AddExtension("x-kubernetes-group-version-kind", []any{map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}})

	gv, err := openapitest.NewEmbeddedFileClient().Paths()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := gv["api/v1"].Schema("application/json")
	if err != nil {
		t.Fatal(err)
	}
	var core spec3.OpenAPI
	if err := json.Unmarshal(raw, &core); err != nil {
		t.Fatal(err)
	}
	models := core.Components.Schemas
	models["com.example.v1.Widget"] = &root
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// normalized is an object's JSON with managedFields sorted canonically and
// times replaced by "set", plus its entries in the order they came.
func normalized(t testing.TB, o map[string]any) string {
	t.Helper()
	c := kubeForm(t, o)
	if md, ok := c["metadata"].(map[string]any); ok {
		if mf, ok := md["managedFields"].([]any); ok {
			for _, e := range mf {
				if m := e.(map[string]any); m["time"] != nil {
					m["time"] = "set"
				}
			}
			sort.SliceStable(mf, func(i, j int) bool {
				a, _ := json.Marshal(mf[i])
				b, _ := json.Marshal(mf[j])
				return string(a) < string(b)
			})
		}
	}
	b, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func withUIDSet(o map[string]any) map[string]any {
	if o == nil {
		return nil
	}
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

// causes renders a 409's causes sorted, kube's or kapi's.
func causes(err error) string {
	var lines []string
	var se *apierrors.StatusError
	var ce *patch.ConflictError
	switch {
	case errors.As(err, &se) && se.ErrStatus.Details != nil:
		for _, c := range se.ErrStatus.Details.Causes {
			lines = append(lines, fmt.Sprintf("%s|%s|%s", c.Type, c.Message, c.Field))
		}
	case errors.As(err, &ce):
		for _, c := range ce.Conflicts {
			lines = append(lines, fmt.Sprintf("%s|%s|%s", patch.CauseTypeFieldManagerConflict, c.Message(), c.Field))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestApplyMatchesKube(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(applyCorpus, "*.yaml"))
	for _, f := range files {
		if strings.HasSuffix(f, "-schema.yaml") {
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			var c applyCase
			readYAMLJSONForm(t, f, &c)
			if c.APIVersion == "" {
				c.APIVersion, c.Kind = "example.com/v1", "Widget"
			}
			gv, _ := schema.ParseGroupVersion(c.APIVersion)
			gvk := gv.WithKind(c.Kind)
			var s *kschema.Schema
			k := &kubeFieldManagers{gvk: gvk, by: map[string]*managedfields.FieldManager{}, reset: c.Reset}
			if c.Schema == "widget" {
				b, err := os.ReadFile(filepath.Join(applyCorpus, "widget-schema.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				if s, err = kschema.Parse(b); err != nil {
					t.Fatal(err)
				}
				k.tc = widgetTypeConverter(t, gvk)
			} else {
				k.tc = managedfields.NewDeducedTypeConverter()
			}
			fm, err := patch.NewFieldManager(s, c.APIVersion, patch.FieldManagerOptions{Kind: c.Kind, ResetFields: c.Reset})
			if err != nil {
				t.Fatal(err)
			}
			kapiLive, kubeLive := c.Live, kubeForm(t, c.Live)
			for i, st := range c.Steps {
				var got map[string]any
				var gotErr, wantErr error
				var want runtime.Object
				kfm := k.get(t, st.Subresource)
				liveObj := runtime.Object(&unstructured.Unstructured{Object: kubeLive})
				if kubeLive == nil {
					liveObj, _ = unstructuredCreater{}.New(gvk)
				}
				in := &unstructured.Unstructured{Object: kubeForm(t, st.Object)}
				switch st.Op {
				case "apply":
					got, gotErr = fm.Apply(kapiLive, st.Object, patch.ApplyOptions{Manager: st.Manager, Force: st.Force, Subresource: st.Subresource})
					want, wantErr = kfm.Apply(liveObj.DeepCopyObject(), in, st.Manager, st.Force)
				case "update":
					got, gotErr = fm.Update(kapiLive, st.Object, patch.UpdateOptions{Manager: st.Manager, Subresource: st.Subresource})
					want, wantErr = kfm.Update(liveObj.DeepCopyObject(), in, st.Manager)
				}
				if (gotErr != nil) != (wantErr != nil) {
					t.Fatalf("step %d: got error %v; kube's %v", i, gotErr, wantErr)
				}
				if wantErr != nil {
					if gotErr.Error() != wantErr.Error() {
						t.Errorf("step %d: got error\n%s\nkube's\n%s", i, gotErr, wantErr)
					}
					if g, w := causes(gotErr), causes(wantErr); g != w {
						t.Errorf("step %d: got causes\n%s\nkube's\n%s", i, g, w)
					}
					continue
				}
				wantMap := want.(*unstructured.Unstructured).Object
				if g, w := normalized(t, got), normalized(t, wantMap); g != w {
					t.Errorf("step %d: got\n%s\nkube's\n%s", i, g, w)
				}
				kapiLive, kubeLive = withUIDSet(got), withUIDSet(kubeForm(t, wantMap))
			}
		})
	}
}
