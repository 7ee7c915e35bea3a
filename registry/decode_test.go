package registry_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

// TestDecodeErrors: a built-in kind's body its Go types cannot hold is
// refused with kube's words, encoding/json's (package gojson); a custom
// resource's metadata that is not an object too.
func TestDecodeErrors(t *testing.T) {
	cms := protoConfigMaps()
	cms.Schema = schema.ConfigMap()
	s := newServer(t, cms)
	const base = "/apis/proto.example.com/v1/namespaces/default/pconfigmaps"
	const cannot = `ConfigMap in version "v1" cannot be handled as a ConfigMap: `
	tests := []struct {
		name  string
		path  string
		query string
		body  string
		code  int
		msg   string
	}{
		{"map value", base, "", `{"metadata":{"name":"a"},"data":{"k":1}}`, 400,
			cannot + "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"},
		{"metadata a string", base, "", `{"metadata":"a"}`, 400,
			cannot + "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta"},
		{"label value", base, "", `{"metadata":{"name":"a","labels":{"x":1}}}`, 400,
			cannot + "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"},
		{"first in the document", base, "", `{"immutable":"x","metadata":{"name":1}}`, 400,
			cannot + "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"},
		{"base64", base, "", `{"metadata":{"name":"a"},"binaryData":{"k":"%%%"}}`, 400,
			cannot + "illegal base64 data at input byte 0"},
		{"null body is an empty object", base, "", `null`, 422,
			`ConfigMap.proto.example.com "" is invalid: metadata.name: Required value: name or generateName is required`},
		{"strict problems in document order", base, "?fieldValidation=Strict", `{"extra":1,"metadata":{"name":"a","nope":2}}`, 400,
			cannot + `strict decoding error: unknown field "extra", unknown field "metadata.nope"`},
		{"strict problems in document order, reversed", base, "?fieldValidation=Strict", `{"metadata":{"name":"a","nope":2},"extra":1}`, 400,
			cannot + `strict decoding error: unknown field "metadata.nope", unknown field "extra"`},
		{"custom resource's metadata a list", widgetsPath, "", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":[]}`, 400,
			`Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal array into Go value of type v1.ObjectMeta`},
		{"valid", base, "", `{"metadata":{"name":"ok"},"data":{"k":"v"},"binaryData":{"b":"aGk="}}`, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do("POST", tt.path+tt.query, tt.body)
			if r.code != tt.code {
				t.Fatalf("got %d %s; want %d", r.code, r.body, tt.code)
			}
			if tt.msg != "" {
				if got := str(r.obj(t), "message"); got != tt.msg {
					t.Errorf("message %q; want %q", got, tt.msg)
				}
			}
		})
	}
}

// TestKindMismatch: a built-in kind's body naming another kind or version
// is refused as kube's decoder refuses it.
func TestKindMismatch(t *testing.T) {
	cms := protoConfigMaps()
	cms.Schema = schema.ConfigMap()
	s := newServer(t, cms)
	const base = "/apis/proto.example.com/v1/namespaces/default/pconfigmaps"
	tests := []struct {
		name string
		body string
		code int
		msg  string
	}{
		{"a kind served in that version", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, 400,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: converting (v1.ConfigMap) to (proto.ConfigMap): unknown conversion`},
		{"a version not served", `{"apiVersion":"proto.example.com/v2","kind":"ConfigMap","metadata":{"name":"a"}}`, 400,
			`ConfigMap in version "v2" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "proto.example.com/v2" in scheme "pkg/runtime/scheme.go:111"`},
		{"a kind not served", `{"apiVersion":"proto.example.com/v1","kind":"Secret","metadata":{"name":"a"}}`, 400,
			`Secret in version "v1" cannot be handled as a ConfigMap: no kind "Secret" is registered for version "proto.example.com/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{"kind without apiVersion", `{"kind":"ConfigMap","metadata":{"name":"b"}}`, 201, ""},
		{"apiVersion without kind", `{"apiVersion":"proto.example.com/v1","metadata":{"name":"c"}}`, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do("POST", base, tt.body)
			if r.code != tt.code {
				t.Fatalf("got %d %s; want %d", r.code, r.body, tt.code)
			}
			if tt.msg != "" {
				if got := str(r.obj(t), "message"); got != tt.msg {
					t.Errorf("message %q; want %q", got, tt.msg)
				}
			}
		})
	}
}

