package registry_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
)

const (
	v2Proto           = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	v2ProtoDeprecated = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

func TestOpenAPIV2Negotiation(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name, accept string
		wantCode     int
		wantType     string
	}{
		{"no Accept is JSON", "", http.StatusOK, "application/json"},
		{"JSON", "application/json", http.StatusOK, "application/json"},
		{"any", "*/*", http.StatusOK, "application/json"},
		{"client-go's protobuf name", v2ProtoDeprecated, http.StatusOK, v2Proto},
		{"kube's protobuf name", v2Proto, http.StatusOK, v2Proto},
		{"weights", "application/json;q=0.5, " + v2Proto, http.StatusOK, v2Proto},
		{"specific before wildcard", "*/*, " + v2ProtoDeprecated, http.StatusOK, v2Proto},
		{"q=0 is refused", v2Proto + ";q=0, application/json", http.StatusOK, "application/json"},
		{"nothing served", "text/html", http.StatusNotAcceptable, ""},
	}
	var etags []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h []string
			if tt.accept != "" {
				h = []string{"Accept", tt.accept}
			}
			r := s.do("GET", "/openapi/v2", nil, h...)
			if r.code != tt.wantCode {
				t.Fatalf("GET /openapi/v2 Accept %q: got %d; want %d: %.200s", tt.accept, r.code, tt.wantCode, r.body)
			}
			if tt.wantType == "" {
				return
			}
			if got := r.header.Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type: got %q; want %q", got, tt.wantType)
			}
			if got := r.header.Values("Vary"); !slices.Contains(got, "Accept") {
				t.Errorf("Vary: got %q; want Accept in it", got)
			}
			etags = append(etags, r.header.Get("Etag"))
		})
	}
	for _, e := range etags {
		if e != etags[0] || len(e) != 2+128 {
			t.Errorf("ETags: got %q; want one quoted SHA-512 for both forms", etags)
			break
		}
	}
}

// The protobuf form is gnostic's parse of the JSON form, so that client-go
// (protobuf) and JSON readers see one document.
func TestOpenAPIV2FormsAgree(t *testing.T) {
	s := newServer(t, crdResource(t, "Gadget", "gadgets", gadgetSchema))
	j := s.do("GET", "/openapi/v2", nil, "Accept", "application/json")
	p := s.do("GET", "/openapi/v2", nil, "Accept", v2Proto)
	if j.code != http.StatusOK || p.code != http.StatusOK {
		t.Fatalf("GET /openapi/v2: got %d and %d; want 200", j.code, p.code)
	}
	fromJSON, err := openapi_v2.ParseDocument(j.body)
	if err != nil {
		t.Fatalf("gnostic cannot parse the JSON form: %v", err)
	}
	var fromProto openapi_v2.Document
	if err := proto.Unmarshal(p.body, &fromProto); err != nil {
		t.Fatalf("protobuf form: %v", err)
	}
	if !proto.Equal(fromJSON, &fromProto) {
		t.Errorf("the JSON and protobuf forms differ")
	}
	if fromProto.GetSwagger() != "2.0" || len(fromProto.GetDefinitions().GetAdditionalProperties()) == 0 {
		t.Errorf("protobuf form: got swagger %q with %d definitions; want 2.0 with some", fromProto.GetSwagger(), len(fromProto.GetDefinitions().GetAdditionalProperties()))
	}
}

