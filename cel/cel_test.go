package cel

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

// widgetSchema is a widget-like whole-object schema whose spec carries the
// given x-kubernetes-validations (YAML flow list) and whose spec.ports
// items carry portRules.
func widgetSchema(t testing.TB, specRules, portRules string) *schema.Schema {
	t.Helper()
	if specRules == "" {
		specRules = "[]"
	}
	if portRules == "" {
		portRules = "[]"
	}
	s, err := schema.Parse([]byte(`
type: object
properties:
  apiVersion: {type: string}
  kind: {type: string}
  metadata: {type: object}
  spec:
    type: object
    x-kubernetes-validations: ` + specRules + `
    properties:
      color: {type: string, maxLength: 64}
      replicas: {type: integer}
      minReplicas: {type: integer}
      size: {type: string, maxLength: 32}
      url: {type: string, maxLength: 256}
      name: {type: string, maxLength: 64}
      tags: {type: array, maxItems: 16, items: {type: string, maxLength: 32}}
      ports:
        type: array
        maxItems: 2000
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [port]
        items:
          type: object
          required: [port]
          x-kubernetes-validations: ` + portRules + `
          properties:
            name: {type: string, maxLength: 15}
            port: {type: integer}
            protocol: {type: string, maxLength: 8}
`))
	if err != nil {
		t.Fatalf("schema.Parse: %v", err)
	}
	return s
}

func mustCompile(t testing.TB, s *schema.Schema) schema.Rules {
	t.Helper()
	r, err := Compile(s)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return r
}

func obj(spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default"},
		"spec":     spec,
	}
}

// decode reads a JSON object with numbers as json.Number, as kapi's
// request path hands objects over.
func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

