package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/client-go/rest"
)

// EXT-7: CustomResourceDefinitions through the API, compared with the real
// apiextensions-apiserver on the same requests: the CRD's create, its
// updates (schema tightened, columns changed, a version added, the
// storage version switched) and delete, with the CRD bodies and
// conditions, the discovery documents and the instances' answers equal
// after normalising generated values (uids, resourceVersions, times,
// managedFields, which name each server's own controllers); a name
// conflict; invalid CRDs; a CRD deleted while a watch on its kind is open.

// crdCompareRuns numbers the CRD comparisons of a process, so that each
// (under -count) has groups of its own on the shared reference servers.
var crdCompareRuns atomic.Int64

// runGroup is group made unique to this comparison: "x.example.org"
// becomes "x7.example.org".
func runGroup(group string) string {
	first, rest, _ := strings.Cut(group, ".")
	return fmt.Sprintf("%s%d.%s", first, crdCompareRuns.Add(1), rest)
}

// crdCompare holds the two servers of a CRD comparison.
type crdCompare struct {
	kapi, kube *rest.Config
}

func newCRDCompare(t *testing.T) *crdCompare {
	t.Helper()
	kube := kubeServer(t)
	return &crdCompare{kapi: newEnv(t).config(), kube: kube}
}

const crdsURL = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// normalizeCRD is normalizeObject for a CRD, with its conditions' times
// and its managedFields (each server's controllers are its own field
// managers) left out.
func normalizeCRD(obj map[string]any) any {
	c, _ := normalizeObject(obj).(map[string]any)
	if md, ok := c["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	if st, ok := c["status"].(map[string]any); ok {
		conds, _ := st["conditions"].([]any)
		for _, x := range conds {
			if m, ok := x.(map[string]any); ok {
				m["lastTransitionTime"] = "TIME"
			}
		}
		slices.SortFunc(conds, func(a, b any) int {
			return strings.Compare(fmt.Sprint(a.(map[string]any)["type"]), fmt.Sprint(b.(map[string]any)["type"]))
		})
	}
	return c
}

// both sends r to both servers and reports differences of code, Status
// and (with body) the normalised bodies.
func (c *crdCompare) both(t *testing.T, what string, r kreq, body func(map[string]any) any) (kapi, kube kresp) {
	t.Helper()
	ctx := testContext(t)
	var err error
	if kube, err = do(ctx, c.kube, "default", "", r); err != nil {
		t.Fatalf("%s: kube: %v", what, err)
	}
	if kapi, err = do(ctx, c.kapi, "default", "", r); err != nil {
		t.Fatalf("%s: kapi: %v", what, err)
	}
	if body != nil && kube.Status == nil && kapi.Status == nil {
		kube.Body, kapi.Body = body(kube.obj), body(kapi.obj)
	}
	if d := cmp.Diff(kube, kapi, cmpopts.IgnoreUnexported(kresp{}), cmpopts.IgnoreFields(kresp{}, "Warnings")); d != "" {
		t.Errorf("%s, %s: kapi differs from kube (-kube +kapi):\n%s\nkube body: %s\nkapi body: %s", what, r, d, oneLine(kube.raw), oneLine(kapi.raw))
	}
	return kapi, kube
}

