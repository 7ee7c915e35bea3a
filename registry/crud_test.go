package registry_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/codec/cbor"
	"github.com/kapi-dev/kapi/registry"
)

func TestCreateSetsServerFields(t *testing.T) {
	s := newServer(t)
	obj := widget("a", nil, map[string]any{"color": "red", "replicas": 1})
	obj["metadata"].(map[string]any)["uid"] = "client-uid"
	obj["metadata"].(map[string]any)["generation"] = 7
	obj["status"] = map[string]any{"readyReplicas": 5}
	got := s.must(http.StatusCreated, "POST", widgetsPath, obj)

	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if uid := str(got, "metadata.uid"); !uuid.MatchString(uid) {
		t.Errorf("uid: got %q; want a server-made RFC 4122 v4 UUID", uid)
	}
	if ts := str(got, "metadata.creationTimestamp"); !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(ts) {
		t.Errorf("creationTimestamp: got %q; want RFC 3339 in seconds", ts)
	}
	if g := path(got, "metadata.generation"); g != float64(1) {
		t.Errorf("generation: got %v; want 1", g)
	}
	if str(got, "metadata.resourceVersion") == "" {
		t.Error("resourceVersion: got empty; want the create's revision")
	}
	if got["status"] != nil {
		t.Errorf("status: got %v; want it dropped on create (status subresource)", got["status"])
	}
	if got["kind"] != "Widget" || got["apiVersion"] != "example.com/v1" || str(got, "metadata.namespace") != "default" {
		t.Errorf("got kind %v apiVersion %v namespace %v", got["kind"], got["apiVersion"], str(got, "metadata.namespace"))
	}
	again := s.must(http.StatusOK, "GET", widgetsPath+"/a", nil)
	if str(again, "metadata.resourceVersion") != str(got, "metadata.resourceVersion") || str(again, "metadata.uid") != str(got, "metadata.uid") {
		t.Errorf("get: got %v; want the created object", again)
	}
}

func TestCreateErrors(t *testing.T) {
	s := newServer(t)
	s.must(http.StatusCreated, "POST", widgetsPath, widget("dup", nil, nil))
	tests := []struct {
		name, path string
		body       any
		header     []string
		code       int
		reason     string
		message    string
	}{
		{"duplicate", widgetsPath, widget("dup", nil, nil), nil, 409, "AlreadyExists", `widgets.example.com "dup" already exists`},
		{"malformed json", widgetsPath, `{"metadata":`, nil, 400, "BadRequest", "the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"metadata\":)"},
		{"not an object", widgetsPath, `[1,2]`, nil, 400, "BadRequest", "json: cannot unmarshal array into Go value of type struct"},
		{"empty body", widgetsPath, ``, nil, 400, "BadRequest", "empty"},
		{"wrong kind", widgetsPath, map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "x"}}, nil, 400, "BadRequest", "kind in the data (Gadget)"},
		{"wrong apiVersion", widgetsPath, map[string]any{"apiVersion": "example.com/v2", "kind": "Widget", "metadata": map[string]any{"name": "x"}}, nil, 400, "BadRequest", "API version in the data"},
		{"namespace mismatch", widgetsPath, map[string]any{"metadata": map[string]any{"name": "x", "namespace": "other"}}, nil, 400, "BadRequest", "namespace of the provided object does not match"},
		{"resourceVersion set", widgetsPath, map[string]any{"metadata": map[string]any{"name": "x", "resourceVersion": "5"}}, nil, 400, "BadRequest", "resourceVersion should not be set"},
		{"bad name", widgetsPath, widget("Bad_Name", nil, nil), nil, 422, "Invalid", `Widget.example.com "Bad_Name" is invalid: metadata.name`},
		{"no name", widgetsPath, map[string]any{"metadata": map[string]any{}}, nil, 422, "Invalid", "name or generateName is required"},
		{"bad label", widgetsPath, widget("x", map[string]string{"a b": "c"}, nil), nil, 422, "Invalid", "metadata.labels"},
		{"missing namespace", "/apis/example.com/v1/namespaces/nope/widgets", widget("x", nil, nil), nil, 404, "NotFound", `namespaces "nope" not found`},
		{"unsupported content type", widgetsPath, widget("x", nil, nil), []string{"Content-Type", "application/xml"}, 415, "UnsupportedMediaType", "application/json"},
		{"not acceptable", widgetsPath, widget("x", nil, nil), []string{"Accept", "text/html"}, 406, "NotAcceptable", "application/json"},
		{"bad dryRun", widgetsPath + "?dryRun=Some", widget("x", nil, nil), nil, 422, "Invalid", "dryRun"},
		{"too large", widgetsPath, `{"metadata":{"name":"x"},"spec":{"blob":"` + strings.Repeat("a", 3<<20) + `"}}`, nil, 413, "RequestEntityTooLarge", "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do("POST", tc.path, tc.body, tc.header...)
			if r.code != tc.code {
				t.Fatalf("got %d; want %d: %s", r.code, tc.code, r.body)
			}
			st := r.obj(t)
			if st["kind"] != "Status" || st["status"] != "Failure" || st["reason"] != tc.reason || st["code"] != float64(tc.code) {
				t.Errorf("got Status %v; want reason %s code %d", st, tc.reason, tc.code)
			}
			if msg, _ := st["message"].(string); !strings.Contains(msg, tc.message) {
				t.Errorf("message: got %q; want it to contain %q", msg, tc.message)
			}
		})
	}
	if r := s.do("GET", widgetsPath+"/x", nil); r.code != 404 {
		t.Errorf("after failed creates: got %d for widget x; want 404 (nothing half-written)", r.code)
	}
}

