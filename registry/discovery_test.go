package registry_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/codec/cbor"
	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry"
)

func TestDiscovery(t *testing.T) {
	s := newServer(t)
	api := s.must(200, "GET", "/api", nil)
	if api["kind"] != "APIVersions" || path(api, "versions").([]any)[0] != "v1" {
		t.Errorf("/api: got %v", api)
	}
	apis := s.must(200, "GET", "/apis", nil)
	groups := apis["groups"].([]any)
	// The webhook configuration, CRD, review and RBAC groups are always
	// served, in kube's group priority order; example.com, the test's,
	// comes last, at a CRD's priority.
	var names []string
	for _, g := range groups {
		names = append(names, str(g.(map[string]any), "name"))
	}
	want := []string{"authentication.k8s.io", "authorization.k8s.io", "rbac.authorization.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io", "example.com"}
	if apis["kind"] != "APIGroupList" || !reflect.DeepEqual(names, want) || str(groups[5].(map[string]any), "preferredVersion.groupVersion") != "example.com/v1" {
		t.Errorf("/apis: got %v; want the groups %v", apis, want)
	}
	reviews := s.must(200, "GET", "/apis/authorization.k8s.io/v1", nil)
	for _, r := range reviews["resources"].([]any) {
		if m := r.(map[string]any); len(m["verbs"].([]any)) != 1 || m["verbs"].([]any)[0] != "create" {
			t.Errorf("/apis/authorization.k8s.io/v1: %v; want create as its only verb", m)
		}
	}
	g := s.must(200, "GET", "/apis/example.com", nil)
	if g["kind"] != "APIGroup" || g["name"] != "example.com" {
		t.Errorf("/apis/example.com: got %v", g)
	}
	rl := s.must(200, "GET", "/apis/example.com/v1", nil)
	byName := map[string]map[string]any{}
	for _, r := range rl["resources"].([]any) {
		m := r.(map[string]any)
		byName[m["name"].(string)] = m
	}
	w := byName["widgets"]
	if rl["groupVersion"] != "example.com/v1" || w == nil || w["kind"] != "Widget" || w["namespaced"] != true || w["singularName"] != "widget" ||
		len(w["verbs"].([]any)) != 8 || w["shortNames"].([]any)[0] != "wd" {
		t.Errorf("/apis/example.com/v1 widgets: got %v", w)
	}
	if byName["widgets/status"] == nil || byName["widgets/scale"] == nil || byName["widgets/scale"]["kind"] != "Scale" || byName["widgets/scale"]["group"] != "autoscaling" {
		t.Errorf("subresources: got status %v scale %v", byName["widgets/status"], byName["widgets/scale"])
	}
	core := s.must(200, "GET", "/api/v1", nil)
	found := map[string]bool{}
	for _, r := range core["resources"].([]any) {
		found[r.(map[string]any)["name"].(string)] = true
	}
	if !found["namespaces"] || !found["configmaps"] {
		t.Errorf("/api/v1: got %v; want namespaces and configmaps", found)
	}
	for _, p := range []string{"/version", "/healthz", "/livez", "/readyz"} {
		if r := s.do("GET", p, nil); r.code != 200 {
			t.Errorf("%s: got %d", p, r.code)
		}
	}
}

func TestAggregatedDiscovery(t *testing.T) {
	s := newServer(t)
	accept := "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
	r := s.do("GET", "/apis", nil, "Accept", accept)
	if r.code != 200 || r.header.Get("Content-Type") != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" {
		t.Fatalf("got %d %q; want the aggregated v2 content type", r.code, r.header.Get("Content-Type"))
	}
	m := r.obj(t)
	items := m["items"].([]any)
	if m["kind"] != "APIGroupDiscoveryList" || len(items) != 6 {
		t.Fatalf("got %v", m)
	}
	g := items[5].(map[string]any)
	res := path(g, "versions").([]any)[0].(map[string]any)["resources"].([]any)[0].(map[string]any)
	if str(g, "metadata.name") != "example.com" || res["resource"] != "widgets" || res["scope"] != "Namespaced" ||
		!reflect.DeepEqual(res["responseKind"], map[string]any{"group": "", "version": "", "kind": "Widget"}) { // a built-in kind's (not Custom)
		t.Errorf("group: got %v", g)
	}
	subs := res["subresources"].([]any)
	if len(subs) != 2 || str(subs[0].(map[string]any), "responseKind.kind") != "Scale" { // a built-in kind's in name order
		t.Errorf("subresources: got %v", subs)
	}
	core := s.do("GET", "/api", nil, "Accept", accept).obj(t)
	if len(core["items"].([]any)) != 1 {
		t.Errorf("/api aggregated: got %v", core)
	}
}

