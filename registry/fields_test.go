package registry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// gadgets is a resource with a schema: defaults, required, an enum and a
// subtree that preserves unknown fields.
func gadgets(t *testing.T) *registry.Resource {
	t.Helper()
	s, err := schema.Parse([]byte(`
type: object
properties:
  apiVersion: {type: string}
  kind: {type: string}
  metadata: {type: object}
  spec:
    type: object
    required: [size]
    properties:
      size: {type: integer, minimum: 1}
      color: {type: string, enum: [red, blue], default: red}
      extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	return &registry.Resource{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true, Schema: s, Generation: true}
}

const gadgetsPath = "/apis/example.com/v1/namespaces/default/gadgets"

func TestFieldValidation(t *testing.T) {
	body := `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g","bogus":1},"spec":{"size":2,"size":3,"colour":"red","extra":{"any":1}}}`
	problems := []string{`duplicate field "spec.size"`, `unknown field "metadata.bogus"`, `unknown field "spec.colour"`}
	for _, tc := range []struct {
		query    string
		code     int
		warnings []string
	}{
		{"", 201, problems},
		{"?fieldValidation=Warn", 201, problems},
		{"?fieldValidation=Ignore", 201, nil},
		{"?fieldValidation=Strict", 400, nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			s := newServer(t, gadgets(t))
			r := s.do("POST", gadgetsPath+tc.query, body)
			if r.code != tc.code {
				t.Fatalf("code %d, want %d: %s", r.code, tc.code, r.body)
			}
			var got []string
			for _, h := range r.header.Values("Warning") {
				got = append(got, strings.TrimPrefix(h, "299 - "))
			}
			var want []string
			for _, w := range tc.warnings {
				want = append(want, `"`+strings.ReplaceAll(w, `"`, `\"`)+`"`)
			}
			if !slices.Equal(got, want) {
				t.Errorf("warnings %q, want %q", got, want)
			}
			if tc.code != 201 {
				msg := str(r.obj(t), "message")
				wantMsg := `Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: ` + strings.Join(problems, ", ")
				if msg != wantMsg {
					t.Errorf("message %q, want %q", msg, wantMsg)
				}
				s.must(404, "GET", gadgetsPath+"/g", nil)
				return
			}
			obj := s.must(200, "GET", gadgetsPath+"/g", nil)
			spec := path(obj, "spec").(map[string]any)
			if _, ok := spec["colour"]; ok {
				t.Errorf("unknown field stored: %v", spec)
			}
			if _, ok := path(obj, "metadata").(map[string]any)["bogus"]; ok {
				t.Errorf("unknown metadata field stored")
			}
			if spec["size"] != float64(3) || spec["color"] != "red" || path(obj, "spec.extra.any") != float64(1) {
				t.Errorf("spec %v: want size 3 (the last), color defaulted, extra kept", spec)
			}
		})
	}
}

func TestFieldValidationPatch(t *testing.T) {
	s := newServer(t, gadgets(t))
	s.must(201, "POST", gadgetsPath, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":2}}`)
	merge := []string{"Content-Type", "application/merge-patch+json"}
	r := s.do("PATCH", gadgetsPath+"/g", `{"spec":{"shape":"round"}}`, merge...)
	if r.code != 200 || !slices.Equal(r.header.Values("Warning"), []string{`299 - "unknown field \"spec.shape\""`}) {
		t.Fatalf("merge patch with an unknown field: %d %q", r.code, r.header.Values("Warning"))
	}
	r = s.do("PATCH", gadgetsPath+"/g?fieldValidation=Strict", `{"spec":{"shape":"round"}}`, merge...)
	if r.code != 422 || !strings.Contains(str(r.obj(t), "message"), `strict decoding error: unknown field "spec.shape"`) {
		t.Fatalf("strict merge patch: %d %s", r.code, r.body)
	}
	r = s.do("PATCH", gadgetsPath+"/g?fieldValidation=Bogus", `{}`, merge...)
	if r.code != 422 || str(r.obj(t), "message") != `PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"` {
		t.Fatalf("bad fieldValidation: %d %s", r.code, r.body)
	}
}

func TestSchemaValidation(t *testing.T) {
	s := newServer(t, gadgets(t))
	r := s.do("POST", gadgetsPath, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":"big","color":"green"}}`)
	if r.code != 422 {
		t.Fatalf("code %d, want 422: %s", r.code, r.body)
	}
	var fields []string
	for _, c := range path(r.obj(t), "details.causes").([]any) {
		fields = append(fields, c.(map[string]any)["field"].(string))
	}
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"spec.color", "spec.size"}) {
		t.Errorf("causes on %v, want spec.color and spec.size", fields)
	}
	s.must(404, "GET", gadgetsPath+"/g", nil)
	s.must(201, "POST", gadgetsPath, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":1}}`)
	r = s.do("PUT", gadgetsPath+"/g", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{}}`)
	if r.code != 422 || !strings.Contains(str(r.obj(t), "message"), "spec.size: Required value") {
		t.Errorf("update without a required field: %d %s", r.code, r.body)
	}
}

func TestResourceVersionMustBeAString(t *testing.T) {
	s := newServer(t, gadgets(t))
	s.must(201, "POST", gadgetsPath, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":1}}`)
	for _, rv := range []string{`1`, `{"a":1}`} {
		r := s.do("PUT", gadgetsPath+"/g", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g","resourceVersion":`+rv+`},"spec":{"size":2}}`)
		if r.code != 400 {
			t.Errorf("resourceVersion %s: code %d, want 400: %s", rv, r.code, r.body)
		}
	}
	if got := path(s.must(200, "GET", gadgetsPath+"/g", nil), "spec.size"); got != float64(1) {
		t.Errorf("spec.size %v after refused updates, want 1", got)
	}
}

func TestGenerationOnlyWhereTheResourceKeepsIt(t *testing.T) {
	s := newServer(t, gadgets(t))
	cm := s.must(201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"c"},"data":{"a":"b"}}`)
	if g := path(cm, "metadata.generation"); g != nil {
		t.Errorf("configmap has generation %v; kube's configmaps have none", g)
	}
	g := s.must(201, "POST", gadgetsPath, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":1}}`)
	if got := path(g, "metadata.generation"); got != float64(1) {
		t.Errorf("gadget generation %v, want 1", got)
	}
}