func TestInvalidCauses(t *testing.T) {
	s := newServer(t)
	st := s.must(422, "POST", widgetsPath, widget("Bad_Name", nil, nil))
	causes, _ := path(st, "details.causes").([]any)
	if len(causes) == 0 {
		t.Fatalf("got no causes in %v; want one naming metadata.name", st)
	}
	c := causes[0].(map[string]any)
	if c["field"] != "metadata.name" || c["reason"] != "FieldValueInvalid" {
		t.Errorf("cause: got %v; want field metadata.name reason FieldValueInvalid", c)
	}
	if path(st, "details.kind") != "Widget" || path(st, "details.group") != "example.com" || path(st, "details.name") != "Bad_Name" {
		t.Errorf("details: got %v", st["details"])
	}
}

func TestGenerateName(t *testing.T) {
	s := newServer(t)
	got := s.must(201, "POST", widgetsPath, map[string]any{"metadata": map[string]any{"generateName": "w-"}})
	if name := str(got, "metadata.name"); !regexp.MustCompile(`^w-[bcdfghjklmnpqrstvwxz2456789]{5}$`).MatchString(name) {
		t.Errorf("name: got %q; want w- plus 5 generated characters", name)
	}
}

func TestUpdate(t *testing.T) {
	s := newServer(t)
	created := s.must(201, "POST", widgetsPath, widget("a", nil, map[string]any{"color": "red"}))
	rv1 := str(created, "metadata.resourceVersion")

	// A metadata-only change keeps generation.
	created["metadata"].(map[string]any)["labels"] = map[string]any{"x": "y"}
	up := s.must(200, "PUT", widgetsPath+"/a", created)
	if path(up, "metadata.generation") != float64(1) {
		t.Errorf("generation after label change: got %v; want 1", path(up, "metadata.generation"))
	}
	if str(up, "metadata.resourceVersion") == rv1 {
		t.Error("resourceVersion did not change on update")
	}
	// The old resourceVersion is now stale: 409.
	stale := s.do("PUT", widgetsPath+"/a", created)
	if stale.code != 409 || stale.obj(t)["reason"] != "Conflict" {
		t.Fatalf("stale update: got %d %s; want 409 Conflict", stale.code, stale.body)
	}
	// A spec change moves generation; status is ignored on the main resource.
	up["spec"] = map[string]any{"color": "blue"}
	up["status"] = map[string]any{"readyReplicas": 3}
	up2 := s.must(200, "PUT", widgetsPath+"/a", up)
	if path(up2, "metadata.generation") != float64(2) || str(up2, "spec.color") != "blue" || up2["status"] != nil {
		t.Errorf("after spec update: got generation %v spec %v status %v; want 2, blue, no status", path(up2, "metadata.generation"), up2["spec"], up2["status"])
	}
	if str(up2, "metadata.uid") != str(created, "metadata.uid") || str(up2, "metadata.creationTimestamp") != str(created, "metadata.creationTimestamp") {
		t.Error("update changed uid or creationTimestamp")
	}
	// Without resourceVersion, PUT is unconditional.
	delete(up2["metadata"].(map[string]any), "resourceVersion")
	s.must(200, "PUT", widgetsPath+"/a", up2)
	// PUT on a missing object is 404; a name mismatch is 400.
	if r := s.do("PUT", widgetsPath+"/missing", widget("missing", nil, nil)); r.code != 404 {
		t.Errorf("PUT missing: got %d; want 404", r.code)
	}
	if r := s.do("PUT", widgetsPath+"/a", widget("b", nil, nil)); r.code != 400 {
		t.Errorf("PUT with another name: got %d; want 400", r.code)
	}
}

