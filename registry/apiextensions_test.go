package registry_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/memory"
)

const crdsPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// crdVersion is a spec.versions entry whose spec has the given
// properties (name → type).
func crdVersion(name string, served, storage bool, props map[string]any) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	return map[string]any{
		"name": name, "served": served, "storage": storage,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"spec":   map[string]any{"type": "object", "properties": props},
				"status": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
			},
		}},
		"subresources": map[string]any{"status": map[string]any{}},
	}
}

func crd(group, plural, kind string, versions ...map[string]any) map[string]any {
	vs := make([]any, len(versions))
	for i, v := range versions {
		vs[i] = v
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names":    map[string]any{"plural": plural, "kind": kind, "shortNames": []any{plural[:2]}, "categories": []any{"all"}},
			"versions": vs,
		},
	}
}

// conditions are a CRD's conditions as "Type=Status/Reason".
func conditions(obj map[string]any) []string {
	var out []string
	l, _ := path(obj, "status.conditions").([]any)
	for _, c := range l {
		m := c.(map[string]any)
		out = append(out, fmt.Sprintf("%s=%s/%s", m["type"], m["status"], m["reason"]))
	}
	slices.Sort(out)
	return out
}

func TestCRDLifecycle(t *testing.T) {
	s := newServer(t)
	props := map[string]any{"size": map[string]any{"type": "integer"}}
	body := crd("stable.example.org", "crontabs", "CronTab", crdVersion("v1", true, true, props))
	created := s.must(201, "POST", crdsPath, body)
	if got := path(created, "status.storedVersions"); fmt.Sprint(got) != "[v1]" {
		t.Errorf("storedVersions on create: got %v; want [v1]", got)
	}
	if got := str(created, "spec.names.listKind") + " " + str(created, "spec.names.singular") + " " + str(created, "spec.conversion.strategy"); got != "CronTabList crontab None" {
		t.Errorf("defaults: got %q; want %q", got, "CronTabList crontab None")
	}
	// Served at once: the create's response is sent once it is.
	ct := "/apis/stable.example.org/v1/namespaces/default/crontabs"
	s.must(201, "POST", ct, map[string]any{"apiVersion": "stable.example.org/v1", "kind": "CronTab", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"size": 3}})
	got := s.must(200, "GET", crdsPath+"/crontabs.stable.example.org", nil)
	if c := conditions(got); !slices.Equal(c, []string{"Established=True/InitialNamesAccepted", "NamesAccepted=True/NoConflicts"}) {
		t.Errorf("conditions: got %v", c)
	}
	if str(got, "status.acceptedNames.kind") != "CronTab" || str(got, "status.acceptedNames.plural") != "crontabs" {
		t.Errorf("acceptedNames: got %v", path(got, "status.acceptedNames"))
	}
	agg := s.must(200, "GET", "/apis", nil, "Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	if !strings.Contains(fmt.Sprint(agg), "categories:[all] resource:crontabs") || !strings.Contains(fmt.Sprint(agg), "shortNames:[cr]") {
		t.Errorf("aggregated discovery lacks crontabs' categories or short names: %v", agg)
	}

	steps := []struct {
		name   string
		edit   func(spec map[string]any)
		check  func(t *testing.T)
		stored string // status.storedVersions after the step
	}{
		{"schema tightened", func(spec map[string]any) {
			v := spec["versions"].([]any)[0].(map[string]any)
			p := path(v, "schema.openAPIV3Schema.properties.spec.properties.size").(map[string]any)
			p["maximum"] = int64(5)
		}, func(t *testing.T) {
			r := s.do("POST", ct, map[string]any{"apiVersion": "stable.example.org/v1", "kind": "CronTab", "metadata": map[string]any{"name": "b"}, "spec": map[string]any{"size": 9}})
			if r.code != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), "spec.size") {
				t.Errorf("create over the new maximum: got %d %s; want 422 on spec.size", r.code, r.body)
			}
		}, "[v1]"},
		{"printer column added", func(spec map[string]any) {
			v := spec["versions"].([]any)[0].(map[string]any)
			v["additionalPrinterColumns"] = []any{map[string]any{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}}
		}, func(t *testing.T) {
			tab := s.must(200, "GET", ct, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
			if cols := fmt.Sprint(tab["columnDefinitions"]); !strings.Contains(cols, "name:Size") {
				t.Errorf("table columns: got %v; want Size", cols)
			}
		}, "[v1]"},
		{"version v2 added, storage", func(spec map[string]any) {
			v1 := spec["versions"].([]any)[0].(map[string]any)
			v1["storage"] = false
			spec["versions"] = append(spec["versions"].([]any), crdVersion("v2", true, true, props))
		}, func(t *testing.T) {
			s.must(200, "GET", "/apis/stable.example.org/v2/namespaces/default/crontabs/a", nil)
			if g := s.must(200, "GET", "/apis/stable.example.org", nil); str(g, "preferredVersion.version") != "v2" {
				t.Errorf("preferred version: got %v; want v2", g)
			}
		}, "[v1 v2]"},
		{"v2 without its status subresource, with a selectable field", func(spec map[string]any) {
			v2 := spec["versions"].([]any)[1].(map[string]any)
			delete(v2, "subresources")
			v2["selectableFields"] = []any{map[string]any{"jsonPath": ".spec.size"}}
		}, func(t *testing.T) {
			if r := s.do("GET", "/apis/stable.example.org/v2/namespaces/default/crontabs/a/status", nil); r.code != http.StatusNotFound {
				t.Errorf("GET v2 status: got %d; want 404", r.code)
			}
			// Objects written before the change (a) are selectable by the
			// new field as those written after it (d), as in kube.
			s.must(201, "POST", "/apis/stable.example.org/v2/namespaces/default/crontabs", map[string]any{"apiVersion": "stable.example.org/v2", "kind": "CronTab", "metadata": map[string]any{"name": "d"}, "spec": map[string]any{"size": 3}})
			s.must(201, "POST", "/apis/stable.example.org/v2/namespaces/default/crontabs", map[string]any{"apiVersion": "stable.example.org/v2", "kind": "CronTab", "metadata": map[string]any{"name": "e"}, "spec": map[string]any{"size": 4}})
			l := s.must(200, "GET", "/apis/stable.example.org/v2/namespaces/default/crontabs?fieldSelector=spec.size%3D3", nil)
			var names []string
			for _, it := range l["items"].([]any) {
				names = append(names, str(it.(map[string]any), "metadata.name"))
			}
			if fmt.Sprint(names) != "[a d]" {
				t.Errorf("list by the new selectable field: got %v; want [a d]", names)
			}
			s.must(200, "DELETE", "/apis/stable.example.org/v2/namespaces/default/crontabs/e", nil)
			if r := s.do("GET", "/apis/stable.example.org/v1/namespaces/default/crontabs?fieldSelector=spec.size%3D3", nil); r.code != http.StatusBadRequest {
				t.Errorf("list by spec.size through v1, where it is not selectable: got %d; want 400", r.code)
			}
		}, "[v1 v2]"},
		{"v1 no longer served", func(spec map[string]any) {
			spec["versions"].([]any)[0].(map[string]any)["served"] = false
		}, func(t *testing.T) {
			if r := s.do("GET", "/apis/stable.example.org/v1/namespaces/default/crontabs/a", nil); r.code != http.StatusNotFound {
				t.Errorf("GET through v1: got %d; want 404", r.code)
			}
		}, "[v1 v2]"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			s.t = t
			cur := s.must(200, "GET", crdsPath+"/crontabs.stable.example.org", nil)
			st.edit(cur["spec"].(map[string]any))
			out := s.must(200, "PUT", crdsPath+"/crontabs.stable.example.org", cur)
			if got := fmt.Sprint(path(out, "status.storedVersions")); got != st.stored {
				t.Errorf("storedVersions: got %s; want %s", got, st.stored)
			}
			st.check(t)
		})
	}

	t.Run("delete", func(t *testing.T) {
		s.t = t
		w := s.watch("/apis/stable.example.org/v2/crontabs?watch=true&resourceVersion=0")
		if ev := w.next(); evType(ev) != "ADDED" {
			t.Fatalf("first event: got %v; want ADDED", ev)
		}
		del := s.must(200, "DELETE", crdsPath+"/crontabs.stable.example.org", nil)
		if !slices.Contains(stringsOf(path(del, "metadata.finalizers")), "customresourcecleanup.apiextensions.k8s.io") || str(del, "metadata.deletionTimestamp") == "" {
			t.Errorf("DELETE's answer: got finalizers %v, deletionTimestamp %q; want the cleanup finalizer and a timestamp", path(del, "metadata.finalizers"), str(del, "metadata.deletionTimestamp"))
		}
		if c := conditions(del); !slices.Contains(c, "Terminating=True/InstanceDeletionPending") {
			t.Errorf("DELETE's conditions: got %v", c)
		}
		if ev := w.next(); evType(ev) != "ADDED" {
			t.Fatalf("second event: got %v; want ADDED", ev)
		}
		for _, name := range []string{"a", "d"} {
			if ev := w.next(); evType(ev) != "DELETED" || str(evObj(ev), "metadata.name") != name {
				t.Errorf("the watch: got %v; want the instance %s DELETED", ev, name)
			}
		}
		if !w.ended() {
			t.Error("the watch on the deleted CRD's kind goes on; want it ended")
		}
		// Polled without pause: the first answer that reads the CRD as
		// gone is followed by its kind not served, never by a window in
		// which it is served as terminating.
		for deadline := time.Now().Add(5 * time.Second); s.do("GET", crdsPath+"/crontabs.stable.example.org", nil).code != http.StatusNotFound; {
			if time.Now().After(deadline) {
				t.Fatal("the CRD is not gone within 5s")
			}
		}
		if r := s.do("POST", ct, map[string]any{"apiVersion": "stable.example.org/v2", "kind": "CronTab", "metadata": map[string]any{"name": "late"}}); r.code != http.StatusNotFound {
			t.Errorf("create after the delete: got %d %s; want 404", r.code, r.body)
		}
		if r := s.do("GET", ct, nil); r.code != http.StatusNotFound {
			t.Errorf("list after the delete: got %d; want 404", r.code)
		}
		if got := s.discoveredKinds("stable.example.org/v2"); got != nil {
			t.Errorf("discovery after the delete: got %v", got)
		}
	})
}

