package registry_test

import (
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

// The 406s kube-apiserver answers, in its words: go-restful's route check
// for built-in kinds, kube's negotiation for custom resources and for what
// the route lets through, the stream types for a YAML watch, and the
// transform's for a PartialObjectMetadata(List) of the wrong endpoint.
func TestNotAcceptable(t *testing.T) {
	gizmos := &registry.Resource{Group: "example.com", Version: "v1", Kind: "Gizmo", Plural: "gizmos", Namespaced: true, Custom: true}
	s := newServer(t, gizmos)
	s.must(201, "POST", "/api/v1/namespaces/default/configmaps", map[string]any{"metadata": map[string]any{"name": "c"}})
	s.must(201, "POST", "/apis/example.com/v1/namespaces/default/gizmos", map[string]any{"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": map[string]any{"name": "g"}})
	const (
		cm      = "/api/v1/namespaces/default/configmaps"
		gz      = "/apis/example.com/v1/namespaces/default/gizmos"
		objects = "application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"
	)
	tests := []struct {
		name, path, accept string
		code               int
		contentType        string
		message            string
		details            bool // an empty details, as go-restful's Status has
	}{
		{"built-in, no route match", cm + "/c", "text/html", 406, "application/json",
			"406: Not Acceptable\n\nAvailable representations: " + objects, true},
		{"built-in list, no route match", cm, "text/html", 406, "application/json",
			"406: Not Acceptable\n\nAvailable representations: " + objects + ", application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq", true},
		{"built-in, route match is exact", cm + "/c", "Application/JSON", 406, "application/json",
			"406: Not Acceptable\n\nAvailable representations: " + objects, true},
		{"built-in, unknown as", cm + "/c", "application/json;as=Nope;v=v1;g=meta.k8s.io", 406, "application/json",
			"only the following media types are accepted: application/json, application/yaml, application/cbor", false},
		{"custom resource lists protobuf", gz + "/g", "text/html", 406, "application/json",
			"only the following media types are accepted: " + objects, false},
		{"watch in YAML", cm + "?watch=true", "application/yaml", 406, "application/yaml",
			"only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq", false},
		{"partial list of an object", cm + "/c", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", 406, "application/json",
			"you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)", false},
		{"partial object of a list", cm, "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", 406, "application/json",
			"you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)", false},
		{"partial object of a custom resource list", gz, "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", 406, "application/json",
			"you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)", false},
		{"partial object of a missing object is a 404 first", cm + "/nope", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", 404, "application/json",
			`configmaps "nope" not found`, true},
		{"no CBOR Table", cm, "application/cbor;as=Table;v=v1;g=meta.k8s.io", 406, "application/json",
			"only the following media types are accepted: application/json, application/yaml, application/cbor", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do("GET", tt.path, nil, "Accept", tt.accept)
			if r.code != tt.code || r.header.Get("Content-Type") != tt.contentType {
				t.Fatalf("got %d %s; want %d %s: %s", r.code, r.header.Get("Content-Type"), tt.code, tt.contentType, r.body)
			}
			if tt.contentType == "application/yaml" {
				if !strings.Contains(string(r.body), "code: 406") || !strings.Contains(strings.Join(strings.Fields(string(r.body)), " "), strings.Join(strings.Fields(tt.message), " ")) {
					t.Errorf("got %s; want a YAML Status saying %q", r.body, tt.message)
				}
				return
			}
			st := r.obj(t)
			if st["message"] != tt.message {
				t.Errorf("message %q; want %q", st["message"], tt.message)
			}
			if _, ok := st["details"]; ok != tt.details {
				t.Errorf("details present %v; want %v: %s", ok, tt.details, r.body)
			}
		})
	}
}

// A 415 from kube's negotiation carries no details; a custom resource's
// lists protobuf, as kube's custom resource serializer does.
func TestUnsupportedMediaType(t *testing.T) {
	gizmos := &registry.Resource{Group: "example.com", Version: "v1", Kind: "Gizmo", Plural: "gizmos", Namespaced: true, Custom: true}
	s := newServer(t, gizmos)
	tests := []struct {
		path, message string
	}{
		{"/api/v1/namespaces/default/configmaps", "application/json, application/yaml, application/cbor"},
		{"/apis/example.com/v1/namespaces/default/gizmos", "application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"},
	}
	for _, tt := range tests {
		r := s.do("POST", tt.path, "hello", "Content-Type", "text/plain")
		st := r.obj(t)
		if want := "the body of the request was in an unknown format - accepted media types include: " + tt.message; r.code != 415 || st["message"] != want {
			t.Errorf("%s: got %d %q; want 415 %q", tt.path, r.code, st["message"], want)
		}
		if _, ok := st["details"]; ok {
			t.Errorf("%s: details %v; want none", tt.path, st["details"])
		}
	}
}
