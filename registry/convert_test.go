package registry_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

// twoVersions is a CRD of v1beta1 (served, deprecated) and v1 (served,
// the storage version), with spec fields open to any value.
func twoVersions(conversion map[string]any) map[string]any {
	open := map[string]any{"x-kubernetes-preserve-unknown-fields": true, "type": "object"}
	v := func(name string, storage bool) map[string]any {
		m := crdVersion(name, true, storage, nil)
		path(m, "schema.openAPIV3Schema.properties").(map[string]any)["spec"] = open
		return m
	}
	beta := v("v1beta1", false)
	beta["deprecated"] = true
	c := crd("conv.example.org", "tables", "Table", beta, v("v1", true))
	if conversion != nil {
		c["spec"].(map[string]any)["conversion"] = conversion
	}
	return c
}

func tableObj(version, name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "conv.example.org/" + version, "kind": "Table", "metadata": map[string]any{"name": name}, "spec": spec}
}

// stored is the apiVersion of the object as stored.
func (s *server) stored(key string) string {
	s.t.Helper()
	o, err := s.store.Get(context.Background(), key, storage.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(o.Value, &m)
	return fmt.Sprint(m["apiVersion"])
}

func TestNoneConversion(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", crdsPath, twoVersions(nil))
	base := "/apis/conv.example.org/%s/namespaces/default/tables"
	created := s.do("POST", fmt.Sprintf(base, "v1beta1"), tableObj("v1beta1", "t1", map[string]any{"legs": 4}))
	if created.code != 201 || str(created.obj(t), "apiVersion") != "conv.example.org/v1beta1" {
		t.Fatalf("create through v1beta1: got %d %s", created.code, created.body)
	}
	if w := created.header.Get("Warning"); !strings.Contains(w, "conv.example.org/v1beta1 Table is deprecated; use conv.example.org/v1 Table") {
		t.Errorf("deprecation warning: got %q", w)
	}
	if got := s.stored("/conv.example.org/tables/default/t1"); got != "conv.example.org/v1" {
		t.Errorf("stored at %s; want the storage version conv.example.org/v1", got)
	}
	ws := s.watch(fmt.Sprintf(base, "v1beta1") + "?watch=true&resourceVersion=0")
	if ev := ws.next(); str(evObj(ev), "apiVersion") != "conv.example.org/v1beta1" {
		t.Errorf("v1beta1 watch: got %v", ev)
	}
	legs := 4
	for _, v := range []string{"v1", "v1beta1"} {
		t.Run("read through "+v, func(t *testing.T) {
			s.t = t
			want := "conv.example.org/" + v
			if got := s.must(200, "GET", fmt.Sprintf(base, v)+"/t1", nil); str(got, "apiVersion") != want || fmt.Sprint(path(got, "spec.legs")) != fmt.Sprint(legs) {
				t.Errorf("get: got %v; want apiVersion %s and spec.legs %d", got, want, legs)
			}
			l := s.must(200, "GET", fmt.Sprintf(base, v), nil)
			if items := l["items"].([]any); len(items) != 1 || str(items[0].(map[string]any), "apiVersion") != want {
				t.Errorf("list: got %v; want one item of %s", l["items"], want)
			}
			cur := s.must(200, "GET", fmt.Sprintf(base, v)+"/t1", nil)
			legs--
			cur["spec"].(map[string]any)["legs"] = legs
			if got := s.must(200, "PUT", fmt.Sprintf(base, v)+"/t1", cur); str(got, "apiVersion") != want {
				t.Errorf("update: got %v", got["apiVersion"])
			}
			if got := s.stored("/conv.example.org/tables/default/t1"); got != "conv.example.org/v1" {
				t.Errorf("stored at %s after an update; want conv.example.org/v1", got)
			}
		})
	}
	s.t = t
	if ev := ws.next(); evType(ev) != "MODIFIED" || str(evObj(ev), "apiVersion") != "conv.example.org/v1beta1" {
		t.Errorf("v1beta1 watch: got %v; want MODIFIED at v1beta1", ev)
	}

	// The storage version switches to v1beta1: new objects are stored
	// there, old ones stay at v1 and read through either.
	cur := s.must(200, "GET", crdsPath+"/tables.conv.example.org", nil)
	vs := path(cur, "spec.versions").([]any)
	vs[0].(map[string]any)["storage"], vs[1].(map[string]any)["storage"] = true, false
	updated := s.must(200, "PUT", crdsPath+"/tables.conv.example.org", cur)
	if got := fmt.Sprint(path(updated, "status.storedVersions")); got != "[v1 v1beta1]" {
		t.Errorf("storedVersions: got %s; want [v1 v1beta1]", got)
	}
	s.must(201, "POST", fmt.Sprintf(base, "v1"), tableObj("v1", "t2", map[string]any{}))
	if got := s.stored("/conv.example.org/tables/default/t2"); got != "conv.example.org/v1beta1" {
		t.Errorf("t2 stored at %s; want conv.example.org/v1beta1", got)
	}
	if got := s.must(200, "GET", fmt.Sprintf(base, "v1beta1")+"/t1", nil); str(got, "apiVersion") != "conv.example.org/v1beta1" {
		t.Errorf("t1 (stored at v1) through v1beta1: got %v", got["apiVersion"])
	}
}

// converter is a conversion webhook as controller-runtime's: spec.size
// at v1 is spec.legs at v1beta1.
func converter(t *testing.T, fail *bool) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		var review struct {
			Request struct {
				UID               string           `json:"uid"`
				DesiredAPIVersion string           `json:"desiredAPIVersion"`
				Objects           []map[string]any `json:"objects"`
			} `json:"request"`
		}
		if err := json.NewDecoder(req.Body).Decode(&review); err != nil {
			t.Errorf("webhook: %v", err)
		}
		result := map[string]any{"status": "Success"}
		if *fail {
			result = map[string]any{"status": "Failure", "message": "the converter is broken"}
		}
		for _, o := range review.Request.Objects {
			spec, _ := o["spec"].(map[string]any)
			switch review.Request.DesiredAPIVersion {
			case "conv.example.org/v1":
				if v, ok := spec["legs"]; ok {
					spec["size"] = v
					delete(spec, "legs")
				}
			default:
				if v, ok := spec["size"]; ok {
					spec["legs"] = v
					delete(spec, "size")
				}
			}
			o["apiVersion"] = review.Request.DesiredAPIVersion
		}
		json.NewEncoder(w).Encode(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
			"response": map[string]any{"uid": review.Request.UID, "convertedObjects": review.Request.Objects, "result": result}})
	}
}