func stringsOf(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5s")
}

func TestCRDNameConflict(t *testing.T) {
	s := newServer(t)
	v1 := crdVersion("v1", true, true, nil)
	s.must(201, "POST", crdsPath, crd("conflict.example.org", "foos", "Foo", v1))
	tests := []struct {
		name, plural, kind string
		edit               func(names map[string]any)
		want               string // NamesAccepted's status/reason
		message            string
	}{
		{"kind taken (and so its list kind: kube reports the last)", "bars", "Foo", nil, "False/ListKindConflict", `"FooList" is already in use`},
		{"kind taken", "bors", "Bor", func(n map[string]any) { n["kind"], n["listKind"] = "Foo", "BorList" }, "False/KindConflict", `"Foo" is already in use`},
		{"short name taken", "bazs", "Baz", func(n map[string]any) { n["shortNames"] = []any{"fo"} }, "False/ShortNamesConflict", `"fo" is already in use`},
		{"singular taken", "quxs", "Qux", func(n map[string]any) { n["singular"] = "foos" }, "False/SingularConflict", `"foos" is already in use`},
		{"no conflict", "zaps", "Zap", nil, "True/NoConflicts", "no conflicts found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.t = t
			body := crd("conflict.example.org", tt.plural, tt.kind, v1)
			if tt.edit != nil {
				tt.edit(path(body, "spec.names").(map[string]any))
			}
			s.must(201, "POST", crdsPath, body)
			got := s.must(200, "GET", crdsPath+"/"+tt.plural+".conflict.example.org", nil)
			var cond map[string]any
			for _, c := range path(got, "status.conditions").([]any) {
				if c.(map[string]any)["type"] == "NamesAccepted" {
					cond = c.(map[string]any)
				}
			}
			if cond == nil || fmt.Sprintf("%s/%s", cond["status"], cond["reason"]) != tt.want || cond["message"] != tt.message {
				t.Fatalf("NamesAccepted: got %v; want %s %q", cond, tt.want, tt.message)
			}
			served := s.do("GET", "/apis/conflict.example.org/v1/"+tt.plural, nil).code == http.StatusOK
			if served != strings.HasPrefix(tt.want, "True") {
				t.Errorf("kind served: got %v; want %v", served, !served)
			}
		})
	}
}