func TestStatusSubresource(t *testing.T) {
	s := newServer(t)
	w := s.must(201, "POST", widgetsPath, widget("a", nil, map[string]any{"color": "red"}))
	w["spec"] = map[string]any{"color": "green"}
	w["status"] = map[string]any{"readyReplicas": 2}
	got := s.must(200, "PUT", widgetsPath+"/a/status", w)
	if str(got, "spec.color") != "red" || path(got, "status.readyReplicas") != float64(2) {
		t.Errorf("status update: got spec %v status %v; want spec unchanged (red), status written", got["spec"], got["status"])
	}
	if path(got, "metadata.generation") != float64(1) {
		t.Errorf("generation: got %v; want 1 (status writes do not move it)", path(got, "metadata.generation"))
	}
	got = s.must(200, "PATCH", widgetsPath+"/a/status", `{"status":{"readyReplicas":4}}`, "Content-Type", "application/merge-patch+json")
	if path(got, "status.readyReplicas") != float64(4) {
		t.Errorf("status patch: got %v", got["status"])
	}
	if r := s.do("PUT", "/api/v1/namespaces/default/configmaps/x/status", map[string]any{}); r.code != 404 {
		t.Errorf("status of a resource without it: got %d; want 404", r.code)
	}
}

func TestPatch(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", widgetsPath, widget("a", map[string]string{"k": "v"}, map[string]any{"color": "red", "replicas": 1}))
	merge := []string{"Content-Type", "application/merge-patch+json"}
	jsonp := []string{"Content-Type", "application/json-patch+json"}
	got := s.must(200, "PATCH", widgetsPath+"/a", `{"spec":{"color":"blue"},"metadata":{"labels":{"k":null}}}`, merge...)
	if str(got, "spec.color") != "blue" || path(got, "spec.replicas") != float64(1) || path(got, "metadata.labels.k") != nil {
		t.Errorf("merge patch: got %v", got)
	}
	if path(got, "metadata.generation") != float64(2) {
		t.Errorf("generation: got %v; want 2", path(got, "metadata.generation"))
	}
	got = s.must(200, "PATCH", widgetsPath+"/a", `[{"op":"test","path":"/spec/color","value":"blue"},{"op":"replace","path":"/spec/replicas","value":3}]`, jsonp...)
	if path(got, "spec.replicas") != float64(3) {
		t.Errorf("json patch: got %v", got["spec"])
	}
	tests := []struct {
		name   string
		body   string
		header []string
		code   int
	}{
		{"failed test op", `[{"op":"test","path":"/spec/color","value":"red"}]`, jsonp, 422},
		{"missing path", `[{"op":"replace","path":"/spec/nope/x","value":1}]`, jsonp, 422},
		{"malformed json patch", `{"op":"add"}`, jsonp, 400},
		{"malformed merge patch", `{"spec":`, merge, 400},
		{"stale resourceVersion", `{"metadata":{"resourceVersion":"1"}}`, merge, 409},
		{"strategic merge without a schema", `{}`, []string{"Content-Type", "application/strategic-merge-patch+json"}, 415},
		{"apply without fieldManager", `{}`, []string{"Content-Type", "application/apply-patch+yaml"}, 422},
		{"force on a merge patch", `{}`, merge, 422},
		{"rename", `{"metadata":{"name":"b"}}`, merge, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := widgetsPath + "/a"
			if tc.name == "force on a merge patch" {
				path += "?force=true"
			}
			r := s.do("PATCH", path, tc.body, tc.header...)
			if r.code != tc.code {
				t.Fatalf("got %d; want %d: %s", r.code, tc.code, r.body)
			}
		})
	}
	if r := s.do("PATCH", widgetsPath+"/missing", `{}`, merge...); r.code != 404 {
		t.Errorf("patch missing: got %d; want 404", r.code)
	}
}