// TestPutUIDPrecondition: a PUT's metadata.uid is a precondition, kube's
// 409 naming the storage key when it is not the object's.
func TestPutUIDPrecondition(t *testing.T) {
	s := newServer(t)
	created := s.must(201, "POST", widgetsPath, widget("a", nil, map[string]any{"color": "red"}))
	uid := str(created, "metadata.uid")
	other := "00000000-0000-0000-0000-000000000001"
	tests := []struct {
		name string
		uid  string
		code int
		msg  string
	}{
		{"no uid", "", 200, ""},
		{"the object's uid", uid, 200, ""},
		{"another uid", other, 409, `Operation cannot be fulfilled on widgets.example.com "a": StorageError: invalid object, Code: 4, Key: /example.com/widgets/default/a, ResourceVersion: 0, ` +
			`AdditionalErrorMsg: Precondition failed: UID in precondition: ` + other + `, UID in object meta: ` + uid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := widget("a", nil, map[string]any{"color": "blue"})
			if tt.uid != "" {
				w["metadata"].(map[string]any)["uid"] = tt.uid
			}
			r := s.do("PUT", widgetsPath+"/a", w)
			if r.code != tt.code {
				t.Fatalf("got %d %s; want %d", r.code, r.body, tt.code)
			}
			if tt.msg != "" {
				if got := str(r.obj(t), "message"); got != tt.msg {
					t.Errorf("message %q; want %q", got, tt.msg)
				}
			}
		})
	}
}

// TestNullsAndEmpties: a custom resource's nulls its schema does not
// allow are dropped, and so are metadata's nulls and empty maps and
// lists, before validation and the field manager, as kube's decoder does.
func TestNullsAndEmpties(t *testing.T) {
	g := gadgets(t)
	g.Custom = true
	s := newServer(t, g)
	tests := []struct {
		name string
		body string
		want string // the created object's metadata and spec, as JSON
	}{
		{"null field", `{"metadata":{"name":"a"},"spec":{"size":2,"extra":null}}`,
			`{"labels":null,"spec":{"color":"red","size":2}}`},
		{"null labels", `{"metadata":{"name":"b","labels":null,"annotations":{},"finalizers":[]},"spec":{"size":2}}`,
			`{"labels":null,"spec":{"color":"red","size":2}}`},
		{"labels kept", `{"metadata":{"name":"c","labels":{"x":"y"}},"spec":{"size":2}}`,
			`{"labels":{"x":"y"},"spec":{"color":"red","size":2}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"apiVersion":"example.com/v1","kind":"Gadget",` + tt.body[1:]
			r := s.do("POST", gadgetsPath, body)
			if r.code != 201 {
				t.Fatalf("got %d %s; want 201", r.code, r.body)
			}
			obj := r.obj(t)
			md := obj["metadata"].(map[string]any)
			for _, k := range []string{"annotations", "finalizers"} {
				if v, ok := md[k]; ok {
					t.Errorf("metadata.%s = %v; want it dropped", k, v)
				}
			}
			got, _ := json.Marshal(map[string]any{"labels": md["labels"], "spec": obj["spec"]})
			if string(got) != tt.want {
				t.Errorf("got %s; want %s", got, tt.want)
			}
			for _, mf := range md["managedFields"].([]any) {
				if f, _ := json.Marshal(mf); strings.Contains(string(f), "f:annotations") || strings.Contains(string(f), "f:extra") {
					t.Errorf("managedFields %s own a dropped field", f)
				}
			}
		})
	}
}