func TestCRDInvalid(t *testing.T) {
	s := newServer(t)
	good := func() map[string]any {
		return crd("bad.example.org", "things", "Thing", crdVersion("v1", true, true, nil))
	}
	tests := []struct {
		name   string
		edit   func(c map[string]any)
		causes []string // "field: type"
	}{
		{"name not plural.group", func(c map[string]any) { c["metadata"].(map[string]any)["name"] = "other.bad.example.org" },
			[]string{"metadata.name: FieldValueInvalid"}},
		{"group without a dot", func(c map[string]any) {
			c["spec"].(map[string]any)["group"] = "bad"
			c["metadata"].(map[string]any)["name"] = "things.bad"
		}, []string{"spec.group: FieldValueInvalid"}},
		{"bad scope", func(c map[string]any) { c["spec"].(map[string]any)["scope"] = "Galaxy" }, []string{"spec.scope: FieldValueNotSupported"}},
		{"no storage version", func(c map[string]any) {
			path(c, "spec.versions").([]any)[0].(map[string]any)["storage"] = false
		}, []string{"spec.versions: FieldValueInvalid", "status.storedVersions: FieldValueInvalid"}},
		{"bad version name", func(c map[string]any) {
			path(c, "spec.versions").([]any)[0].(map[string]any)["name"] = "V1"
		}, []string{"spec.versions[0].name: FieldValueInvalid", "spec.version: FieldValueInvalid"}},
		{"non-structural schema: a property without type", func(c map[string]any) {
			v := path(c, "spec.versions").([]any)[0].(map[string]any)
			path(v, "schema.openAPIV3Schema.properties").(map[string]any)["spec"] = map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}}
		}, []string{"spec.validation.openAPIV3Schema.properties[spec].type: FieldValueRequired"}},
		{"kind equals listKind", func(c map[string]any) { path(c, "spec.names").(map[string]any)["listKind"] = "Thing" },
			[]string{"spec.names.listKind: FieldValueInvalid"}},
		{"bad column type", func(c map[string]any) {
			path(c, "spec.versions").([]any)[0].(map[string]any)["additionalPrinterColumns"] = []any{map[string]any{"name": "X", "type": "color", "jsonPath": ".spec.x"}}
		}, []string{"spec.additionalPrinterColumns[0].type: FieldValueInvalid"}},
		{"webhook conversion without a client config", func(c map[string]any) {
			c["spec"].(map[string]any)["conversion"] = map[string]any{"strategy": "Webhook", "webhook": map[string]any{"conversionReviewVersions": []any{"v1"}}}
		}, []string{"spec.conversion.webhookClientConfig: FieldValueRequired"}},
		{"protected group without approval", func(c map[string]any) {
			c["spec"].(map[string]any)["group"] = "x.k8s.io"
			c["metadata"].(map[string]any)["name"] = "things.x.k8s.io"
		}, []string{"metadata.annotations[api-approved.kubernetes.io]: FieldValueRequired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.t = t
			c := good()
			tt.edit(c)
			r := s.do("POST", crdsPath, c)
			if r.code != http.StatusUnprocessableEntity {
				t.Fatalf("got %d %s; want 422", r.code, r.body)
			}
			var got []string
			for _, cause := range path(r.obj(t), "details.causes").([]any) {
				m := cause.(map[string]any)
				got = append(got, fmt.Sprintf("%s: %s", m["field"], m["reason"]))
			}
			if !slices.Equal(got, tt.causes) {
				t.Errorf("causes: got %v; want %v (%s)", got, tt.causes, r.body)
			}
		})
	}
	if got := s.discoveredKinds("bad.example.org/v1"); got != nil {
		t.Errorf("an invalid CRD is served: %v", got)
	}
}

