package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	kjson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/common"
	"sigs.k8s.io/yaml"
)

// updateCorpus rewrites the expectations of the corpus in
// ../schema/testdata/validation from what kube's own code does:
//
//	go test ./conformance -run TestValidationCorpus -update-validation-corpus
var updateCorpus = flag.Bool("update-validation-corpus", false, "rewrite the schema validation corpus from kube's results")

const corpusDir = "../schema/testdata/validation"

// The corpus format, shared with kapi's schema tests
// (schema/validate_test.go): a CRD openAPIV3Schema and cases.
type corpusFile struct {
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Validate    []validateCase  `json:"validate,omitempty"`
	Default     []transformCase `json:"default,omitempty"`
	Prune       []transformCase `json:"prune,omitempty"`
}

type validateCase struct {
	Name string `json:"name"`
	// Object is the object; ObjectJSON, when set, is its JSON text (YAML
	// reads 2.0 as 2, JSON keeps it a float).
	Object     json.RawMessage `json:"object,omitempty"`
	ObjectJSON string          `json:"objectJSON,omitempty"`
	// Old, when set, makes the case an update from Old to Object, which
	// kube checks with validation ratcheting.
	Old    json.RawMessage `json:"old,omitempty"`
	Valid  bool            `json:"valid,omitempty"`
	Errors []corpusCause   `json:"errors,omitempty"`
}

