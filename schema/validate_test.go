package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The corpus in testdata/validation: each file a CRD openAPIV3Schema and
// cases whose expectations were produced by, and are checked against,
// kube-apiserver's own code (conformance/validation_corpus_test.go).
type corpusFile struct {
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Validate    []validateCase  `json:"validate,omitempty"`
	Default     []transformCase `json:"default,omitempty"`
	Prune       []transformCase `json:"prune,omitempty"`
}

type validateCase struct {
	Name       string          `json:"name"`
	Object     json.RawMessage `json:"object,omitempty"`
	ObjectJSON string          `json:"objectJSON,omitempty"`
	// Old, when set, makes the case an update from Old to Object,
	// checked with ratcheting (ValidateUpdate).
	Old    json.RawMessage `json:"old,omitempty"`
	Valid  bool            `json:"valid,omitempty"`
	Errors []corpusCause   `json:"errors,omitempty"`
}

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

func readCorpus(t testing.TB) map[string]corpusFile {
	t.Helper()
	files, err := filepath.Glob("testdata/validation/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	out := map[string]corpusFile{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var cf corpusFile
		d := json.NewDecoder(bytes.NewReader(j))
		d.DisallowUnknownFields()
		if err := d.Decode(&cf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".yaml")] = cf
	}
	return out
}

// decodeJSON decodes as kapi holds objects: numbers as json.Number.
func decodeJSON(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// message is kube's field.Error text of e. validation.Error does not know
// kube's FieldValueTypeInvalid, which kube prints as "Invalid value".
func message(e FieldError) string { return e.Error() }

func causes(errs []FieldError) []corpusCause {
	var out []corpusCause
	for _, e := range errs {
		out = append(out, corpusCause{Type: e.Type, Field: e.Field, Message: message(e)})
	}
	return out
}

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

func canonicalJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(x)
	return string(out)
}

// TestValidateCorpus checks Validate, ApplyDefaults and Prune against
// every case of the corpus. Errors are compared as sorted lists: where
// kube walks a Go map its order is random (TestValidateOrder checks
// kapi's order).
func TestValidateCorpus(t *testing.T) {
	n := 0
	for name, cf := range readCorpus(t) {
		s, err := Parse(cf.Schema)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range cf.Validate {
			n++
			t.Run(name+"/validate/"+c.Name, func(t *testing.T) {
				b := []byte(c.Object)
				if c.ObjectJSON != "" {
					b = []byte(c.ObjectJSON)
				}
				obj := decodeJSON(t, b)
				before := canonicalJSON(t, obj)
				var errs []FieldError
				if c.Old != nil {
					errs = s.ValidateUpdate(obj, decodeJSON(t, c.Old))
				} else {
					errs = s.Validate(obj)
				}
				if got := len(errs) == 0; got != c.Valid {
					t.Errorf("valid = %v; want %v", got, c.Valid)
				}
				if got, want := sortedCauses(causes(errs)), sortedCauses(c.Errors); !reflect.DeepEqual(got, want) {
					t.Errorf("got causes\n%v\nwant\n%v", got, want)
				}
				if after := canonicalJSON(t, obj); after != before {
					t.Errorf("Validate changed the object: %s; was %s", after, before)
				}
			})
		}
		for _, c := range cf.Default {
			n++
			t.Run(name+"/default/"+c.Name, func(t *testing.T) {
				obj := decodeJSON(t, c.Object)
				s.ApplyDefaults(obj)
				if got, want := canonicalJSON(t, obj), canonicalJSON(t, decodeJSON(t, c.Want)); got != want {
					t.Errorf("got %s; want %s", got, want)
				}
			})
		}
		for _, c := range cf.Prune {
			n++
			t.Run(name+"/prune/"+c.Name, func(t *testing.T) {
				obj := decodeJSON(t, c.Object)
				pruned := s.Prune(obj)
				if got, want := canonicalJSON(t, obj), canonicalJSON(t, decodeJSON(t, c.Want)); got != want {
					t.Errorf("got %s; want %s", got, want)
				}
				if !slices.Equal(pruned, c.Pruned) {
					t.Errorf("pruned %q; want %q", pruned, c.Pruned)
				}
			})
		}
	}
	if n < 60 {
		t.Errorf("corpus has %d cases; want at least 60", n)
	}
}

// TestValidateOrder checks the order of Validate's errors: within a node
// kube-openapi's (type, allOf/anyOf/oneOf/not, string, format, number,
// array, enum, object with additionalProperties, properties, required),
// keys in sorted order where kube's is random, then embedded resources,
// then list sets and maps.
func TestValidateOrder(t *testing.T) {
	s := mustParse(t, `{"type":"object","required":["z"],"properties":{
		"b": {"type":"integer","minimum":5,"enum":[7]},
		"a": {"type":"array","x-kubernetes-list-type":"set","maxItems":1,"items":{"type":"string","maxLength":1}},
		"e": {"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}`)
	tests := []struct {
		name string
		obj  string
		want []string
	}{
		{name: "every stage", obj: `{"b":"x","a":["xx","y","y"],"e":{}}`, want: []string{
			`a[0]: Too long: may not be more than 1 byte`,
			`a: Too many: 3: must have at most 1 item`,
			`b: Invalid value: "string": b in body must be of type integer: "string"`,
			`b: Unsupported value: "x": supported values: "7"`,
			`z: Required value`,
			`e.apiVersion: Required value`,
			`e.kind: Required value`,
			`a[2]: Duplicate value: "y"`,
		}},
		{name: "number checks", obj: `{"b":1.5,"z":1}`, want: []string{
			`b: Invalid value: "number": b in body must be of type integer: "number"`,
			`<nil>: Invalid value: "": Checked value must be of type integer (default format) in b`,
			`b: Invalid value: 1.5: b in body should be greater than or equal to 5`,
			`b: Unsupported value: 1.5: supported values: "7"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range s.Validate(decodeJSON(t, []byte(tt.obj))) {
				got = append(got, message(e))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
