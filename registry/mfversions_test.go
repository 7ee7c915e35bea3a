package registry_test

import (
	"encoding/base64"
	"encoding/pem"
	"net/http/httptest"
	"reflect"
	"testing"
)

// managerFields is the fieldsV1 of obj's entry of manager, and whether it
// has one.
func managerFields(obj map[string]any, manager string) (map[string]any, bool) {
	entries, _ := path(obj, "metadata.managedFields").([]any)
	for _, e := range entries {
		m := e.(map[string]any)
		if m["manager"] == manager {
			f, _ := m["fieldsV1"].(map[string]any)
			return f, true
		}
	}
	return nil, false
}

// A managedFields entry of another version is compared in its version,
// the objects converted there by the CRD's conversion webhook: spec.size
// at v1 is spec.legs at v1beta1, so a v1 write of size takes legs from a
// v1beta1 manager. With the webhook down, an update keeps the
// managedFields it had (as kube's field manager does) and an apply fails.
func TestManagedFieldsConvertedThroughWebhook(t *testing.T) {
	fail := false
	hook := httptest.NewTLSServer(converter(t, &fail))
	defer hook.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw})
	s := newServer(t)
	s.must(201, "POST", crdsPath, twoVersions(map[string]any{"strategy": "Webhook", "webhook": map[string]any{
		"conversionReviewVersions": []any{"v1"},
		"clientConfig":             map[string]any{"url": hook.URL + "/convert", "caBundle": base64.StdEncoding.EncodeToString(ca)},
	}}))
	const beta, v1 = "/apis/conv.example.org/v1beta1/namespaces/default/tables", "/apis/conv.example.org/v1/namespaces/default/tables"
	s.must(201, "POST", beta+"?fieldManager=a", tableObj("v1beta1", "t", map[string]any{"legs": 4, "color": "red"}))

	got := s.must(200, "PATCH", v1+"/t?fieldManager=b", `{"spec":{"size":5}}`, "Content-Type", "application/merge-patch+json")
	a, _ := managerFields(got, "a")
	want := map[string]any{"f:spec": map[string]any{".": map[string]any{}, "f:color": map[string]any{}}}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("a's fields (v1beta1) after b set size at v1: got %v; want %v (legs, size at v1, taken)", a, want)
	}
	if b, _ := managerFields(got, "b"); !reflect.DeepEqual(b, map[string]any{"f:spec": map[string]any{"f:size": map[string]any{}}}) {
		t.Errorf("b's fields: got %v; want spec.size", b)
	}

	fail = true
	next := s.must(200, "PATCH", v1+"/t?fieldManager=c", `{"spec":{"size":6}}`, "Content-Type", "application/merge-patch+json")
	if _, ok := managerFields(next, "c"); ok || !reflect.DeepEqual(path(next, "metadata.managedFields"), path(got, "metadata.managedFields")) {
		t.Errorf("an update with the webhook down: got managedFields %v; want the live object's %v", path(next, "metadata.managedFields"), path(got, "metadata.managedFields"))
	}
	if size := path(next, "spec.size"); size != float64(6) {
		t.Errorf("an update with the webhook down: got spec.size %v; want 6 written", size)
	}
	r := s.do("PATCH", v1+"/t?fieldManager=d", `{"apiVersion":"conv.example.org/v1","kind":"Table","metadata":{"name":"t"},"spec":{"size":7}}`, "Content-Type", "application/apply-patch+yaml")
	st := r.obj(t)
	if r.code != 500 || st["message"] != "conversion webhook for conv.example.org/v1, Kind=Table failed: the converter is broken" || st["reason"] != nil {
		t.Errorf("an apply with the webhook down: got %d %s; want 500 with the conversion's message alone, as kube answers an error that is no API status", r.code, r.body)
	}
}