// settle waits until the CRD name's conditions are what the controllers
// make of it on cfg (Established, or NamesAccepted False), and until its
// generation is observed in its served kinds (kube serves a changed CRD
// a little after the write).
func settle(t *testing.T, cfg *rest.Config, name string, ready func(map[string]any) bool) {
	t.Helper()
	ctx := testContext(t)
	deadline := time.Now().Add(waitTimeout)
	for {
		r, err := do(ctx, cfg, "", "", kreq{Method: http.MethodGet, Path: crdsURL + "/" + name})
		if err == nil && r.Code == 200 && ready(r.obj) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s did not settle on %s: %s", name, cfg.Host, r.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kubeServes waits, bounded, until GET path answers 200 on cfg.
func kubeServes(t *testing.T, cfg *rest.Config, path string) {
	t.Helper()
	for deadline := time.Now().Add(waitTimeout); ; time.Sleep(20 * time.Millisecond) {
		r, err := do(testContext(t), cfg, "", "", kreq{Method: http.MethodGet, Path: path})
		if err == nil && r.Code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s on %s: %v %s", path, cfg.Host, err, r.raw)
		}
	}
}

func condition(obj map[string]any, typ string) string {
	st, _ := obj["status"].(map[string]any)
	l, _ := st["conditions"].([]any)
	for _, c := range l {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return fmt.Sprint(m["status"])
		}
	}
	return ""
}

func established(obj map[string]any) bool { return condition(obj, "Established") == "True" }

// compareCRD builds CRD manifests of the lifecycle scenario.
func compareCRD(name, group, plural, kind string, versions string) string {
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + name + `"},
"spec":{"group":"` + group + `","scope":"Namespaced","names":{"plural":"` + plural + `","kind":"` + kind + `","shortNames":["` + plural[:3] + `"],"categories":["all"]},
"versions":[` + versions + `]}}`
}

func compareVersion(name string, served, storage bool, sizeSchema, columns string) string {
	return fmt.Sprintf(`{"name":%q,"served":%v,"storage":%v,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":%s,"color":{"type":"string"}}}}}},"subresources":{"status":{}},"additionalPrinterColumns":[%s]}`,
		name, served, storage, sizeSchema, columns)
}