// FuzzCRDCreate sends arbitrary CustomResourceDefinitions to the CRD
// resource: each is served (201) or refused with a 4xx, never a 500 or a
// panic, and a served one's kind answers a list.
func FuzzCRDCreate(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"as.f.example.org"},"spec":{"group":"f.example.org","scope":"Namespaced","names":{"plural":"as","kind":"A"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`,
		`{"metadata":{"name":"bs.f.example.org"},"spec":{"group":"f.example.org","scope":"Cluster","names":{"plural":"bs","kind":"B","shortNames":["b"]},"versions":[{"name":"v1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"x":{"type":"integer","default":3}}}}}},"subresources":{"status":{},"scale":{"specReplicasPath":".spec.x","statusReplicasPath":".status.x"}}},{"name":"v2","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}],"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://127.0.0.1:1/x"}}}}}`,
		`{"metadata":{"name":"cs.f.example.org"},"spec":{"group":"f.example.org","names":{"plural":"cs"},"versions":[{"name":"V1","schema":{"openAPIV3Schema":{"properties":{"a":{}}}}}]}}`,
		`{"spec":{"versions":"x"}}`, `{"spec":{"names":{"kind":7}}}`, `{}`, `null`,
	} {
		f.Add([]byte(seed))
	}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		f.Fatal(err)
	}
	defer reg.Close()
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", crdsPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		reg.ServeHTTP(w, req)
		switch {
		case w.Code == http.StatusCreated:
			var c struct {
				Spec struct {
					Group string `json:"group"`
					Names struct {
						Plural string `json:"plural"`
					} `json:"names"`
					Versions []struct {
						Name   string `json:"name"`
						Served bool   `json:"served"`
					} `json:"versions"`
				} `json:"spec"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil {
				t.Fatalf("201 with a body that is no CRD: %s", w.Body)
			}
			for _, v := range c.Spec.Versions {
				if !v.Served {
					continue
				}
				lw := httptest.NewRecorder()
				reg.ServeHTTP(lw, httptest.NewRequest("GET", "/apis/"+c.Spec.Group+"/"+v.Name+"/"+c.Spec.Names.Plural, nil))
				if lw.Code != http.StatusOK {
					t.Errorf("list of a created CRD's kind %s/%s: got %d %s", c.Spec.Group, v.Name, lw.Code, lw.Body)
				}
			}
			dw := httptest.NewRecorder()
			reg.ServeHTTP(dw, httptest.NewRequest("DELETE", crdsPath+"/"+c.Metadata.Name, nil))
		case w.Code >= 500 || w.Code < 400:
			t.Fatalf("got %d %s; want 201 or a 4xx", w.Code, w.Body)
		}
	})
}

