package validation

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// decode turns a JSON metadata literal into the map the registry passes.
func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test metadata %s: %v", s, err)
	}
	return m
}

func messages(errs []Error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestValidateObjectMeta(t *testing.T) {
	bigAnnotation := strings.Repeat("x", TotalAnnotationSizeLimit)
	tests := []struct {
		name string
		meta string
		opts MetaOptions
		want []string
	}{
		{name: "valid namespaced", meta: `{"name":"web","namespace":"default","labels":{"app":"web","example.com/tier":""},"annotations":{"Example.com/Note":"x"},"finalizers":["example.com/cleanup"]}`,
			opts: MetaOptions{Namespaced: true}},
		{name: "valid cluster", meta: `{"name":"a.b-c"}`},
		{name: "name required", meta: `{}`, want: []string{"metadata.name: Required value: name or generateName is required"}},
		{name: "generateName only", meta: `{"generateName":"web-"}`},
		{name: "bad name", meta: `{"name":"Foo"}`, want: []string{`metadata.name: Invalid value: "Foo": ` + subdomainMsg}},
		{name: "name too long", meta: `{"name":"` + strings.Repeat("a", 254) + `"}`, want: []string{`metadata.name: Invalid value: "` + strings.Repeat("a", 254) + `": must be no more than 253 characters`}},
		{name: "bad generateName", meta: `{"generateName":"Web-"}`, want: []string{`metadata.generateName: Invalid value: "Web-": ` + subdomainMsg}},
		{name: "generateName dot", meta: `{"generateName":"a.-"}`},
		{name: "label name", meta: `{"name":"a.b"}`, opts: MetaOptions{NameIsLabel: true}, want: []string{`metadata.name: Invalid value: "a.b": must not contain dots`}},
		{name: "custom name rule", meta: `{"name":"Any Thing"}`, opts: MetaOptions{NameFunc: func(string) []string { return nil }}},
		{name: "custom rule then path segment", meta: `{"name":"a/b%"}`, opts: MetaOptions{NameFunc: func(string) []string { return nil }},
			want: []string{`metadata.name: Invalid value: "a/b%": may not contain '/'`, `metadata.name: Invalid value: "a/b%": may not contain '%'`}},
		{name: "custom rule dotdot", meta: `{"name":".."}`, opts: MetaOptions{NameFunc: func(string) []string { return nil }},
			want: []string{`metadata.name: Invalid value: "..": may not be '..'`}},
		{name: "custom rule message", meta: `{"name":"x","generateName":"y-"}`, opts: MetaOptions{NameFunc: func(n string) []string { return []string{"no " + n} }},
			want: []string{`metadata.generateName: Invalid value: "y-": no a`, `metadata.name: Invalid value: "x": no x`}},
		{name: "generateName path prefix", meta: `{"generateName":"a/"}`, opts: MetaOptions{NameFunc: func(string) []string { return nil }},
			want: []string{`metadata.generateName: Invalid value: "a/": may not contain '/'`}},
		{name: "namespace required", meta: `{"name":"a"}`, opts: MetaOptions{Namespaced: true}, want: []string{"metadata.namespace: Required value"}},
		{name: "namespace invalid", meta: `{"name":"a","namespace":"a.b"}`, opts: MetaOptions{Namespaced: true}, want: []string{`metadata.namespace: Invalid value: "a.b": must not contain dots`}},
		{name: "namespace forbidden", meta: `{"name":"a","namespace":"x"}`, want: []string{"metadata.namespace: Forbidden: not allowed on this type"}},
		{name: "negative generation", meta: `{"name":"a","generation":-1}`, want: []string{"metadata.generation: Invalid value: -1: must be greater than or equal to 0"}},
		{name: "labels sorted", meta: `{"name":"a","labels":{"b/c/d":"ok","a":"-x"}}`, want: []string{
			`metadata.labels: Invalid value: "-x": ` + valueMsg,
			`metadata.labels: Invalid value: "b/c/d": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
		}},
		{name: "label key prefix case", meta: `{"name":"a","labels":{"Example.com/a":"x"}}`, want: []string{`metadata.labels: Invalid value: "Example.com/a": prefix part ` + subdomainMsg}},
		{name: "annotation key bad", meta: `{"name":"a","annotations":{"a b":"x"}}`, want: []string{`metadata.annotations: Invalid value: "a b": ` + namePartMsg}},
		{name: "annotations at limit", meta: `{"name":"a","annotations":{"k":"` + bigAnnotation[1:] + `"}}`},
		{name: "annotations too large", meta: `{"name":"a","annotations":{"k":"` + bigAnnotation + `"}}`, want: []string{"metadata.annotations: Too long: may not be more than 262144 bytes"}},
		{name: "finalizer bad", meta: `{"name":"a","finalizers":["a/b/c","ok"]}`, want: []string{`metadata.finalizers: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`}},
		{name: "finalizer not qualified, standard ones required", meta: `{"name":"a","finalizers":["kubernetes","orphan","keep","x.io/y"]}`, opts: MetaOptions{StandardFinalizers: true},
			want: []string{`metadata.finalizers[2]: Invalid value: "keep": name is neither a standard finalizer name nor is it fully qualified`}},
		{name: "finalizer not qualified", meta: `{"name":"a","finalizers":["keep"]}`},
		{name: "orphan and foreground", meta: `{"name":"a","finalizers":["orphan","foregroundDeletion"]}`, want: []string{`metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set`}},
		{name: "owner ok", meta: `{"name":"a","ownerReferences":[{"apiVersion":"example.com/v1","kind":"Widget","name":"w","uid":"u","controller":true}]}`},
		{name: "owner missing fields", meta: `{"name":"a","ownerReferences":[{}]}`, want: []string{
			"metadata.ownerReferences[0].apiVersion: Required value: must not be empty",
			"metadata.ownerReferences[0].kind: Required value: must not be empty",
			"metadata.ownerReferences[0].name: Required value: must not be empty",
			"metadata.ownerReferences[0].uid: Required value: must not be empty",
		}},
		{name: "owner bad apiVersion", meta: `{"name":"a","ownerReferences":[{"apiVersion":"a/b/c","kind":"K","name":"n","uid":"u"},{"apiVersion":"g/","kind":"K","name":"n","uid":"u"}]}`, want: []string{
			`metadata.ownerReferences[0].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>`,
			`metadata.ownerReferences[1].apiVersion: Invalid value: "g/": must be <group>/<version> or <version>`,
		}},
		{name: "owner event banned", meta: `{"name":"a","ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"n","uid":"u"}]}`, want: []string{
			`metadata.ownerReferences[0]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"n","uid":"u"}: /v1, Kind=Event is disallowed from being an owner`,
		}},
		{name: "two controllers", meta: `{"name":"a","ownerReferences":[{"apiVersion":"v1","kind":"A","name":"x","uid":"1","controller":true},{"apiVersion":"v1","kind":"B","name":"y","uid":"2","controller":true}]}`, want: []string{
			`metadata.ownerReferences: Invalid value: [{"apiVersion":"v1","kind":"A","name":"x","uid":"1","controller":true},{"apiVersion":"v1","kind":"B","name":"y","uid":"2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for A/x and B/y`,
		}},
		{name: "wrong types", meta: `{"name":1,"namespace":true,"labels":{"a":1},"annotations":[],"finalizers":"x","ownerReferences":{},"generation":1.5}`, opts: MetaOptions{Namespaced: true}, want: []string{
			"metadata.name: Invalid value: 1: must be a string",
			"metadata.namespace: Invalid value: true: must be a string",
			"metadata.generation: Invalid value: 1.5: must be an integer",
			`metadata.labels: Invalid value: {"a":1}: must be an object with string values`,
			"metadata.annotations: Invalid value: []: must be an object with string values",
			"metadata.ownerReferences: Invalid value: {}: must be a list of objects",
			`metadata.finalizers: Invalid value: "x": must be a list of strings`,
		}},
		{name: "nulls are absent", meta: `{"name":"a","labels":null,"annotations":null,"finalizers":null,"ownerReferences":null,"generation":null,"namespace":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := messages(ValidateObjectMeta(decode(t, tt.meta), tt.opts))
			if !slices.Equal(got, tt.want) {
				t.Errorf("ValidateObjectMeta(%.80s) =\n  %q\nwant\n  %q", tt.meta, got, tt.want)
			}
		})
	}
}

func TestValidateObjectMetaGoTypes(t *testing.T) {
	// Callers that build metadata in Go may use typed maps and slices.
	meta := map[string]any{
		"name":        "a",
		"labels":      map[string]string{"ok": "-bad"},
		"annotations": map[string]string{"ok": "v"},
		"finalizers":  []string{"ok"},
		"generation":  int64(2),
	}
	got := messages(ValidateObjectMeta(meta, MetaOptions{}))
	want := []string{`metadata.labels: Invalid value: "-bad": ` + valueMsg}
	if !slices.Equal(got, want) {
		t.Errorf("ValidateObjectMeta = %q; want %q", got, want)
	}
}

func TestValidateObjectMetaUpdate(t *testing.T) {
	const old = `{"name":"a","namespace":"ns","uid":"u1","resourceVersion":"5","generation":3,"creationTimestamp":"2024-01-01T00:00:00Z","finalizers":["x/a"]}`
	tests := []struct {
		name     string
		old, new string
		want     []string
	}{
		{name: "unchanged", old: old, new: old},
		{name: "labels added", old: old, new: `{"name":"a","namespace":"ns","uid":"u1","resourceVersion":"5","generation":3,"creationTimestamp":"2024-01-01T00:00:00Z","labels":{"a":"b"}}`},
		{name: "generation grows", old: old, new: `{"name":"a","namespace":"ns","uid":"u1","resourceVersion":"5","generation":4,"creationTimestamp":"2024-01-01T00:00:00Z"}`},
		{name: "immutable fields", old: old, new: `{"name":"b","namespace":"other","uid":"u2","resourceVersion":"5","generation":3,"deletionGracePeriodSeconds":30}`, want: []string{
			`metadata.name: Invalid value: "b": field is immutable`,
			`metadata.namespace: Invalid value: "other": field is immutable`,
			`metadata.uid: Invalid value: "u2": field is immutable`,
			`metadata.creationTimestamp: Invalid value: "": field is immutable`,
			`metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable`,
		}},
		{name: "resourceVersion required and generation decremented", old: old, new: `{"name":"a","namespace":"ns","uid":"u1","generation":2,"creationTimestamp":"2024-01-01T00:00:00Z"}`, want: []string{
			`metadata.resourceVersion: Invalid value: "": must be specified for an update`,
			`metadata.generation: Invalid value: 2: must not be decremented`,
		}},
		{name: "no new finalizers while deleting",
			old:  `{"name":"a","namespace":"ns","resourceVersion":"5","deletionTimestamp":"2024-01-02T00:00:00Z","finalizers":["x/a"]}`,
			new:  `{"name":"a","namespace":"ns","resourceVersion":"5","deletionTimestamp":"2024-01-02T00:00:00Z","finalizers":["x/c","x/a","x/b","x/c"]}`,
			want: []string{`metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"x/b", "x/c"}`}},
		{name: "removing finalizers while deleting",
			old: `{"name":"a","namespace":"ns","resourceVersion":"5","deletionTimestamp":"2024-01-02T00:00:00Z","finalizers":["x/a"]}`,
			new: `{"name":"a","namespace":"ns","resourceVersion":"5","deletionTimestamp":"2024-01-02T00:00:00Z"}`},
		{name: "new metadata validated too", old: old, new: `{"name":"a","namespace":"ns","uid":"u1","resourceVersion":"5","generation":3,"creationTimestamp":"2024-01-01T00:00:00Z","labels":{"a":"b c"}}`,
			want: []string{`metadata.labels: Invalid value: "b c": ` + valueMsg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := messages(ValidateObjectMetaUpdate(decode(t, tt.new), decode(t, tt.old), MetaOptions{Namespaced: true}))
			if !slices.Equal(got, tt.want) {
				t.Errorf("ValidateObjectMetaUpdate =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func FuzzValidateObjectMeta(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"name":"a","namespace":"b"}`, `{"name":1,"labels":{"a":1}}`,
		`{"generateName":"-","annotations":{"A/b":"c"}}`, `{"ownerReferences":[1,{"controller":true},{"controller":true,"apiVersion":"/"}]}`,
		`{"finalizers":["orphan","foregroundDeletion",null],"generation":1e300}`,
	} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, namespaced bool) {
		var meta map[string]any
		if json.Unmarshal([]byte(s), &meta) != nil {
			return
		}
		for _, e := range ValidateObjectMeta(meta, MetaOptions{Namespaced: namespaced}) {
			if e.Field == "" || e.Type == "" || !strings.HasPrefix(e.Field, "metadata.") {
				t.Fatalf("malformed error %#v", e)
			}
			_ = e.Error()
		}
		_ = ValidateObjectMetaUpdate(meta, meta, MetaOptions{Namespaced: namespaced})
	})
}