func TestCompareCRDLifecycle(t *testing.T) {
	t.Parallel()
	c := newCRDCompare(t)
	group := runGroup("lifecycle.compare.example.org")
	name := "crontabs." + group
	size := `{"type":"integer"}`
	tight := `{"type":"integer","maximum":5}`
	colSize := `{"name":"Size","type":"integer","jsonPath":".spec.size"}`
	colColor := `{"name":"Color","type":"string","jsonPath":".spec.color","priority":0}`
	manifest := func(versions ...string) string {
		return compareCRD(name, group, "crontabs", "CronTab", strings.Join(versions, ","))
	}
	instances := func(v string) string { return "/apis/" + group + "/" + v + "/namespaces/{ns}/crontabs" }
	put := func(what, versions string) {
		t.Helper()
		kapi, kube := c.both(t, what+" (read)", kreq{Method: http.MethodGet, Path: crdsURL + "/" + name}, nil)
		for _, x := range []struct {
			cfg *rest.Config
			r   kresp
		}{{c.kapi, kapi}, {c.kube, kube}} {
			var spec map[string]any
			json.Unmarshal([]byte(manifest(versions)), &spec)
			obj := x.r.obj
			obj["spec"].(map[string]any)["versions"] = spec["spec"].(map[string]any)["versions"]
			b, _ := json.Marshal(obj)
			r, err := do(testContext(t), x.cfg, "", "", kreq{Method: http.MethodPut, Path: crdsURL + "/" + name, ContentType: "application/json", Body: string(b)})
			if err != nil || r.Code != 200 {
				t.Fatalf("%s on %s: %v %s", what, x.cfg.Host, err, r.raw)
			}
		}
		settle(t, c.kube, name, established)
		settle(t, c.kapi, name, established)
		c.both(t, what, kreq{Method: http.MethodGet, Path: crdsURL + "/" + name}, normalizeCRD)
		// kube serves the new spec once its handler has rebuilt the kind's
		// storage (429 "storage is (re)initializing" until then); kapi
		// serves it when the write returns.
		time.Sleep(1500 * time.Millisecond)
		for deadline := time.Now().Add(waitTimeout); ; time.Sleep(50 * time.Millisecond) {
			r, err := do(testContext(t), c.kube, "default", "", kreq{Method: http.MethodGet, Path: instances("v1")})
			if err == nil && r.Code == 200 || time.Now().After(deadline) {
				break
			}
		}
	}
	crontab := func(v, n, spec string) string {
		return `{"apiVersion":"` + group + `/` + v + `","kind":"CronTab","metadata":{"name":"` + n + `"},"spec":` + spec + `}`
	}

	c.both(t, "create", kreq{Method: http.MethodPost, Path: crdsURL, ContentType: "application/json", Body: manifest(compareVersion("v1", true, true, size, colSize))}, normalizeCRD)
	settle(t, c.kube, name, established)
	settle(t, c.kapi, name, established)
	c.both(t, "established", kreq{Method: http.MethodGet, Path: crdsURL + "/" + name}, normalizeCRD)
	// kube's discovery controller adds the group a moment after
	// Established; kapi's discovery has it when the condition is set.
	kubeServes(t, c.kube, "/apis/"+group+"/v1")
	kubeServes(t, c.kube, "/apis/"+group)
	c.both(t, "discovery of the group version", kreq{Method: http.MethodGet, Path: "/apis/" + group + "/v1"}, normalizeDiscovery)
	c.both(t, "discovery of the group", kreq{Method: http.MethodGet, Path: "/apis/" + group}, normalizeDiscovery)
	c.both(t, "first instance", kreq{Method: http.MethodPost, Path: instances("v1"), ContentType: "application/json", Body: crontab("v1", "a", `{"size":9,"color":"red"}`)}, normalizeObject)

	put("schema tightened", compareVersion("v1", true, true, tight, colSize))
	c.both(t, "an instance over the new maximum", kreq{Method: http.MethodPost, Path: instances("v1"), ContentType: "application/json", Body: crontab("v1", "b", `{"size":9}`)}, nil)
	c.both(t, "the stored instance, valid before", kreq{Method: http.MethodGet, Path: instances("v1") + "/a"}, normalizeObject)

	put("columns changed", compareVersion("v1", true, true, tight, colColor))
	c.both(t, "table", kreq{Method: http.MethodGet, Path: instances("v1")}, normalizeTable)

	put("version v2 added", compareVersion("v1", true, true, tight, colColor)+","+compareVersion("v2", true, false, size, colSize))
	c.both(t, "discovery of v2", kreq{Method: http.MethodGet, Path: "/apis/" + group + "/v2"}, normalizeDiscovery)
	c.both(t, "the instance through v2", kreq{Method: http.MethodGet, Path: instances("v2") + "/a"}, normalizeObject)

	put("storage version switched to v2", compareVersion("v1", true, false, tight, colColor)+","+compareVersion("v2", true, true, size, colSize))
	c.both(t, "an instance written through v1", kreq{Method: http.MethodPost, Path: instances("v1"), ContentType: "application/json", Body: crontab("v1", "c", `{"size":2}`)}, normalizeObject)
	c.both(t, "read through v2", kreq{Method: http.MethodGet, Path: instances("v2") + "/c"}, normalizeObject)
	c.both(t, "the list through v2", kreq{Method: http.MethodGet, Path: instances("v2")}, normalizeList)

	t.Run("delete with a watch open", func(t *testing.T) {
		events := map[string]chan string{}
		for srv, cfg := range map[string]*rest.Config{"kapi": c.kapi, "kube": c.kube} {
			events[srv] = watchTypes(t, cfg, "/apis/"+group+"/v2/crontabs?watch=true&resourceVersion=0")
		}
		c.both(t, "delete", kreq{Method: http.MethodDelete, Path: crdsURL + "/" + name}, normalizeCRD)
		got := map[string][]string{}
		for srv, ch := range events {
			for typ := range ch {
				got[srv] = append(got[srv], typ)
			}
		}
		if d := cmp.Diff(got["kube"], got["kapi"]); d != "" {
			t.Errorf("watch events until the watch ended (-kube +kapi):\n%s", d)
		}
		for srv, cfg := range map[string]*rest.Config{"kapi": c.kapi, "kube": c.kube} {
			deadline := time.Now().Add(waitTimeout)
			for {
				r, err := do(testContext(t), cfg, "", "", kreq{Method: http.MethodGet, Path: crdsURL + "/" + name})
				if err == nil && r.Code == http.StatusNotFound {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: the CRD is not gone: %s", srv, r.raw)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		// The body of the 404 is the standalone apiextensions-apiserver's
		// plain "404 page not found" (kube-apiserver answers a Status, as
		// kapi): the codes are compared.
		for srv, cfg := range map[string]*rest.Config{"kapi": c.kapi, "kube": c.kube} {
			if r, err := do(testContext(t), cfg, "default", "", kreq{Method: http.MethodGet, Path: instances("v2")}); err != nil || r.Code != http.StatusNotFound {
				t.Errorf("%s: the kind after the delete: got %v %d; want 404", srv, err, r.Code)
			}
		}
	})
}

// watchTypes opens a watch and sends the type of each event (and of
// each ADDED/DELETED object's name) until the server ends it.
func watchTypes(t *testing.T, cfg *rest.Config, path string) chan string {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	resp, err := hc.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("watch %s on %s: %v %v", path, cfg.Host, err, resp)
	}
	ch := make(chan string, 100)
	dec := json.NewDecoder(resp.Body)
	initial := make(chan struct{})
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		n := 0
		for {
			var ev struct {
				Type   string         `json:"type"`
				Object map[string]any `json:"object"`
			}
			if err := dec.Decode(&ev); err != nil {
				if ctx.Err() != nil {
					ch <- "(watch not ended)"
				}
				return
			}
			md, _ := ev.Object["metadata"].(map[string]any)
			ch <- ev.Type + " " + fmt.Sprint(md["name"])
			if n++; n == 2 { // the two instances' ADDED
				close(initial)
			}
		}
	}()
	select {
	case <-initial:
	case <-time.After(waitTimeout):
		t.Fatalf("watch on %s: no initial events", cfg.Host)
	}
	return ch
}

// normalizeDiscovery drops what only kube's documents have:
// storageVersionHash (kapi has no storage version migrator to feed).
func normalizeDiscovery(obj map[string]any) any {
	b, _ := json.Marshal(obj)
	var c map[string]any
	json.Unmarshal(b, &c)
	if l, ok := c["resources"].([]any); ok {
		for _, r := range l {
			delete(r.(map[string]any), "storageVersionHash")
		}
	}
	return c
}

// normalizeTable keeps a Table's columns and cells.
func normalizeTable(obj map[string]any) any {
	return map[string]any{"kind": obj["kind"], "columnDefinitions": obj["columnDefinitions"], "rows": cells(obj)}
}

func cells(obj map[string]any) []any {
	var out []any
	rows, _ := obj["rows"].([]any)
	for _, r := range rows {
		cs, _ := r.(map[string]any)["cells"].([]any)
		out = append(out, cs)
	}
	return out
}

// normalizeList normalises each item of a list.
func normalizeList(obj map[string]any) any {
	items, _ := obj["items"].([]any)
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = normalizeObject(it.(map[string]any))
	}
	return map[string]any{"kind": obj["kind"], "apiVersion": obj["apiVersion"], "items": out}
}

