package registry_test

import (
	"encoding/base64"
	"encoding/pem"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// A CRD's managers at a version no longer served (served: false) are
// compared there, as kube's field manager does (its CR converter
// converts to every version of spec.versions): an update at v1 takes
// from a v1beta1 manager the fields it sets, and an apply at v1
// conflicts with one. A version removed from spec.versions cannot be
// converted to: the update keeps the live managedFields and the apply
// answers 500 with the converter's error, as kube's.
func TestManagersAtUnservedVersion(t *testing.T) {
	fail := false
	hook := httptest.NewTLSServer(converter(t, &fail)) // size at v1 is legs at v1beta1
	defer hook.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw})
	webhook := map[string]any{"strategy": "Webhook", "webhook": map[string]any{
		"conversionReviewVersions": []any{"v1"},
		"clientConfig":             map[string]any{"url": hook.URL + "/convert", "caBundle": base64.StdEncoding.EncodeToString(ca)},
	}}
	const (
		unserve = `[{"op":"replace","path":"/spec/versions/0/served","value":false}]`
		remove  = `[{"op":"remove","path":"/spec/versions/0"}]`
	)
	spec := func(f ...string) map[string]any {
		m := map[string]any{}
		for _, x := range f {
			if x != "." {
				x = "f:" + x
			}
			m[x] = map[string]any{}
		}
		return map[string]any{"f:spec": m}
	}
	tests := []struct {
		name       string
		conversion map[string]any
		crdPatch   string
		update     string         // b's merge patch at v1
		wantA      map[string]any // a's fields (v1beta1) after b's update; nil: the live managedFields kept
		applyCode  int            // c's apply at v1 of spec.color
		applyMsg   string         // in its answer
	}{
		{name: "None, unserved", crdPatch: unserve, update: `{"spec":{"legs":5}}`,
			wantA: spec(".", "color"), applyCode: 409, applyMsg: `conflict with \"a\" using conv.example.org/v1beta1`},
		{name: "Webhook, unserved", conversion: webhook, crdPatch: unserve, update: `{"spec":{"size":5}}`,
			wantA: spec(".", "color"), applyCode: 409, applyMsg: `conflict with \"a\" using conv.example.org/v1beta1`},
		{name: "None, removed", crdPatch: remove, update: `{"spec":{"legs":5}}`,
			applyCode: 500, applyMsg: "request to convert CR to an invalid group/version: conv.example.org/v1beta1"},
		{name: "Webhook, removed", conversion: webhook, crdPatch: remove, update: `{"spec":{"size":5}}`,
			applyCode: 500, applyMsg: "request to convert CR to an invalid group/version: conv.example.org/v1beta1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			s.must(201, "POST", crdsPath, twoVersions(tc.conversion))
			const beta, v1 = "/apis/conv.example.org/v1beta1/namespaces/default/tables", "/apis/conv.example.org/v1/namespaces/default/tables"
			created := s.must(201, "POST", beta+"?fieldManager=a", tableObj("v1beta1", "t", map[string]any{"legs": 4, "color": "red"}))
			if a, _ := managerFields(created, "a"); !reflect.DeepEqual(a, spec(".", "legs", "color")) {
				t.Fatalf("a's fields after its create: got %v", a)
			}
			s.must(200, "PATCH", crdsPath+"/tables.conv.example.org", tc.crdPatch, "Content-Type", "application/json-patch+json")
			if r := s.do("GET", beta+"/t", nil); r.code != 404 {
				t.Fatalf("GET at v1beta1 once it is no longer served: got %d; want 404", r.code)
			}
			live := s.must(200, "GET", v1+"/t", nil)

			got := s.must(200, "PATCH", v1+"/t?fieldManager=b", tc.update, "Content-Type", "application/merge-patch+json")
			if tc.wantA == nil {
				if mf := path(got, "metadata.managedFields"); !reflect.DeepEqual(mf, path(live, "metadata.managedFields")) {
					t.Errorf("managedFields after b's update: got %v; want the live object's %v", mf, path(live, "metadata.managedFields"))
				}
			} else {
				if a, _ := managerFields(got, "a"); !reflect.DeepEqual(a, tc.wantA) {
					t.Errorf("a's fields (v1beta1) after b's update at v1: got %v; want %v", a, tc.wantA)
				}
				if _, ok := managerFields(got, "b"); !ok {
					t.Errorf("b has no managedFields entry after its update: %v", path(got, "metadata.managedFields"))
				}
			}

			r := s.do("PATCH", v1+"/t?fieldManager=c", `{"apiVersion":"conv.example.org/v1","kind":"Table","metadata":{"name":"t"},"spec":{"color":"blue"}}`, "Content-Type", "application/apply-patch+yaml")
			if r.code != tc.applyCode || !strings.Contains(string(r.body), tc.applyMsg) {
				t.Errorf("c's apply at v1 of spec.color: got %d %s; want %d with %q", r.code, r.body, tc.applyCode, tc.applyMsg)
			}
		})
	}
}

// An object stored at a version no longer served is defaulted by that
// version's schema before it is converted, as kube's storage decoder
// does: color's default, added to v1beta1 (the storage version) as it
// stops being served, fills the object stored without it when read at
// v1, and is written back by the next update; v1's own schema has no
// default.
func TestStoredAtUnservedVersionDefaulted(t *testing.T) {
	props := map[string]any{"size": map[string]any{"type": "integer"}, "color": map[string]any{"type": "string"}}
	s := newServer(t)
	s.must(201, "POST", crdsPath, crd("unserved.example.org", "pairs", "Pair", crdVersion("v1beta1", true, true, props), crdVersion("v1", true, false, props)))
	const beta, v1 = "/apis/unserved.example.org/v1beta1/namespaces/default/pairs", "/apis/unserved.example.org/v1/namespaces/default/pairs"
	s.must(201, "POST", beta, map[string]any{"apiVersion": "unserved.example.org/v1beta1", "kind": "Pair", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{"size": 1}})
	s.must(200, "PATCH", crdsPath+"/pairs.unserved.example.org", `[{"op":"replace","path":"/spec/versions/0/served","value":false},`+
		`{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/color/default","value":"green"}]`, "Content-Type", "application/json-patch+json")
	for _, step := range []struct {
		method string
		body   any
	}{{"GET", nil}, {"PATCH", `{"spec":{"size":2}}`}} {
		got := s.must(200, step.method, v1+"/p", step.body, "Content-Type", "application/merge-patch+json")
		if c := path(got, "spec.color"); c != "green" {
			t.Errorf("%s at v1: got spec.color %v; want v1beta1's default green", step.method, c)
		}
	}
}