func errStrings(errs []schema.FieldError) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		specRules string
		portRules string
		obj       map[string]any
		old       map[string]any
		want      []schema.FieldError
	}{
		{
			name:      "passing rule",
			specRules: `[{rule: "self.replicas >= 1", message: "must have a replica"}]`,
			obj:       obj(map[string]any{"replicas": int64(3)}),
		},
		{
			name:      "failing rule with message",
			specRules: `[{rule: "self.replicas >= 1", message: "must have a replica"}]`,
			obj:       obj(map[string]any{"replicas": int64(0)}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Detail: "must have a replica"}},
		},
		{
			name:      "failing rule without message",
			specRules: `[{rule: "self.replicas >= 1"}]`,
			obj:       obj(map[string]any{"replicas": int64(0)}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Detail: "failed rule: self.replicas >= 1"}},
		},
		{
			name:      "json.Number, int and float64 are numbers",
			specRules: `[{rule: "self.replicas + self.minReplicas == 5"}]`,
			obj:       decode(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":2,"minReplicas":3}}`),
		},
		{
			name:      "Go int is a number",
			specRules: `[{rule: "self.replicas == 2"}]`,
			obj:       obj(map[string]any{"replicas": 2}),
		},
		{
			name:      "messageExpression",
			specRules: `[{rule: "self.replicas <= 10", messageExpression: "'replicas must be at most 10 for color ' + self.color"}]`,
			obj:       obj(map[string]any{"replicas": json.Number("12"), "color": "red"}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Detail: "replicas must be at most 10 for color red"}},
		},
		{
			name:      "fieldPath",
			specRules: `[{rule: "self.minReplicas <= self.replicas", message: "must not exceed replicas", fieldPath: ".minReplicas"}]`,
			obj:       obj(map[string]any{"replicas": int64(1), "minReplicas": int64(2)}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec.minReplicas", Detail: "must not exceed replicas"}},
		},
		{
			name:      "reason Forbidden",
			specRules: `[{rule: "!has(self.color)", message: "color is set by the controller", reason: FieldValueForbidden, fieldPath: ".color"}]`,
			obj:       obj(map[string]any{"color": "red"}),
			want:      []schema.FieldError{{Type: "FieldValueForbidden", Field: "spec.color", Value: "", Detail: "color is set by the controller"}},
		},
		{
			name:      "reason Required",
			specRules: `[{rule: "has(self.color)", message: "color is required", reason: FieldValueRequired, fieldPath: ".color"}]`,
			obj:       obj(map[string]any{}),
			want:      []schema.FieldError{{Type: "FieldValueRequired", Field: "spec.color", Value: "", Detail: "color is required"}},
		},
		{
			name:      "reason Duplicate",
			specRules: `[{rule: "self.tags.all(t, self.tags.exists_one(u, u == t))", reason: FieldValueDuplicate, fieldPath: ".tags"}]`,
			obj:       obj(map[string]any{"tags": []any{"a", "a"}}),
			want:      []schema.FieldError{{Type: "FieldValueDuplicate", Field: "spec.tags"}},
		},
		{
			name:      "rules on list items at depth",
			portRules: `[{rule: "self.port > 0 && self.port < 65536", message: "port out of range"}, {rule: "!has(self.protocol) || self.protocol in ['TCP', 'UDP']", message: "unknown protocol"}]`,
			obj: obj(map[string]any{"ports": []any{
				map[string]any{"port": int64(80)},
				map[string]any{"port": int64(70000), "protocol": "TCP"},
				map[string]any{"port": int64(53), "protocol": "SCTP"},
			}}),
			want: []schema.FieldError{
				{Type: "FieldValueInvalid", Field: "spec.ports[1]", Detail: "port out of range"},
				{Type: "FieldValueInvalid", Field: "spec.ports[2]", Detail: "unknown protocol"},
			},
		},
		{
			name:      "transition rule skipped on create",
			specRules: `[{rule: "self.color == oldSelf.color", message: "color is immutable"}]`,
			obj:       obj(map[string]any{"color": "red"}),
		},
		{
			name:      "transition rule passes on update",
			specRules: `[{rule: "self.color == oldSelf.color", message: "color is immutable"}]`,
			obj:       obj(map[string]any{"color": "red", "replicas": int64(2)}),
			old:       obj(map[string]any{"color": "red", "replicas": int64(1)}),
		},
		{
			name:      "transition rule fails on update",
			specRules: `[{rule: "self.color == oldSelf.color", message: "color is immutable"}]`,
			obj:       obj(map[string]any{"color": "blue"}),
			old:       obj(map[string]any{"color": "red"}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Detail: "color is immutable"}},
		},
		{
			name:      "transition rule on list items by map key",
			portRules: `[{rule: "self.name == oldSelf.name", message: "name is immutable"}]`,
			obj:       obj(map[string]any{"ports": []any{map[string]any{"port": int64(80), "name": "web"}, map[string]any{"port": int64(443), "name": "tls"}}}),
			old:       obj(map[string]any{"ports": []any{map[string]any{"port": int64(80), "name": "http"}}}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec.ports[0]", Detail: "name is immutable"}},
		},
		{
			name:      "optionalOldSelf evaluated on create",
			specRules: `[{rule: "oldSelf.hasValue() || self.replicas == 1", message: "must start with one replica", optionalOldSelf: true}]`,
			obj:       obj(map[string]any{"replicas": int64(3)}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Detail: "must start with one replica"}},
		},
		{
			name:      "optionalOldSelf on update",
			specRules: `[{rule: "!oldSelf.hasValue() || self.replicas >= oldSelf.value().replicas", message: "must not scale down", optionalOldSelf: true}]`,
			obj:       obj(map[string]any{"replicas": int64(1)}),
			old:       obj(map[string]any{"replicas": int64(3)}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Detail: "must not scale down"}},
		},
		{
			name:      "ratcheting: an unchanged invalid value passes on update",
			specRules: `[{rule: "self.replicas >= 1", message: "must have a replica"}]`,
			obj:       obj(map[string]any{"replicas": int64(0)}),
			old:       obj(map[string]any{"replicas": int64(0)}),
		},
		{
			name:      "ratcheting: a changed invalid value fails on update",
			specRules: `[{rule: "self.replicas >= 1", message: "must have a replica"}]`,
			obj:       obj(map[string]any{"replicas": int64(0), "color": "red"}),
			old:       obj(map[string]any{"replicas": int64(0)}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Detail: "must have a replica"}},
		},
		{
			name:      "quantity library",
			specRules: `[{rule: "!has(self.size) || quantity(self.size).isLessThan(quantity('1Gi'))", message: "too big"}]`,
			obj:       obj(map[string]any{"size": "2Gi"}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Detail: "too big"}},
		},
		{
			name:      "url library",
			specRules: `[{rule: "!has(self.url) || (isURL(self.url) && url(self.url).getScheme() == 'https')", message: "must be an https URL"}]`,
			obj:       obj(map[string]any{"url": "http://example.com"}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Detail: "must be an https URL"}},
		},
		{
			name:      "format library",
			specRules: `[{rule: "!has(self.name) || !format.dns1123Label().validate(self.name).hasValue()", message: "must be a DNS label"}]`,
			obj:       obj(map[string]any{"name": "Not_A_Label"}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Detail: "must be a DNS label"}},
		},
		{
			name:      "regex library",
			specRules: `[{rule: "!has(self.color) || self.color.matches('^[a-z]+$')", message: "lower-case letters only"}, {rule: "!has(self.color) || self.color.find('[0-9]+') == ''", message: "no digits"}]`,
			obj:       obj(map[string]any{"color": "Red1"}),
			want: []schema.FieldError{
				{Type: "FieldValueInvalid", Field: "spec", Detail: "lower-case letters only"},
				{Type: "FieldValueInvalid", Field: "spec", Detail: "no digits"},
			},
		},
		{
			name:      "lists library",
			specRules: `[{rule: "!has(self.tags) || self.tags.isSorted()", message: "tags must be sorted"}, {rule: "!has(self.tags) || self.tags.indexOf('x') < 0", message: "no x"}]`,
			obj:       obj(map[string]any{"tags": []any{"b", "a", "x"}}),
			want: []schema.FieldError{
				{Type: "FieldValueInvalid", Field: "spec", Detail: "tags must be sorted"},
				{Type: "FieldValueInvalid", Field: "spec", Detail: "no x"},
			},
		},
		{
			name:      "runtime error",
			specRules: `[{rule: "self.replicas / self.minReplicas > 0"}]`,
			obj:       obj(map[string]any{"replicas": int64(1), "minReplicas": int64(0)}),
			want:      []schema.FieldError{{Type: "FieldValueInvalid", Field: "spec", Value: "object", Detail: "division by zero evaluating rule: self.replicas / self.minReplicas > 0"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustCompile(t, widgetSchema(t, tc.specRules, tc.portRules))
			got := r.Validate(context.Background(), tc.obj, tc.old)
			if want := omitted(tc.want); !equalErrors(got, want) {
				t.Errorf("Validate: got %q (%#v); want %q", errStrings(got), got, errStrings(want))
			}
		})
	}
}