func TestCompareCRDNameConflict(t *testing.T) {
	t.Parallel()
	c := newCRDCompare(t)
	group := runGroup("conflict.compare.example.org")
	v := compareVersion("v1", true, true, `{"type":"integer"}`, "")
	first := compareCRD("foos."+group, group, "foos", "Foo", v)
	c.both(t, "create the first", kreq{Method: http.MethodPost, Path: crdsURL, ContentType: "application/json", Body: first}, normalizeCRD)
	settle(t, c.kube, "foos."+group, established)
	settle(t, c.kapi, "foos."+group, established)
	tests := []struct{ name, plural, kind string }{
		{"kind taken", "bars", "Foo"},
		{"short name taken", "fooles", "Foole"}, // its short name is foo, as the first's
		{"no conflict", "bazs", "Baz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.plural + "." + group
			c.both(t, "create", kreq{Method: http.MethodPost, Path: crdsURL, ContentType: "application/json", Body: compareCRD(n, group, tt.plural, tt.kind, v)}, normalizeCRD)
			done := func(o map[string]any) bool {
				return condition(o, "NamesAccepted") == "False" || condition(o, "Established") == "True"
			}
			settle(t, c.kube, n, done)
			settle(t, c.kapi, n, done)
			c.both(t, "conditions", kreq{Method: http.MethodGet, Path: crdsURL + "/" + n}, normalizeCRD)
		})
	}
}