func TestScaleSubresource(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", widgetsPath, widget("a", nil, map[string]any{"replicas": 2}))
	sc := s.must(200, "GET", widgetsPath+"/a/scale", nil)
	if sc["kind"] != "Scale" || sc["apiVersion"] != "autoscaling/v1" || path(sc, "spec.replicas") != float64(2) || str(sc, "metadata.name") != "a" {
		t.Fatalf("scale: got %v", sc)
	}
	sc["spec"] = map[string]any{"replicas": 5}
	got := s.must(200, "PUT", widgetsPath+"/a/scale", sc)
	if path(got, "spec.replicas") != float64(5) {
		t.Errorf("scale PUT: got %v", got)
	}
	if r := s.do("PUT", widgetsPath+"/a/scale", sc); r.code != 409 {
		t.Errorf("scale PUT with stale resourceVersion: got %d; want 409", r.code)
	}
	got = s.must(200, "PATCH", widgetsPath+"/a/scale", `{"spec":{"replicas":7}}`, "Content-Type", "application/merge-patch+json")
	if path(got, "spec.replicas") != float64(7) {
		t.Errorf("scale PATCH: got %v", got)
	}
	w := s.must(200, "GET", widgetsPath+"/a", nil)
	if path(w, "spec.replicas") != float64(7) || path(w, "metadata.generation") != float64(3) {
		t.Errorf("widget after scaling: got replicas %v generation %v; want 7 and 3", path(w, "spec.replicas"), path(w, "metadata.generation"))
	}
	if r := s.do("PATCH", widgetsPath+"/a/scale", `{"spec":{"replicas":-1}}`, "Content-Type", "application/merge-patch+json"); r.code != 422 {
		t.Errorf("negative replicas: got %d; want 422", r.code)
	}
}