// omitted is want with values left unset omitted, as kube omits the
// objects and lists a rule fails on from its message.
func omitted(want []schema.FieldError) []schema.FieldError {
	out := slices.Clone(want)
	for i := range out {
		if out[i].Value == nil {
			out[i].Value = schema.OmitValue
		}
	}
	return out
}

func equalErrors(a, b []schema.FieldError) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Field != b[i].Field || a[i].Detail != b[i].Detail || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}

// A rule on a scalar node reports the scalar as the error's value, and a
// rule on the root reports kube's nil path "<nil>".
func TestValidateValueAndRoot(t *testing.T) {
	t.Parallel()
	s, err := schema.Parse([]byte(`
type: object
x-kubernetes-validations: [{rule: "self.metadata.name.startsWith('w-')", message: "name must start with w-"}]
properties:
  metadata: {type: object}
  spec:
    type: object
    properties:
      color: {type: string, maxLength: 10, x-kubernetes-validations: [{rule: "self != 'green'", message: "no green"}]}
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r := mustCompile(t, s)
	tests := []struct {
		name string
		obj  map[string]any
		want []schema.FieldError
	}{
		{"valid", map[string]any{"metadata": map[string]any{"name": "w-1"}, "spec": map[string]any{"color": "red"}}, nil},
		{"scalar", map[string]any{"metadata": map[string]any{"name": "w-1"}, "spec": map[string]any{"color": "green"}},
			[]schema.FieldError{{Type: "FieldValueInvalid", Field: "spec.color", Value: "green", Detail: "no green"}}},
		{"root", map[string]any{"metadata": map[string]any{"name": "x"}},
			[]schema.FieldError{{Type: "FieldValueInvalid", Field: "<nil>", Detail: "name must start with w-"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := r.Validate(context.Background(), tc.obj, nil)
			if want := omitted(tc.want); !equalErrors(got, want) {
				t.Errorf("Validate: got %q (%#v); want %q", errStrings(got), got, errStrings(want))
			}
		})
	}
}

// The inputs are never modified, even where numbers are converted.
func TestValidateDoesNotModify(t *testing.T) {
	t.Parallel()
	r := mustCompile(t, widgetSchema(t, `[{rule: "self.replicas == 2"}]`, ""))
	o := decode(t, `{"metadata":{"name":"w"},"spec":{"replicas":2,"ports":[{"port":80}]}}`)
	if errs := r.Validate(context.Background(), o, o); len(errs) != 0 {
		t.Fatalf("Validate: got %q; want no errors", errStrings(errs))
	}
	spec := o["spec"].(map[string]any)
	if _, ok := spec["replicas"].(json.Number); !ok {
		t.Errorf("spec.replicas: got %T; want json.Number left as it was", spec["replicas"])
	}
	if _, ok := spec["ports"].([]any)[0].(map[string]any)["port"].(json.Number); !ok {
		t.Errorf("spec.ports[0].port: got %T; want json.Number left as it was", spec["ports"].([]any)[0].(map[string]any)["port"])
	}
}

func TestRuntimeCost(t *testing.T) {
	t.Parallel()
	// Each rule is within the static limits (tags is bounded) but the
	// budget for the whole object is spent by many list items.
	s, err := schema.Parse([]byte(`
type: object
properties:
  spec:
    type: object
    properties:
      items:
        type: array
        maxItems: 300
        items:
          type: object
          properties:
            tags: {type: array, maxItems: 30, items: {type: string, maxLength: 30}}
          x-kubernetes-validations: ` + strings.Repeat(`
          - rule: "self.tags.all(a, self.tags.all(b, a == b || a != b))"`, 10) + `
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r := mustCompile(t, s)
	tags := make([]any, 30)
	for i := range tags {
		tags[i] = strings.Repeat("x", 29) + string(rune('a'+i%26))
	}
	items := make([]any, 300)
	for i := range items {
		items[i] = map[string]any{"tags": tags}
	}
	errs := r.Validate(context.Background(), map[string]any{"spec": map[string]any{"items": items}}, nil)
	if len(errs) == 0 {
		t.Fatalf("Validate: got no errors; want the cost budget exceeded")
	}
	last := errs[len(errs)-1]
	if last.Type != "FieldValueInvalid" || !strings.Contains(last.Detail, "running out of cost budget") {
		t.Errorf("last error: got %q; want Invalid ... validation failed due to running out of cost budget", last.Error())
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		specRules string
		want      []string // substrings of the error
	}{
		{"bad syntax", `[{rule: "self.replicas >"}]`,
			[]string{"openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule", "compilation failed", "Syntax error"}},
		{"unknown field", `[{rule: "self.nosuchfield == 1"}]`,
			[]string{"openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule", "undefined field 'nosuchfield'"}},
		{"not a bool", `[{rule: "self.replicas"}]`,
			[]string{"x-kubernetes-validations[0].rule", "cel expression must evaluate to a bool"}},
		{"bad messageExpression", `[{rule: "true"}, {rule: "true", messageExpression: "'a' +"}]`,
			[]string{"openAPIV3Schema.properties[spec].x-kubernetes-validations[1].messageExpression", "messageExpression compilation failed"}},
		{"messageExpression not a string", `[{rule: "true", messageExpression: "1"}]`,
			[]string{"x-kubernetes-validations[0].messageExpression", "must evaluate to a string"}},
		{"fieldPath does not resolve", `[{rule: "true", fieldPath: ".nosuchfield"}]`,
			[]string{"openAPIV3Schema.properties[spec].x-kubernetes-validations[0].fieldPath", "must be a valid path"}},
		{"bad reason", `[{rule: "true", reason: Nope}]`,
			[]string{"x-kubernetes-validations[0].reason", "Unsupported value"}},
		{"oldSelf with optionalOldSelf but no oldSelf", `[{rule: "self.replicas > 0", optionalOldSelf: true}]`,
			[]string{"x-kubernetes-validations[0].optionalOldSelf", "may not be set if oldSelf is not used in rule"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(widgetSchema(t, tc.specRules, ""))
			if err == nil {
				t.Fatalf("Compile: got no error; want %q", tc.want)
			}
			if !errors.Is(err, ErrInvalidRules) {
				t.Errorf("Compile: got %v; want an error wrapping ErrInvalidRules", err)
			}
			var ce *CompileError
			if !errors.As(err, &ce) || len(ce.Errors) == 0 {
				t.Errorf("Compile: got %T; want a *CompileError with errors", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Compile: got %q; want it to contain %q", err, w)
				}
			}
		})
	}
}

// A rule over an unbounded list of unbounded strings is refused for its
// estimated cost, as kube refuses such a CRD.
func TestCompileTooCostly(t *testing.T) {
	t.Parallel()
	s, err := schema.Parse([]byte(`
type: object
properties:
  spec:
    type: object
    properties:
      names:
        type: array
        items: {type: string}
        x-kubernetes-validations:
        - rule: "self.all(a, self.all(b, a == b || a.contains(b)))"
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	_, err = Compile(s)
	if err == nil {
		t.Fatal("Compile: got no error; want the rule refused as too costly")
	}
	for _, w := range []string{"openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0].rule", "Forbidden", "estimated rule cost exceeds budget by factor of"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Compile: got %q; want it to contain %q", err, w)
		}
	}
}

func TestCompileNoRules(t *testing.T) {
	t.Parallel()
	for _, s := range []*schema.Schema{nil, {}, widgetSchema(t, "", "")} {
		r, err := Compile(s)
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		if errs := r.Validate(context.Background(), obj(map[string]any{"replicas": "x"}), nil); errs != nil {
			t.Errorf("Validate: got %q; want nil", errStrings(errs))
		}
	}
}

// kapi's built-in schemas describe all of ObjectMeta; kube allows a
// custom resource only name and generateName there, which is all its
// CEL sees.
func TestCompileFullMetadata(t *testing.T) {
	t.Parallel()
	s, err := schema.Parse([]byte(`
type: object
x-kubernetes-validations: [{rule: "self.metadata.name != 'forbidden'", message: "bad name"}]
properties:
  metadata:
    type: object
    properties:
      name: {type: string}
      labels: {type: object, additionalProperties: {type: string}}
  data: {type: object, additionalProperties: {type: string}}
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r := mustCompile(t, s)
	got := r.Validate(context.Background(), map[string]any{"metadata": map[string]any{"name": "forbidden", "labels": map[string]any{"a": "b"}}}, nil)
	want := omitted([]schema.FieldError{{Type: "FieldValueInvalid", Field: "<nil>", Detail: "bad name"}})
	if !equalErrors(got, want) {
		t.Errorf("Validate: got %q; want %q", errStrings(got), errStrings(want))
	}
}

func TestCompileNotStructural(t *testing.T) {
	t.Parallel()
	s := &schema.Schema{Type: "object", Properties: map[string]*schema.Schema{
		"spec": {Ext: schema.Ext{Validations: []schema.Rule{{Rule: "true"}}}}, // no type
	}}
	_, err := Compile(s)
	if err == nil || !errors.Is(err, ErrInvalidRules) || !strings.Contains(err.Error(), "properties[spec].type: Required value") {
		t.Errorf("Compile: got %v; want ErrInvalidRules naming properties[spec].type: Required value", err)
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want any
	}{
		{json.Number("12"), int64(12)},
		{json.Number("1.5"), 1.5},
		{json.Number("2.0"), 2.0},
		{json.Number("1e3"), 1000.0},
		{json.Number("99999999999999999999"), 1e20},
		{7, int64(7)},
		{int32(7), int64(7)},
		{uint64(7), int64(7)},
		{float32(0.5), 0.5},
		{int64(3), int64(3)},
		{"s", "s"},
		{true, true},
		{nil, nil},
	}
	for _, tc := range tests {
		got, _ := normalize(tc.in)
		if got != tc.want {
			t.Errorf("normalize(%#v): got %#v; want %#v", tc.in, got, tc.want)
		}
	}
	m := map[string]any{"a": []any{"x", int64(1)}}
	got, changed := normalize(m)
	if changed {
		t.Errorf("normalize of a kube-form object: changed; want it returned as it is")
	}
	if got.(map[string]any)["a"].([]any)[1] != int64(1) {
		t.Errorf("normalize: got %#v; want %#v", got, m)
	}
}