// CRDs are created and deleted in a loop while widgets are written and
// watched: no write fails, the watch sees every widget, and each CRD's
// kind is served while it lives (run with -race).
func TestCRDsComeAndGoUnderLoad(t *testing.T) {
	s := newServer(t)
	const writes, crds = 100, 10
	ws := s.watch("/apis/example.com/v1/namespaces/default/widgets?watch=true")
	errs := make(chan error, writes+4*crds)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range crds {
			g := fmt.Sprintf("loop%d.example.org", i)
			name := "things." + g
			if r := s.do("POST", crdsPath, crd(g, "things", "Thing", crdVersion("v1", true, true, nil))); r.code != 201 {
				errs <- fmt.Errorf("create CRD %s: %d %s", name, r.code, r.body)
				continue
			}
			if r := s.do("POST", "/apis/"+g+"/v1/namespaces/default/things", map[string]any{"apiVersion": g + "/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"}}); r.code != 201 {
				errs <- fmt.Errorf("create a Thing of %s: %d %s", name, r.code, r.body)
			}
			if r := s.do("DELETE", crdsPath+"/"+name, nil); r.code != 200 {
				errs <- fmt.Errorf("delete CRD %s: %d %s", name, r.code, r.body)
			}
		}
	}()
	for i := range writes {
		if r := s.do("POST", "/apis/example.com/v1/namespaces/default/widgets", widget(fmt.Sprintf("w%d", i), nil, nil)); r.code != 201 {
			errs <- fmt.Errorf("create w%d: %d %s", i, r.code, r.body)
		}
	}
	<-done
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range writes {
		if ev := ws.next(); evType(ev) != "ADDED" || str(evObj(ev), "metadata.name") != fmt.Sprintf("w%d", i) {
			t.Fatalf("watch event %d: got %v; want ADDED w%d", i, ev, i)
		}
	}
	waitFor(t, func() bool {
		l := s.must(200, "GET", crdsPath, nil)
		return len(l["items"].([]any)) == 0
	})
}