func TestDelete(t *testing.T) {
	s := newServer(t)
	w := s.must(201, "POST", widgetsPath, widget("a", nil, nil))
	st := s.do("DELETE", widgetsPath+"/a", map[string]any{"preconditions": map[string]any{"uid": "wrong"}})
	if st.code != 409 {
		t.Fatalf("delete with a wrong uid precondition: got %d; want 409", st.code)
	}
	st = s.do("DELETE", widgetsPath+"/a", map[string]any{"preconditions": map[string]any{"resourceVersion": "1"}})
	if st.code != 409 {
		t.Fatalf("delete with a stale resourceVersion precondition: got %d; want 409", st.code)
	}
	got := s.must(200, "DELETE", widgetsPath+"/a?dryRun=All", nil)
	if got["status"] != "Success" {
		t.Errorf("dry-run delete: got %v", got)
	}
	s.must(200, "GET", widgetsPath+"/a", nil)
	got = s.must(200, "DELETE", widgetsPath+"/a", map[string]any{"preconditions": map[string]any{"uid": str(w, "metadata.uid")}})
	if got["kind"] != "Status" || got["status"] != "Success" || path(got, "details.name") != "a" || path(got, "details.kind") != "widgets" || path(got, "details.uid") != str(w, "metadata.uid") {
		t.Errorf("delete: got %v; want Status Success naming the widget", got)
	}
	if r := s.do("GET", widgetsPath+"/a", nil); r.code != 404 {
		t.Errorf("get after delete: got %d; want 404", r.code)
	}
	if r := s.do("DELETE", widgetsPath+"/a", nil); r.code != 404 {
		t.Errorf("delete again: got %d; want 404", r.code)
	}
	s.must(201, "POST", widgetsPath, widget("a", nil, nil)) // names are re-usable
	if r := s.do("DELETE", widgetsPath+"/a?gracePeriodSeconds=-1", nil); r.code != 200 {
		t.Errorf("negative grace period (kube reads it as 1s): got %d; want 200", r.code)
	}
}

func TestFinalizers(t *testing.T) {
	s := newServer(t)
	obj := widget("a", nil, nil)
	obj["metadata"].(map[string]any)["finalizers"] = []string{"example.com/keep"}
	s.must(201, "POST", widgetsPath, obj)
	got := s.must(200, "DELETE", widgetsPath+"/a", nil)
	if got["kind"] != "Widget" || str(got, "metadata.deletionTimestamp") == "" || path(got, "metadata.deletionGracePeriodSeconds") != float64(0) {
		t.Fatalf("delete with finalizer: got %v; want the widget with deletionTimestamp", got)
	}
	if path(got, "metadata.generation") != float64(2) {
		t.Errorf("generation: got %v; want 2 (deletionTimestamp set)", path(got, "metadata.generation"))
	}
	// No new finalizers once deletion started.
	cur := s.must(200, "GET", widgetsPath+"/a", nil)
	cur["metadata"].(map[string]any)["finalizers"] = []string{"example.com/keep", "example.com/new"}
	if r := s.do("PUT", widgetsPath+"/a", cur); r.code != 422 || !strings.Contains(string(r.body), "no new finalizers") {
		t.Fatalf("adding a finalizer while deleting: got %d %s; want 422", r.code, r.body)
	}
	// Deleting again changes nothing.
	again := s.must(200, "DELETE", widgetsPath+"/a", nil)
	if str(again, "metadata.resourceVersion") != str(cur, "metadata.resourceVersion") {
		t.Errorf("second delete wrote the object again")
	}
	// Removing the last finalizer removes the object.
	s.must(200, "PATCH", widgetsPath+"/a", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json")
	if r := s.do("GET", widgetsPath+"/a", nil); r.code != 404 {
		t.Errorf("after removing the last finalizer: got %d; want 404", r.code)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	s := newServer(t)
	got := s.must(201, "POST", widgetsPath+"?dryRun=All", widget("a", nil, map[string]any{"color": "red"}))
	if str(got, "metadata.uid") == "" || str(got, "metadata.creationTimestamp") == "" {
		t.Errorf("dry-run create: got %v; want server fields filled", got)
	}
	if r := s.do("GET", widgetsPath+"/a", nil); r.code != 404 {
		t.Errorf("after dry-run create: got %d; want 404", r.code)
	}
	s.must(201, "POST", widgetsPath, widget("a", nil, map[string]any{"color": "red"}))
	s.must(200, "PATCH", widgetsPath+"/a?dryRun=All", `{"spec":{"color":"blue"}}`, "Content-Type", "application/merge-patch+json")
	if c := str(s.must(200, "GET", widgetsPath+"/a", nil), "spec.color"); c != "red" {
		t.Errorf("after dry-run patch: color %q; want red", c)
	}
}

func TestRoutingErrors(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		method, path string
		code         int
	}{
		{"GET", "/apis/example.com/v1/namespaces/default/gadgets", 404},
		{"GET", "/apis/example.com/v9/widgets", 404},
		// a group nothing serves: text/plain (TestNotServedPaths)
		{"GET", "/nothing/here", 404},
		{"GET", "/apis/example.com/v1/namespaces/default/widgets/a/nope", 404},
		{"GET", "/api/v1/namespaces/default/namespaces", 404},
		{"POST", widgetsPath + "/a", 405},
		{"PUT", widgetsPath, 405},
		{"GET", "/apis/example.com/v1/widgets/a", 404}, // namespaced object without namespace
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := s.do(tc.method, tc.path, nil)
			if r.code != tc.code {
				t.Fatalf("got %d; want %d: %s", r.code, tc.code, r.body)
			}
			if st := r.obj(t); st["kind"] != "Status" {
				t.Errorf("got %v; want a Status body", st)
			}
		})
	}
}