func TestOpenAPIV2ETagAndRegister(t *testing.T) {
	s := newServer(t)
	first := s.do("GET", "/openapi/v2", nil)
	etag := first.header.Get("Etag")
	if etag == "" || first.header.Get("Last-Modified") == "" {
		t.Fatalf("GET /openapi/v2: got ETag %q, Last-Modified %q; want both", etag, first.header.Get("Last-Modified"))
	}
	if r := s.do("GET", "/openapi/v2", nil, "If-None-Match", etag); r.code != http.StatusNotModified || len(r.body) != 0 {
		t.Errorf("If-None-Match the ETag: got %d with %d bytes; want 304 and no body", r.code, len(r.body))
	}
	if r := s.do("GET", "/openapi/v2", nil, "If-None-Match", `"other"`); r.code != http.StatusOK {
		t.Errorf("If-None-Match another ETag: got %d; want 200", r.code)
	}
	if r := s.do("HEAD", "/openapi/v2", nil); r.code != http.StatusOK || len(r.body) != 0 {
		t.Errorf("HEAD: got %d with %d bytes; want 200 and no body", r.code, len(r.body))
	}
	if r := s.do("POST", "/openapi/v2", "{}"); r.code != http.StatusMethodNotAllowed {
		t.Errorf("POST: got %d; want 405", r.code)
	}

	if err := s.reg.Register(crdResource(t, "Gadget", "gadgets", gadgetSchema)); err != nil {
		t.Fatal(err)
	}
	second := s.do("GET", "/openapi/v2", nil, "If-None-Match", etag)
	if second.code != http.StatusOK || second.header.Get("Etag") == etag {
		t.Fatalf("after Register: got %d with ETag %s; want 200 and a new ETag", second.code, second.header.Get("Etag"))
	}
	if defs, _ := second.obj(t)["definitions"].(map[string]any); defs["com.example.v1.Gadget"] == nil {
		t.Errorf("after Register: no definition com.example.v1.Gadget")
	}
}

func TestOpenAPIV2Gzip(t *testing.T) {
	s := newServer(t)
	plain := s.do("GET", "/openapi/v2", nil)
	r := s.do("GET", "/openapi/v2", nil, "Accept-Encoding", "gzip")
	if got := r.header.Get("Content-Encoding"); got != "gzip" {
		t.Fatalf("Content-Encoding: got %q; want gzip", got)
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, plain.body) {
		t.Errorf("gzipped body: got %d bytes; want the %d of the plain one", len(b), len(plain.body))
	}
}

// gadgetSchema has what Swagger 2.0 cannot say, for kube's conversion.
const gadgetSchema = `{
  "type": "object",
  "description": "A Gadget.",
  "properties": {
    "spec": {
      "type": "object",
      "required": ["size", "note"],
      "properties": {
        "size": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "note": {"type": "string", "nullable": true},
        "ports": {
          "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
          "items": {"type": "object", "required": ["port"], "properties": {"port": {"type": "integer"}}}
        },
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"a": {"type": "string"}}},
        "anything": {"type": "array", "x-kubernetes-preserve-unknown-fields": true, "items": {"type": "string"}},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}}
      }
    }
  }
}`

func crdResource(t *testing.T, kind, plural, schemaJSON string) *registry.Resource {
	t.Helper()
	sch, err := schema.Parse([]byte(schemaJSON))
	if err != nil {
		t.Fatalf("schema.Parse: %v", err)
	}
	return &registry.Resource{Group: "example.com", Version: "v1", Kind: kind, Plural: plural, Namespaced: true, Status: true, Schema: sch}
}