// TestDiscoveryNegotiation: every discovery document in each format kube
// offers for it, each form holding the JSON document's content; the
// aggregated list when asked for by its parameters, the legacy document
// otherwise; kube's 406s (go-restful's for /api and built-in group
// versions, its negotiation's elsewhere; no CBOR for a custom resource's
// group version).
func TestDiscoveryNegotiation(t *testing.T) {
	gadgets := &registry.Resource{Group: "custom.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true, Custom: true}
	s := newServer(t, gadgets)
	const (
		agg     = ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
		pb      = "application/vnd.kubernetes.protobuf"
		restful = "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"
		all     = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"
		noCBOR  = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	)
	tests := []struct {
		path, accept string
		code         int
		ctype        string // the answer's Content-Type, or the 406's message
		kind         string // the document's kind
	}{
		{"/apis", "", 200, "application/json", "APIGroupList"},
		{"/apis", "*/*", 200, "application/json", "APIGroupList"},
		{"/apis", pb, 200, pb, "APIGroupList"},
		{"/apis", "application/yaml", 200, "application/yaml", "APIGroupList"},
		{"/apis", "application/cbor", 200, "application/cbor", "APIGroupList"},
		{"/apis", "application/json;q=0.5," + pb, 200, pb, "APIGroupList"},
		{"/apis", "application/json" + agg, 200, "application/json" + agg, "APIGroupDiscoveryList"},
		{"/apis", "application/json," + "application/json" + agg, 200, "application/json" + agg, "APIGroupDiscoveryList"},
		{"/apis", "application/json" + agg + ";profile=nopeer", 200, "application/json" + agg, "APIGroupDiscoveryList"},
		{"/apis", pb + agg, 200, pb + agg, "APIGroupDiscoveryList"},
		{"/apis", "application/yaml" + agg, 200, "application/yaml" + agg, "APIGroupDiscoveryList"},
		{"/apis", "application/cbor" + agg, 200, "application/cbor" + agg, "APIGroupDiscoveryList"},
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", 406, all, ""},
		{"/apis", "application/json;as=APIGroupDiscoveryList", 406, all, ""},
		{"/apis", "text/html", 406, all, ""},
		{"/api", pb, 200, pb, "APIVersions"},
		{"/api", "application/cbor", 200, "application/cbor", "APIVersions"},
		{"/api", pb + agg, 200, pb + agg, "APIGroupDiscoveryList"},
		{"/api", "application/*", 406, restful, ""},
		{"/api", "application/json;as=Table;v=v1;g=meta.k8s.io", 406, all, ""},
		{"/api/v1", "application/yaml", 200, "application/yaml", "APIResourceList"},
		{"/api/v1", pb, 200, pb, "APIResourceList"},
		{"/api/v1", "application/*", 406, restful, ""},
		{"/api/v1", "application/json" + agg, 406, all, ""},
		{"/apis/example.com", pb, 200, pb, "APIGroup"},
		{"/apis/example.com", "application/cbor", 200, "application/cbor", "APIGroup"},
		{"/apis/example.com", "application/*", 200, "application/json", "APIGroup"},
		{"/apis/example.com", "text/html", 406, all, ""},
		{"/apis/example.com/v1", "application/cbor", 200, "application/cbor", "APIResourceList"},
		{"/apis/custom.example.com/v1", pb, 200, pb, "APIResourceList"},
		{"/apis/custom.example.com/v1", "application/*", 200, "application/json", "APIResourceList"},
		{"/apis/custom.example.com/v1", "application/cbor", 406, noCBOR, ""},
		{"/apis/custom.example.com/v1", "text/html", 406, noCBOR, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path+" as "+tt.accept, func(t *testing.T) {
			r := s.do("GET", tt.path, nil, "Accept", tt.accept)
			if r.code != tt.code {
				t.Fatalf("got %d %s; want %d", r.code, r.body, tt.code)
			}
			if tt.code != 200 {
				if m := r.obj(t); m["message"] != strings.ReplaceAll(tt.ctype, "\\n", "\n") || m["reason"] != "NotAcceptable" {
					t.Errorf("got %v; want NotAcceptable: %q", m, tt.ctype)
				}
				return
			}
			if got := r.header.Get("Content-Type"); got != tt.ctype {
				t.Errorf("Content-Type: got %q; want %q", got, tt.ctype)
			}
			// The same document as JSON, asked for as kube's clients do.
			jsonAccept := "application/json"
			if tt.kind == "APIGroupDiscoveryList" {
				jsonAccept += agg
			}
			want := s.do("GET", tt.path, nil, "Accept", jsonAccept).obj(t)
			if want["kind"] != tt.kind {
				t.Fatalf("JSON document: got kind %v; want %s", want["kind"], tt.kind)
			}
			if got := decodeDiscovery(t, r.header.Get("Content-Type"), tt.kind, r.body); !reflect.DeepEqual(jsonRoundTrip(t, got), want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
		})
	}
}

// decodeDiscovery decodes a discovery document of kind in the format of
// ctype into its JSON form.
func decodeDiscovery(t *testing.T, ctype, kind string, b []byte) any {
	t.Helper()
	mt, _, _ := strings.Cut(ctype, ";")
	switch mt {
	case "application/json":
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	case "application/yaml":
		j, err := codec.YAMLToJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		return decodeDiscovery(t, "application/json", kind, j)
	case "application/cbor":
		if !bytes.HasPrefix(b, []byte(cbor.SelfDescribed)) {
			t.Fatalf("CBOR without the self-described tag: % x", b[:min(len(b), 8)])
		}
		m, err := cbor.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tm, raw, err := protobuf.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if tm.Kind != kind {
		t.Fatalf("envelope: got kind %q; want %s", tm.Kind, kind)
	}
	md, err := protobuf.Files.FindDescriptorByName(protoreflect.FullName(discoveryMessageNames[kind]))
	if err != nil {
		t.Fatal(err)
	}
	m, err := protobuf.Unmarshal(md.(protoreflect.MessageDescriptor), raw)
	if err != nil {
		t.Fatal(err)
	}
	if tm.APIVersion != "" {
		m["apiVersion"] = tm.APIVersion
	}
	m["kind"] = tm.Kind
	return m
}

var discoveryMessageNames = map[string]string{
	"APIVersions":           "k8s.io.apimachinery.pkg.apis.meta.v1.APIVersions",
	"APIGroupList":          "k8s.io.apimachinery.pkg.apis.meta.v1.APIGroupList",
	"APIGroup":              "k8s.io.apimachinery.pkg.apis.meta.v1.APIGroup",
	"APIResourceList":       "k8s.io.apimachinery.pkg.apis.meta.v1.APIResourceList",
	"APIGroupDiscoveryList": "k8s.io.api.apidiscovery.v2.APIGroupDiscoveryList",
}

// jsonRoundTrip is v as encoding/json decodes its JSON.
func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenAPIV3(t *testing.T) {
	s := newServer(t)
	idx := s.must(200, "GET", "/openapi/v3", nil)
	p, _ := path(idx, "paths").(map[string]any)["apis/example.com/v1"].(map[string]any)
	url, _ := p["serverRelativeURL"].(string)
	if url == "" {
		t.Fatalf("index: got %v; want a document for apis/example.com/v1", idx)
	}
	doc := s.must(200, "GET", url, nil)
	patch, _ := path(doc, "paths").(map[string]any)["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"].(map[string]any)["patch"].(map[string]any)
	if str(patch, "x-kubernetes-group-version-kind.kind") != "Widget" {
		t.Errorf("patch operation: got %v; want the Widget GVK", patch)
	}
	found := false
	for _, prm := range patch["parameters"].([]any) {
		found = found || prm.(map[string]any)["name"] == "fieldValidation"
	}
	if !found {
		t.Error("patch operation has no fieldValidation parameter")
	}
	schemas := path(doc, "components.schemas").(map[string]any)
	if w, _ := schemas["com.example.v1.Widget"].(map[string]any); w == nil || path(w, "properties.spec") == nil && w["x-kubernetes-preserve-unknown-fields"] != true {
		t.Errorf("Widget schema: got %v", schemas["com.example.v1.Widget"])
	}
	if r := s.do("GET", "/openapi/v3/apis/nope.io/v1", nil); r.code != 404 {
		t.Errorf("unknown group version: got %d; want 404", r.code)
	}
}