func TestPanicIsInternalError(t *testing.T) {
	res := &registry.Resource{Group: "boom.io", Version: "v1", Kind: "Bomb", Plural: "bombs",
		Strategy: registry.Strategy{Default: func(context.Context, registry.Object) error { panic("kaboom") }}}
	s := newServer(t, res)
	r := s.do("POST", "/apis/boom.io/v1/bombs", map[string]any{"metadata": map[string]any{"name": "x"}})
	if r.code != 500 || r.obj(t)["reason"] != "InternalError" {
		t.Fatalf("got %d %s; want a 500 InternalError Status", r.code, r.body)
	}
	s.must(200, "GET", "/apis/boom.io/v1/bombs", nil) // the server goes on
}

func TestStrategyHooks(t *testing.T) {
	gadgets := &registry.Resource{
		Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true,
		Strategy: registry.Strategy{
			Default: func(_ context.Context, o registry.Object) error {
				if _, ok := o["spec"]; !ok {
					o["spec"] = map[string]any{"size": "M"}
				}
				return nil
			},
			ValidateCreate: func(_ context.Context, o registry.Object) []registry.FieldError {
				if s, _ := o["spec"].(map[string]any)["size"].(string); s == "XXL" {
					return []registry.FieldError{{Type: "FieldValueNotSupported", Field: "spec.size", Value: s, Detail: `supported values: "S", "M", "L"`}}
				}
				return nil
			},
			ValidateDelete: func(_ context.Context, o registry.Object) error {
				if o.Labels()["protected"] == "true" {
					return &registry.StatusError{Status: registry.Status{Kind: "Status", APIVersion: "v1", Status: "Failure", Code: 403, Reason: "Forbidden", Message: "protected"}}
				}
				return nil
			},
		},
		Subresources: map[string]registry.SubresourceHandler{
			"size": func(_ context.Context, req registry.SubresourceRequest) (any, error) {
				return map[string]any{"name": req.Name, "size": req.Object["spec"].(map[string]any)["size"]}, nil
			},
		},
	}
	s := newServer(t, gadgets)
	base := "/apis/example.com/v1/namespaces/default/gadgets"
	got := s.must(201, "POST", base, map[string]any{"metadata": map[string]any{"name": "g", "labels": map[string]any{"protected": "true"}}})
	if str(got, "spec.size") != "M" {
		t.Errorf("default: got spec %v; want size M", got["spec"])
	}
	st := s.must(422, "POST", base, map[string]any{"metadata": map[string]any{"name": "h"}, "spec": map[string]any{"size": "XXL"}})
	if c := path(st, "details.causes").([]any)[0].(map[string]any); c["field"] != "spec.size" || c["reason"] != "FieldValueNotSupported" {
		t.Errorf("validation cause: got %v", c)
	}
	if r := s.do("DELETE", base+"/g", nil); r.code != 403 {
		t.Errorf("ValidateDelete refusing: got %d; want 403", r.code)
	}
	if sub := s.must(200, "GET", base+"/g/size", nil); sub["size"] != "M" || sub["name"] != "g" {
		t.Errorf("custom subresource: got %v", sub)
	}
	rl := s.must(200, "GET", "/apis/example.com/v1", nil)
	found := false
	for _, r := range rl["resources"].([]any) {
		found = found || r.(map[string]any)["name"] == "gadgets/size"
	}
	if !found {
		t.Error("discovery does not list gadgets/size")
	}
}