func TestOpenAPIV2Content(t *testing.T) {
	cm := configMaps()
	cm.Schema = schema.ConfigMap()
	s := newServer(t, crdResource(t, "Gadget", "gadgets", gadgetSchema))
	if err := s.reg.Register(&registry.Resource{Group: "other.io", Version: "v1", Kind: "Thing", Plural: "things", Schema: schema.ConfigMap()}); err != nil {
		t.Fatal(err)
	}
	doc := s.must(http.StatusOK, "GET", "/openapi/v2", nil)
	defs, _ := doc["definitions"].(map[string]any)
	def := func(name string) map[string]any {
		t.Helper()
		d, ok := defs[name].(map[string]any)
		if !ok {
			t.Fatalf("definitions: no %s", name)
		}
		return d
	}
	at := func(m map[string]any, keys ...string) any {
		var cur any = m
		for _, k := range keys {
			mm, _ := cur.(map[string]any)
			cur = mm[k]
		}
		return cur
	}

	gadget := def("com.example.v1.Gadget")
	spec := at(gadget, "properties", "spec").(map[string]any)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"group-version-kind", gadget["x-kubernetes-group-version-kind"], []any{map[string]any{"group": "example.com", "version": "v1", "kind": "Gadget"}}},
		{"metadata is a $ref", at(gadget, "properties", "metadata", "$ref"), "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
		{"anyOf dropped", at(spec, "properties", "size"), map[string]any{"x-kubernetes-int-or-string": true}},
		{"nullable loses its type", at(spec, "properties", "note"), map[string]any{}},
		{"nullable leaves required", spec["required"], []any{"size"}},
		{"list-map keys kept", at(spec, "properties", "ports", "x-kubernetes-list-map-keys"), []any{"port"}},
		{"preserve-unknown object: no type or properties", at(spec, "properties", "extra"), map[string]any{"x-kubernetes-preserve-unknown-fields": true}},
		{"preserve-unknown array: no type or items", at(spec, "properties", "anything"), map[string]any{"x-kubernetes-preserve-unknown-fields": true}},
		{"embedded resource gets kind", at(spec, "properties", "template", "properties", "kind", "type"), "string"},
		{"embedded resource requires kind", at(spec, "properties", "template", "required"), []any{"kind", "apiVersion"}},
		{"list kind", at(def("com.example.v1.GadgetList"), "properties", "items", "items", "$ref"), "#/definitions/com.example.v1.Gadget"},
		{"core kind name", def("io.k8s.api.core.v1.ConfigMap")["x-kubernetes-group-version-kind"], []any{map[string]any{"group": "", "version": "v1", "kind": "ConfigMap"}}},
		{"ObjectMeta patch strategy", at(def("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"), "properties", "ownerReferences", "x-kubernetes-patch-merge-key"), "uid"},
		{"scale kind", def("io.k8s.api.autoscaling.v1.Scale")["x-kubernetes-group-version-kind"], []any{map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				g, _ := json.Marshal(tt.got)
				w, _ := json.Marshal(tt.want)
				t.Errorf("got %s; want %s", g, w)
			}
		})
	}

	paths, _ := doc["paths"].(map[string]any)
	ops := []struct {
		path, method, action, id string
		smp                      bool // PATCH consumes strategic merge
	}{
		{"/apis/example.com/v1/namespaces/{namespace}/gadgets", "get", "list", "listExampleComV1NamespacedGadget", false},
		{"/apis/example.com/v1/namespaces/{namespace}/gadgets", "post", "post", "createExampleComV1NamespacedGadget", false},
		{"/apis/example.com/v1/namespaces/{namespace}/gadgets", "delete", "deletecollection", "deletecollectionExampleComV1NamespacedGadget", false},
		{"/apis/example.com/v1/gadgets", "get", "list", "listExampleComV1GadgetForAllNamespaces", false},
		{"/apis/example.com/v1/namespaces/{namespace}/gadgets/{name}", "get", "get", "readExampleComV1NamespacedGadget", false},
		{"/apis/example.com/v1/namespaces/{namespace}/gadgets/{name}", "patch", "patch", "patchExampleComV1NamespacedGadget", false},
		{"/apis/example.com/v1/namespaces/{namespace}/gadgets/{name}/status", "put", "put", "replaceExampleComV1NamespacedGadgetStatus", false},
		{"/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale", "patch", "patch", "patchExampleComV1NamespacedWidgetScale", false},
		{"/apis/other.io/v1/things/{name}", "patch", "patch", "patchOtherIoV1Thing", true},
		{"/api/v1/namespaces/{name}", "delete", "delete", "deleteCoreV1Namespace", false},
	}
	for _, o := range ops {
		t.Run(o.method+" "+o.path, func(t *testing.T) {
			op, ok := at(paths, o.path, o.method).(map[string]any)
			if !ok {
				t.Fatalf("paths: no %s %s", o.method, o.path)
			}
			if op["x-kubernetes-action"] != o.action || op["operationId"] != o.id {
				t.Errorf("got action %v, id %v; want %s, %s", op["x-kubernetes-action"], op["operationId"], o.action, o.id)
			}
			if o.method != "patch" {
				return
			}
			consumes, _ := op["consumes"].([]any)
			if got := slices.Contains(consumes, any("application/strategic-merge-patch+json")); got != o.smp {
				t.Errorf("consumes %v: strategic merge offered %v; want %v", consumes, got, o.smp)
			}
			params, _ := op["parameters"].([]any)
			if !slices.ContainsFunc(params, func(p any) bool { return at(p.(map[string]any), "name") == "fieldValidation" }) {
				t.Errorf("parameters %v: want fieldValidation", params)
			}
		})
	}
}