// TestCRDCompiledOnce: the resources a CRD write's validation prepares
// are the ones the CRD feed serves when the stored CRD is the one
// validated (same uid and generation, names accepted as asked): its
// rules are compiled once per write, and the served kind enforces them.
// When the feed serves names other than the spec's (a rename refused
// for a conflict), it builds its own resources with the accepted names.
func TestCRDCompiledOnce(t *testing.T) {
	var compiles atomic.Int64
	store := memory.New(memory.Options{})
	reg, err := registry.New(registry.Options{Storage: store, CEL: func(*schema.Schema) (schema.Rules, error) {
		compiles.Add(1)
		return rules{"spec", "refused by the rule"}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	s := &server{t: t, reg: reg, store: store, url: srv.URL}

	ruled := func(name string, served bool) map[string]any {
		v := crdVersion(name, served, true, map[string]any{"size": map[string]any{"type": "integer"}})
		spec := path(v, "schema.openAPIV3Schema.properties.spec").(map[string]any)
		spec["x-kubernetes-validations"] = []any{map[string]any{"rule": "self.size < 10"}}
		return v
	}
	const name = "foos.once.example.org"
	steps := []struct {
		name     string
		method   string
		path     string
		body     func() map[string]any
		compiles int64 // compiles the step makes
	}{
		{"create", "POST", crdsPath, func() map[string]any { return crd("once.example.org", "foos", "Foo", ruled("v1", true)) }, 1},
		{"spec updated", "PUT", crdsPath + "/" + name, func() map[string]any {
			cur := s.must(200, "GET", crdsPath+"/"+name, nil)
			path(cur, "spec.versions").([]any)[0].(map[string]any)["additionalPrinterColumns"] = []any{map[string]any{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}}
			return cur
		}, 1},
		{"short name added: accepted, served as asked", "PUT", crdsPath + "/" + name, func() map[string]any {
			cur := s.must(200, "GET", crdsPath+"/"+name, nil)
			path(cur, "spec.names").(map[string]any)["shortNames"] = []any{"fo", "foo"}
			return cur
		}, 1},
		{"short name another CRD of its group holds as its singular: refused, served under the accepted names", "PUT", crdsPath + "/" + name, func() map[string]any {
			cur := s.must(200, "GET", crdsPath+"/"+name, nil)
			path(cur, "spec.names").(map[string]any)["shortNames"] = []any{"fo", "baz"}
			return cur
		}, 2},
	}
	s.must(201, "POST", crdsPath, crd("once.example.org", "bazs", "Baz", crdVersion("v1", true, true, nil)))
	for _, st := range steps {
		before := compiles.Load()
		code := 200
		if st.method == "POST" {
			code = 201
		}
		s.must(code, st.method, st.path, st.body())
		if got := compiles.Load() - before; got != st.compiles {
			t.Errorf("%s: the rules were compiled %d times; want %d", st.name, got, st.compiles)
		}
		r := s.do("POST", "/apis/once.example.org/v1/namespaces/default/foos", map[string]any{"apiVersion": "once.example.org/v1", "kind": "Foo",
			"metadata": map[string]any{"name": "x"}, "spec": map[string]any{"size": 1}})
		if r.code != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), "refused by the rule") {
			t.Errorf("%s: create of the kind: got %d %s; want 422 from its rule", st.name, r.code, r.body)
		}
	}
	list := s.must(200, "GET", "/apis/once.example.org/v1", nil)
	for _, r := range list["resources"].([]any) {
		if r := r.(map[string]any); r["name"] == "foos" && fmt.Sprint(r["shortNames"]) != "[fo foo]" {
			t.Errorf("foos' short names in discovery: got %v; want the accepted [fo foo]", r["shortNames"])
		}
	}
}