// selectable adds selectableFields of the JSON paths to a compareVersion.
func selectable(version string, paths ...string) string {
	var fs []string
	for _, p := range paths {
		fs = append(fs, fmt.Sprintf(`{"jsonPath":%q}`, p))
	}
	return strings.TrimSuffix(version, "}") + `,"selectableFields":[` + strings.Join(fs, ",") + `]}`
}

func TestCompareCRDInvalid(t *testing.T) {
	t.Parallel()
	c := newCRDCompare(t)
	group := runGroup("invalid.compare.example.org")
	v := compareVersion("v1", true, true, `{"type":"integer"}`, "")
	tests := []struct{ name, body string }{
		{"name not plural.group", compareCRD("other."+group, group, "things", "Thing", v)},
		{"group without a dot", compareCRD("things.nodot", "nodot", "things", "Thing", v)},
		{"bad scope", strings.Replace(compareCRD("things."+group, group, "things", "Thing", v), `"Namespaced"`, `"Galaxy"`, 1)},
		{"no storage version", compareCRD("things."+group, group, "things", "Thing", compareVersion("v1", true, false, `{"type":"integer"}`, ""))},
		{"a property without a type", compareCRD("things."+group, group, "things", "Thing", compareVersion("v1", true, true, `{"minimum":1}`, ""))},
		{"kind equals listKind", strings.Replace(compareCRD("things."+group, group, "things", "Thing", v), `"kind":"Thing"`, `"kind":"Thing","listKind":"Thing"`, 1)},
		{"bad column type", compareCRD("things."+group, group, "things", "Thing", compareVersion("v1", true, true, `{"type":"integer"}`, `{"name":"X","type":"color","jsonPath":".spec.x"}`))},
		{"selectable field not in the schema", compareCRD("things."+group, group, "things", "Thing", selectable(v, ".spec.nope"))},
		{"selectable field an object", compareCRD("things."+group, group, "things", "Thing", selectable(v, ".spec"))},
		{"selectable field twice", compareCRD("things."+group, group, "things", "Thing", selectable(v, ".spec.color", ".spec.size", ".spec.color"))},
		{"selectable field with array notation", compareCRD("things."+group, group, "things", "Thing", selectable(v, ".spec['color']"))},
		{"selectable field without a dot", compareCRD("things."+group, group, "things", "Thing", selectable(v, "spec.color"))},
		{"selectable field empty", compareCRD("things."+group, group, "things", "Thing", selectable(v, ""))},
		{"selectable fields shared by versions with different schemas", compareCRD("things."+group, group, "things", "Thing",
			selectable(compareVersion("v1", true, true, `{"type":"integer"}`, ""), ".spec.color")+","+selectable(compareVersion("v2", true, false, `{"type":"string"}`, ""), ".spec.color"))},
		{"default of the wrong type", compareCRD("things."+group, group, "things", "Thing", compareVersion("v1", true, true, `{"type":"integer","default":"three"}`, ""))},
		{"default over the maximum", compareCRD("things."+group, group, "things", "Thing", compareVersion("v1", true, true, `{"type":"integer","maximum":5,"default":9}`, ""))},
		{"default with an unknown field", compareCRD("things."+group, group, "things", "Thing", compareVersion("v1", true, true, `{"type":"object","properties":{"a":{"type":"string"}},"default":{"a":"x","b":"y"}}`, ""))},
		{"default nested wrong", compareCRD("things."+group, group, "things", "Thing", compareVersion("v1", true, true, `{"type":"object","properties":{"a":{"type":"string"}},"default":{"a":1}}`, ""))},
		{"selectable fields per version", compareCRD("things."+group, group, "things", "Thing",
			selectable(compareVersion("v1", true, true, `{"type":"integer"}`, ""), ".spec.x")+","+selectable(compareVersion("v2", true, false, `{"type":"object"}`, ""), ".spec.size"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.both(t, "create", kreq{Method: http.MethodPost, Path: crdsURL, ContentType: "application/json", Body: tt.body}, nil)
		})
	}
}

// EXT-7, URI-4: a CRD's entry in aggregated discovery (/apis as
// apidiscovery.k8s.io/v2) and its /openapi/v3 index entry, compared with
// the real kube-apiserver's (the standalone apiextensions-apiserver
// serves neither) once both serve the CRD.
func TestCompareCRDAggregatedDiscovery(t *testing.T) {
	t.Parallel()
	kube := kubeAPIServer(t)
	kubeCfg := &rest.Config{Host: kube.URL, BearerToken: kube.AdminToken, TLSClientConfig: rest.TLSClientConfig{CAData: kube.CA}, QPS: -1}
	c := &crdCompare{kapi: newEnv(t).config(), kube: kubeCfg}
	group := runGroup("aggregated.compare.example.org")
	name := "crontabs." + group
	body := compareCRD(name, group, "crontabs", "CronTab",
		compareVersion("v1beta1", true, false, `{"type":"integer"}`, "")+","+compareVersion("v1", true, true, `{"type":"integer"}`, ""))
	c.both(t, "create", kreq{Method: http.MethodPost, Path: crdsURL, ContentType: "application/json", Body: body}, normalizeCRD)
	const agg = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	entry := func(cfg *rest.Config) (any, bool) {
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(testContext(t), http.MethodGet, cfg.Host+"/apis", nil)
		req.Header.Set("Accept", agg)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var l struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
			t.Fatal(err)
		}
		for _, it := range l.Items {
			if md, _ := it["metadata"].(map[string]any); md["name"] == group {
				return it, true
			}
		}
		return nil, false
	}
	var got [2]any
	for i, cfg := range []*rest.Config{c.kube, c.kapi} {
		deadline := time.Now().Add(waitTimeout)
		for {
			e, ok := entry(cfg)
			if ok {
				got[i] = e
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s is not in aggregated discovery", cfg.Host, group)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if d := cmp.Diff(got[0], got[1]); d != "" {
		t.Errorf("the CRD's aggregated discovery entry (-kube +kapi):\n%s", d)
	}
	paths := func(cfg *rest.Config) []string {
		r, err := do(testContext(t), cfg, "", "", kreq{Method: http.MethodGet, Path: "/openapi/v3"})
		if err != nil || r.Code != 200 {
			t.Fatalf("/openapi/v3 on %s: %v %d", cfg.Host, err, r.Code)
		}
		var out []string
		for p := range r.obj["paths"].(map[string]any) {
			if strings.Contains(p, group) {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return out
	}
	// kube's OpenAPI v3 controller adds a CRD's group versions a moment
	// after it is served.
	for deadline := time.Now().Add(waitTimeout); len(paths(c.kube)) < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if d := cmp.Diff(paths(c.kube), paths(c.kapi)); d != "" {
		t.Errorf("the CRD's /openapi/v3 index entries (-kube +kapi):\n%s", d)
	}
}