func TestDeleteOptionsBody(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", widgetsPath, widget("a", nil, nil))
	r := s.do("DELETE", widgetsPath+"/a", "k8s\x00\x0a", "Content-Type", "application/vnd.kubernetes.protobuf")
	if r.code != 400 {
		t.Errorf("truncated protobuf DeleteOptions: got %d %s; want 400", r.code, r.body)
	}
	if r := s.do("DELETE", widgetsPath+"/a", "{}", "Content-Type", "text/plain"); r.code != 415 {
		t.Errorf("text/plain DeleteOptions: got %d %s; want 415", r.code, r.body)
	}
	if r := s.do("DELETE", widgetsPath+"/a", `{"gracePeriodSeconds":"x"}`); r.code != 400 {
		t.Errorf("malformed DeleteOptions: got %d %s; want 400", r.code, r.body)
	}
	s.must(200, "GET", widgetsPath+"/a", nil)
}

func TestServerSideApply(t *testing.T) {
	s := newServer(t)
	apply := func(manager string, body string, force bool, ct string) response {
		q := "?fieldManager=" + manager
		if force {
			q += "&force=true"
		}
		return s.do("PATCH", widgetsPath+"/a"+q, body, "Content-Type", ct)
	}
	yamlApply := "application/apply-patch+yaml"
	if r := apply("m1", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a\nspec:\n  color: red\n", false, yamlApply); r.code != 201 {
		t.Fatalf("apply-as-create: %d %s; want 201", r.code, r.body)
	}
	cb, err := cbor.Marshal(map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"replicas": int64(2)}})
	if err != nil {
		t.Fatal(err)
	}
	r := apply("m2", string(cb), false, "application/apply-patch+cbor")
	if r.code != 200 {
		t.Fatalf("CBOR apply by a second manager: %d %s", r.code, r.body)
	}
	got := r.obj(t)
	if str(got, "spec.color") != "red" || path(got, "spec.replicas") != float64(2) {
		t.Errorf("after two managers: spec = %v; want color red and replicas 2", got["spec"])
	}
	if mf, _ := path(got, "metadata.managedFields").([]any); len(mf) != 2 {
		t.Errorf("managedFields = %v; want one Apply entry per manager", mf)
	}
	r = apply("m2", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a\nspec:\n  color: blue\n", false, yamlApply)
	if r.code != 409 {
		t.Fatalf("conflicting apply: %d %s; want 409", r.code, r.body)
	}
	causes, _ := path(r.obj(t), "details.causes").([]any)
	if len(causes) != 1 || str(causes[0].(map[string]any), "field") != ".spec.color" || str(causes[0].(map[string]any), "reason") != "FieldManagerConflict" {
		t.Errorf("conflict causes = %v; want one FieldManagerConflict on .spec.color", causes)
	}
	if r := apply("m2", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a\nspec:\n  color: blue\n", true, yamlApply); r.code != 200 || str(r.obj(t), "spec.color") != "blue" {
		t.Errorf("forced apply: %d %s", r.code, r.body)
	}
	if r := apply("m3", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a\n  managedFields: [{manager: x}]\n", false, yamlApply); r.code != 400 {
		t.Errorf("apply carrying managedFields: %d %s; want 400", r.code, r.body)
	}
	if r := apply("m3", "{", false, yamlApply); r.code != 400 {
		t.Errorf("malformed apply body: %d; want 400", r.code)
	}
}
