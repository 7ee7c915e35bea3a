package registry_test

import (
	"testing"
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
	// served; example.com is the test's.
	if apis["kind"] != "APIGroupList" || len(groups) != 6 || str(groups[4].(map[string]any), "name") != "example.com" ||
		str(groups[4].(map[string]any), "preferredVersion.groupVersion") != "example.com/v1" {
		t.Errorf("/apis: got %v", apis)
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
	g := items[4].(map[string]any)
	res := path(g, "versions").([]any)[0].(map[string]any)["resources"].([]any)[0].(map[string]any)
	if str(g, "metadata.name") != "example.com" || res["resource"] != "widgets" || res["scope"] != "Namespaced" || str(res, "responseKind.kind") != "Widget" {
		t.Errorf("group: got %v", g)
	}
	subs := res["subresources"].([]any)
	if len(subs) != 2 || str(subs[1].(map[string]any), "responseKind.kind") != "Scale" {
		t.Errorf("subresources: got %v", subs)
	}
	core := s.do("GET", "/api", nil, "Accept", accept).obj(t)
	if len(core["items"].([]any)) != 1 {
		t.Errorf("/api aggregated: got %v", core)
	}
	if r := s.do("GET", "/apis", nil, "Accept", "application/vnd.kubernetes.protobuf"); r.code != 406 {
		t.Errorf("protobuf-only accept: got %d; want 406", r.code)
	}
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