// corpusCause is one expected error: its type, field and full message
// (field.Error's Error()).
type corpusCause struct {
	Type    string `json:"type"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

type transformCase struct {
	Name   string          `json:"name"`
	Object json.RawMessage `json:"object"`
	Want   json.RawMessage `json:"want,omitempty"`
	Pruned []string        `json:"pruned,omitempty"`
}

func (c validateCase) objectBytes() []byte {
	if c.ObjectJSON != "" {
		return []byte(c.ObjectJSON)
	}
	return c.Object
}

// kubeSchema builds what kube-apiserver builds from a CRD's
// openAPIV3Schema: the internal JSONSchemaProps, its structural schema and
// the OpenAPI schema validator.
func kubeSchema(t testing.TB, raw []byte) (*apiextensions.JSONSchemaProps, *structuralschema.Structural, apiservervalidation.SchemaValidator) {
	t.Helper()
	var v1 apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(raw, &v1); err != nil {
		t.Fatalf("schema: %v", err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1, &internal, nil); err != nil {
		t.Fatalf("convert: %v", err)
	}
	ss, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatalf("structural: %v", err)
	}
	if errs := structuralschema.ValidateStructural(nil, ss); len(errs) > 0 {
		t.Fatalf("not structural: %v", errs.ToAggregate())
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		t.Fatalf("validator: %v", err)
	}
	return &internal, ss, validator
}

// kubeDecode decodes JSON as kube-apiserver decodes a custom resource:
// integers as int64, other numbers as float64.
func kubeDecode(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := kjson.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// kubeValidate is the schema part of kube's customResourceStrategy.Validate:
// OpenAPI validation, embedded resources, list sets and maps.
func kubeValidate(obj any, ss *structuralschema.Structural, v apiservervalidation.SchemaValidator) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, v)...)
	if m, ok := obj.(map[string]any); ok {
		errs = append(errs, objectmeta.Validate(context.Background(), nil, m, ss, false)...)
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, ss, m)...)
	}
	return errs
}

// kubeValidateUpdate is the schema part of kube's
// customResourceStrategy.ValidateUpdate, with validation ratcheting (on
// by default): OpenAPI validation correlated with old, embedded
// resources, and list sets and maps if old has no duplicates.
func kubeValidateUpdate(obj, old any, ss *structuralschema.Structural, v apiservervalidation.SchemaValidator) field.ErrorList {
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: ss})
	errs := apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, v, apiservervalidation.WithRatcheting(correlated))
	if m, ok := obj.(map[string]any); ok {
		errs = append(errs, objectmeta.Validate(context.Background(), nil, m, ss, false)...)
		if om, _ := old.(map[string]any); len(listtype.ValidateListSetsAndMaps(nil, ss, om)) == 0 {
			errs = append(errs, listtype.ValidateListSetsAndMaps(nil, ss, m)...)
		}
	}
	return errs
}

// sortedCauses orders causes by field and message: kube walks Go maps,
// so the order of its errors across keys is random.
func sortedCauses(cs []corpusCause) []corpusCause {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b corpusCause) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return out
}

func corpusFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s: %v", corpusDir, err)
	}
	return files
}

func readCorpus(t testing.TB, file string) corpusFile {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var cf corpusFile
	d := json.NewDecoder(bytes.NewReader(j))
	d.DisallowUnknownFields()
	if err := d.Decode(&cf); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return cf
}

// canonicalJSON re-encodes JSON with numbers as float64, so that int64 1,
// float64 1 and json.Number "1" compare equal.
func canonicalJSON(t testing.TB, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// TestValidationCorpus runs kapi's schema validation corpus through kube's
// own code — the validator, embedded-resource and list-type checks of
// customResourceStrategy, structural defaulting and pruning — and checks
// that kube gives exactly the verdicts, causes, defaulted objects and
// pruned paths the corpus expects (schema/validate_test.go checks kapi
// against the same expectations).
func TestValidationCorpus(t *testing.T) {
	total := 0
	for _, file := range corpusFiles(t) {
		cf := readCorpus(t, file)
		_, ss, validator := kubeSchema(t, cf.Schema)
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		for i, c := range cf.Validate {
			total++
			t.Run(name+"/validate/"+c.Name, func(t *testing.T) {
				obj := kubeDecode(t, c.objectBytes())
				errs := kubeValidate(obj, ss, validator)
				if c.Old != nil {
					errs = kubeValidateUpdate(obj, kubeDecode(t, c.Old), ss, validator)
				}
				var got []corpusCause
				for _, e := range errs {
					got = append(got, corpusCause{Type: string(e.Type), Field: e.Field, Message: e.Error()})
				}
				got = sortedCauses(got)
				if *updateCorpus {
					cf.Validate[i].Errors = got
					cf.Validate[i].Valid = len(got) == 0
					return
				}
				if c.Valid != (len(got) == 0) {
					t.Errorf("kube's verdict: valid=%v; corpus says valid=%v (%v)", len(got) == 0, c.Valid, got)
				}
				if want := sortedCauses(c.Errors); !reflect.DeepEqual(got, want) {
					t.Errorf("kube's causes:\n%v\ncorpus:\n%v", got, want)
				}
			})
		}
		for i, c := range cf.Default {
			total++
			t.Run(name+"/default/"+c.Name, func(t *testing.T) {
				obj := kubeDecode(t, c.Object)
				structuraldefaulting.Default(obj, ss)
				got, _ := json.Marshal(obj)
				if *updateCorpus {
					cf.Default[i].Want = got
					return
				}
				if g, w := canonicalJSON(t, got), canonicalJSON(t, c.Want); g != w {
					t.Errorf("kube defaults to %s; corpus wants %s", g, w)
				}
			})
		}
		for i, c := range cf.Prune {
			total++
			t.Run(name+"/prune/"+c.Name, func(t *testing.T) {
				obj := kubeDecode(t, c.Object)
				pruned := structuralpruning.PruneWithOptions(obj, ss, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
				got, _ := json.Marshal(obj)
				if *updateCorpus {
					cf.Prune[i].Want = got
					cf.Prune[i].Pruned = pruned
					return
				}
				if g, w := canonicalJSON(t, got), canonicalJSON(t, c.Want); g != w {
					t.Errorf("kube prunes to %s; corpus wants %s", g, w)
				}
				if !slices.Equal(pruned, c.Pruned) {
					t.Errorf("kube pruned %q; corpus says %q", pruned, c.Pruned)
				}
			})
		}
		if *updateCorpus {
			j, err := json.Marshal(cf)
			if err != nil {
				t.Fatal(err)
			}
			y, err := yaml.JSONToYAML(j)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, y, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if total < 60 {
		t.Errorf("corpus has %d cases; want at least 60", total)
	}
}