func TestWebhookConversion(t *testing.T) {
	fail := false
	hook := httptest.NewTLSServer(converter(t, &fail))
	defer hook.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw})
	s := newServer(t)
	s.must(201, "POST", crdsPath, twoVersions(map[string]any{"strategy": "Webhook", "webhook": map[string]any{
		"conversionReviewVersions": []any{"v1"},
		"clientConfig":             map[string]any{"url": hook.URL + "/convert", "caBundle": base64.StdEncoding.EncodeToString(ca)},
	}}))
	base := "/apis/conv.example.org/%s/namespaces/default/tables"
	s.must(201, "POST", fmt.Sprintf(base, "v1beta1"), tableObj("v1beta1", "t1", map[string]any{"legs": 4}))
	o, err := s.store.Get(context.Background(), "/conv.example.org/tables/default/t1", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(o.Value), `"size":4`) || !strings.Contains(string(o.Value), `"apiVersion":"conv.example.org/v1"`) {
		t.Errorf("stored: got %s; want the webhook's v1 form (spec.size)", o.Value)
	}
	tests := []struct {
		version, field string
	}{{"v1beta1", "spec.legs"}, {"v1", "spec.size"}}
	for _, tt := range tests {
		got := s.must(200, "GET", fmt.Sprintf(base, tt.version)+"/t1", nil)
		if fmt.Sprint(path(got, tt.field)) != "4" || str(got, "metadata.name") != "t1" {
			t.Errorf("GET through %s: got %v; want %s 4", tt.version, got, tt.field)
		}
	}
	fail = true
	// A new state (written at the storage version: no conversion) read
	// through v1beta1 asks the webhook, which fails.
	s.must(201, "POST", fmt.Sprintf(base, "v1"), tableObj("v1", "t2", map[string]any{"size": 1}))
	r := s.do("GET", fmt.Sprintf(base, "v1beta1")+"/t2", nil)
	if r.code != 500 || !strings.Contains(string(r.body), "conversion webhook for conv.example.org/v1, Kind=Table failed: the converter is broken") {
		t.Errorf("GET through a failing webhook: got %d %s; want 500 naming the webhook's message", r.code, r.body)
	}
}

// A webhook whose caBundle holds no certificate keeps the CRD from being
// Established (kube's InvalidCABundle), and its kinds from being served
// (404 here; kube's handler answers 500 "error resolving resource").
func TestWebhookInvalidCABundle(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", crdsPath, twoVersions(map[string]any{"strategy": "Webhook", "webhook": map[string]any{
		"conversionReviewVersions": []any{"v1"},
		"clientConfig":             map[string]any{"url": "https://127.0.0.1:1/convert", "caBundle": base64.StdEncoding.EncodeToString([]byte("not a certificate"))},
	}}))
	got := s.must(200, "GET", crdsPath+"/tables.conv.example.org", nil)
	if c := conditions(got); !slices.Contains(c, "Established=False/InvalidCABundle") || !slices.Contains(c, "NamesAccepted=True/NoConflicts") {
		t.Errorf("conditions: got %v; want Established False (InvalidCABundle), NamesAccepted True", c)
	}
	if r := s.do("GET", "/apis/conv.example.org/v1/tables", nil); r.code != http.StatusNotFound {
		t.Errorf("list of its kind: got %d; want 404", r.code)
	}
}

// A converted object is defaulted by the schema of the version it is
// stored at and pruned by the one it is read at, which defaults nothing:
// kube's storage decoder and schemaCoercingConverter.
func TestConvertedDefaultsAndPruning(t *testing.T) {
	s := newServer(t)
	v1 := crdVersion("v1", true, false, map[string]any{"size": map[string]any{"type": "integer", "default": 1}})
	v2 := crdVersion("v2", true, true, nil)
	path(v2, "schema.openAPIV3Schema.properties").(map[string]any)["spec"] = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	s.must(201, "POST", crdsPath, crd("prune.example.org", "boxes", "Box", v1, v2))
	base := "/apis/prune.example.org/%s/namespaces/default/boxes"
	box := map[string]any{"apiVersion": "prune.example.org/v2", "kind": "Box", "metadata": map[string]any{"name": "b"}, "spec": map[string]any{"anything": 1}}
	eventually(t, "boxes served", func() bool { return s.do("POST", fmt.Sprintf(base, "v2"), box).code == 201 })
	tests := []struct {
		version string
		spec    string
	}{
		{"v1", `{}`},             // anything pruned, size not defaulted
		{"v2", `{"anything":1}`}, // as stored
	}
	for _, tt := range tests {
		got := s.must(200, "GET", fmt.Sprintf(base, tt.version)+"/b", nil)
		if b, _ := json.Marshal(got["spec"]); string(b) != tt.spec {
			t.Errorf("read at %s: spec %s; want %s", tt.version, b, tt.spec)
		}
	}
}