func TestWarningsFromHooks(t *testing.T) {
	res := gadgets(t)
	res.Strategy.WarningsOnCreate = func(ctx context.Context, obj registry.Object) []string {
		registry.Warn(ctx, "from Warn")
		return []string{"size is small", "size is small"}
	}
	s := newServer(t, res)
	r := s.do("POST", gadgetsPath, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":1}}`)
	want := []string{`299 - "from Warn"`, `299 - "size is small"`}
	if r.code != 201 || !slices.Equal(r.header.Values("Warning"), want) {
		t.Errorf("%d %q, want 201 %q", r.code, r.header.Values("Warning"), want)
	}
}

// rules is a fake CEL: every rule fails with its message at its node.
type rules struct{ path, msg string }

func (r rules) Validate(ctx context.Context, obj, old map[string]any) []schema.FieldError {
	return []schema.FieldError{{Type: "FieldValueInvalid", Field: r.path, Value: "object", Detail: r.msg}}
}

func TestRulesNeedACompiler(t *testing.T) {
	res := gadgets(t)
	res.Schema.Properties["spec"].Validations = []schema.Rule{{Rule: "self.size < 10", Message: "too big"}}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(res); err == nil || !strings.Contains(err.Error(), "x-kubernetes-validations") || !strings.Contains(err.Error(), "at spec") {
		t.Fatalf("Register without Options.CEL: %v; want an error naming the rules", err)
	}

	failing := errors.New("rule does not compile")
	reg, _ = registry.New(registry.Options{Storage: memory.New(memory.Options{}), CEL: func(*schema.Schema) (schema.Rules, error) { return nil, failing }})
	if err := reg.Register(res); !errors.Is(err, failing) {
		t.Fatalf("Register with a failing compiler: %v", err)
	}

	reg, _ = registry.New(registry.Options{Storage: memory.New(memory.Options{}), CEL: func(*schema.Schema) (schema.Rules, error) { return rules{"spec", "too big"}, nil }})
	if err := reg.Register(res); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", gadgetsPath, strings.NewReader(`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":1}}`))
	w := httptest.NewRecorder()
	reg.ServeHTTP(w, req)
	if w.Code != 422 || !strings.Contains(w.Body.String(), `spec: Invalid value: \"object\": too big`) {
		t.Errorf("a failing rule: %d %s", w.Code, w.Body.String())
	}
}

func TestDefaultsOnRead(t *testing.T) {
	s := newServer(t, gadgets(t))
	// Stored before the schema had a default: written straight to the store.
	if _, err := s.store.Create(context.Background(), storage.Object{
		Key:   "/example.com/gadgets/default/old",
		Value: []byte(`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"old","namespace":"default","uid":"u1"},"spec":{"size":1}}`),
	}); err != nil {
		t.Fatal(err)
	}
	if got := path(s.must(200, "GET", gadgetsPath+"/old", nil), "spec.color"); got != "red" {
		t.Errorf("get: spec.color %v, want the default red", got)
	}
	items := path(s.must(200, "GET", gadgetsPath, nil), "items").([]any)
	if len(items) != 1 || path(items[0].(map[string]any), "spec.color") != "red" {
		t.Errorf("list: %v, want spec.color defaulted", items)
	}
}
