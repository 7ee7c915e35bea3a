package registry_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

// sprockets is a custom resource (kube's wire behaviour for CRDs) with
// status and scale subresources, and no schema.
func sprockets() *registry.Resource {
	return &registry.Resource{
		Group: "example.com", Version: "v1", Kind: "Sprocket", Plural: "sprockets", Namespaced: true,
		Status: true, Generation: true, Custom: true,
		Scale: &registry.Scale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.readyReplicas"},
	}
}

const sprocketsPath = "/apis/example.com/v1/namespaces/default/sprockets"

const (
	jsonPatch  = "application/json-patch+json"
	mergePatch = "application/merge-patch+json"
	applyPatch = "application/apply-patch+yaml"
)

// causesOf is a Status's causes as "field: message" strings.
func causesOf(st map[string]any) []string {
	cs, _ := path(st, "details.causes").([]any)
	var out []string
	for _, c := range cs {
		m := c.(map[string]any)
		f, _ := m["field"].(string)
		msg, _ := m["message"].(string)
		out = append(out, f+": "+msg)
	}
	return out
}

// TestPatchErrorsAsKube checks the answers to bad patches against kube's
// (the differential corpus's widgets "patch *" and "scale *" cases).
func TestPatchErrorsAsKube(t *testing.T) {
	s := newServer(t, sprockets())
	s.must(201, "POST", sprocketsPath+"?fieldManager=creator", map[string]any{"apiVersion": "example.com/v1", "kind": "Sprocket",
		"metadata": map[string]any{"name": "g"}, "spec": map[string]any{"color": "red", "replicas": 1}})
	s.must(201, "POST", widgetsPath, widget("w", nil, map[string]any{"replicas": 1}))
	const quoted = ` "" is invalid: patch: Invalid value: "{`
	tests := []struct {
		name, method, path, ct, body string
		code                         int
		reason                       string
		message                      string   // the whole message, unless prefix
		prefix                       bool     // message is the message's prefix, suffix its end
		suffix                       string   // with prefix: how the message ends
		contains                     []string // with prefix: what the message has besides
		causes                       []string // nil: not checked; "-" none
		noDetails                    bool     // the Status has no details at all
		emptyDetails                 bool     // details is {}
		warning                      string
	}{
		{name: "json patch test fails", method: "PATCH", path: sprocketsPath + "/g", ct: jsonPatch,
			body: `[{"op":"test","path":"/spec/color","value":"blue"}]`, code: 422, reason: "Invalid",
			message: "the server rejected our request due to an error in our request", emptyDetails: true},
		{name: "json patch unknown op", method: "PATCH", path: sprocketsPath + "/g", ct: jsonPatch,
			body: `[{"op":"frobnicate","path":"/spec/color"}]`, code: 422, reason: "Invalid",
			message: "the server rejected our request due to an error in our request", emptyDetails: true},
		{name: "json patch without path", method: "PATCH", path: widgetsPath + "/w", ct: jsonPatch,
			body: `[{"op":"add","value":1}]`, code: 422, reason: "Invalid",
			message: "the server rejected our request due to an error in our request", emptyDetails: true},
		{name: "json patch not a list", method: "PATCH", path: sprocketsPath + "/g", ct: jsonPatch,
			body: `{"op":"add"}`, code: 400, reason: "BadRequest",
			message: "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"},
		{name: "merge null", method: "PATCH", path: sprocketsPath + "/g", ct: mergePatch, body: `null`,
			code: 400, reason: "BadRequest", message: "Invalid JSON Patch"},
		{name: "merge not JSON", method: "PATCH", path: sprocketsPath + "/g", ct: mergePatch, body: `{`,
			code: 400, reason: "BadRequest", message: "invalid JSON patch"},
		{name: "not JSON, before the object is read", method: "PATCH", path: sprocketsPath + "/nope", ct: jsonPatch, body: `[`,
			code: 400, reason: "BadRequest", message: "invalid JSON patch"},
		{name: "scale patch not JSON", method: "PATCH", path: sprocketsPath + "/g/scale", ct: mergePatch, body: `{`,
			code: 400, reason: "BadRequest", message: "invalid JSON patch"},
		{name: "unknown patch type, custom resource", method: "PATCH", path: sprocketsPath + "/g", ct: "application/x-patch", body: `{}`,
			code: 415, reason: "UnsupportedMediaType", noDetails: true,
			message: "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/apply-patch+cbor"},
		{name: "unknown patch type, scale", method: "PATCH", path: sprocketsPath + "/g/scale", ct: "application/strategic-merge-patch+json", body: `{}`,
			code: 415, reason: "UnsupportedMediaType", noDetails: true,
			message: "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/apply-patch+cbor"},
		{name: "unknown subresource, custom resource", method: "GET", path: sprocketsPath + "/g/nope",
			code: 404, reason: "NotFound", message: `sprockets.example.com "g" not found`},
		{name: "unknown subresource, built-in kind", method: "GET", path: widgetsPath + "/w/nope",
			code: 404, reason: "NotFound", message: "the server could not find the requested resource", emptyDetails: true},
		{name: "uid changed: named once, two causes", method: "PATCH", path: sprocketsPath + "/g", ct: mergePatch,
			body: `{"metadata":{"uid":"00000000-0000-0000-0000-000000000001"}}`, code: 422, reason: "Invalid",
			message: `Sprocket.example.com "g" is invalid: metadata.uid: Invalid value: "00000000-0000-0000-0000-000000000001": field is immutable`,
			causes: []string{`metadata.uid: Invalid value: "00000000-0000-0000-0000-000000000001": field is immutable`,
				`metadata.uid: Invalid value: "00000000-0000-0000-0000-000000000001": field is immutable`}},
		{name: "labels not an object", method: "PATCH", path: sprocketsPath + "/g", ct: mergePatch,
			body: `{"metadata":{"labels":"x"}}`, code: 422, reason: "Invalid", message: quoted, prefix: true,
			suffix: `": json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string`},
		{name: "json patch copies a string to labels, built-in kind", method: "PATCH", path: widgetsPath + "/w", ct: jsonPatch,
			body: `[{"op":"copy","from":"/metadata/name","path":"/metadata/labels"}]`, code: 422, reason: "Invalid",
			message: quoted + `\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"creationTimestamp\":`, prefix: true,
			contains: []string{`\"labels\":\"w\",\"managedFields\":[{\"manager\":\"Go-http-client\",\"operation\":\"Update\",\"apiVersion\":\"example.com/v1\",\"time\":`},
			suffix:   `": json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string`},
		{name: "uid changed, built-in kind: one cause", method: "PATCH", path: widgetsPath + "/w", ct: mergePatch,
			body: `{"metadata":{"uid":"00000000-0000-0000-0000-000000000001"}}`, code: 422, reason: "Invalid",
			message: `Widget.example.com "w" is invalid: metadata.uid: Invalid value: "00000000-0000-0000-0000-000000000001": field is immutable`,
			causes:  []string{`metadata.uid: Invalid value: "00000000-0000-0000-0000-000000000001": field is immutable`}},
		{name: "unknown patch type, built-in kind", method: "PATCH", path: widgetsPath + "/w", ct: "application/x-patch", body: `{}`,
			code: 415, reason: "UnsupportedMediaType", message: "415: Unsupported Media Type", emptyDetails: true},
		{name: "a label value not a string", method: "PATCH", path: sprocketsPath + "/g", ct: mergePatch,
			body: `{"metadata":{"labels":{"a":1},"name":2}}`, code: 422, reason: "Invalid", message: quoted, prefix: true,
			suffix: `": json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string`},
		{name: "generation not an integer", method: "PATCH", path: sprocketsPath + "/g", ct: mergePatch,
			body: `{"metadata":{"generation":1.5}}`, code: 422, reason: "Invalid", message: quoted, prefix: true,
			suffix: `": json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64`},
		{name: "apiVersion changed", method: "PATCH", path: sprocketsPath + "/g", ct: mergePatch,
			body: `{"apiVersion":"example.com/v2"}`, code: 422, reason: "Invalid",
			message: `Sprocket.example.com "g" is invalid: apiVersion: Invalid value: "example.com/v2": must be example.com/v1`,
			warning: `299 - "unknown field \"spec\""`},
		{name: "apiVersion changed, Strict", method: "PATCH", path: sprocketsPath + "/g?fieldValidation=Strict", ct: mergePatch,
			body: `{"apiVersion":"example.com/v2"}`, code: 422, reason: "Invalid", message: quoted, prefix: true,
			suffix: `": strict decoding error: unknown field "spec"`},
		{name: "scale replicas negative", method: "PATCH", path: sprocketsPath + "/g/scale", ct: mergePatch,
			body: `{"spec":{"replicas":-1}}`, code: 422, reason: "Invalid",
			message: `Sprocket.example.com "g" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer`},
		{name: "scale put replicas negative", method: "PUT", path: sprocketsPath + "/g/scale", ct: "application/json",
			body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"g"},"spec":{"replicas":-1}}`, code: 422, reason: "Invalid",
			message: `Sprocket.example.com "g" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer`},
		{name: "scale replicas a string", method: "PATCH", path: sprocketsPath + "/g/scale", ct: mergePatch,
			body: `{"spec":{"replicas":"x"}}`, code: 422, reason: "Invalid",
			message: quoted + `\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\",\"metadata\":{\"name\":\"g\",\"namespace\":\"default\",\"uid\":`, prefix: true,
			suffix: `,\"spec\":{\"replicas\":\"x\"},\"status\":{\"replicas\":0}}": json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32`},
		{name: "status replicas a string", method: "PATCH", path: sprocketsPath + "/g/status", ct: mergePatch,
			body: `{"status":{"readyReplicas":"two"}}`, code: 422, reason: "Invalid",
			message: `Sprocket.example.com "g" is invalid: .status.readyReplicas: Invalid value: 0: .status.readyReplicas accessor error: two is of the type string, expected int64`,
			causes:  []string{`.status.readyReplicas: Invalid value: 0: .status.readyReplicas accessor error: two is of the type string, expected int64`}},
		{name: "scale apply conflicts with the creator", method: "PATCH", path: sprocketsPath + "/g/scale?fieldManager=scaler", ct: applyPatch,
			body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"g"},"spec":{"replicas":5}}`, code: 409, reason: "Conflict",
			message: `Apply failed with 1 conflict: conflict with "creator" using autoscaling/v1: .spec.replicas`,
			causes:  []string{`.spec.replicas: conflict with "creator" using autoscaling/v1`}},
		{name: "scale apply without a field manager", method: "PATCH", path: sprocketsPath + "/g/scale", ct: applyPatch,
			body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"g"},"spec":{"replicas":5}}`, code: 422, reason: "Invalid",
			message: "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"},
		{name: "json patch leaves no object", method: "PATCH", path: sprocketsPath + "/g", ct: jsonPatch,
			body: `[{"op":"replace","path":"","value":[1]}]`, code: 422, reason: "Invalid",
			message: ` "" is invalid: patch: Invalid value: "[1]": couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }`},
		{name: "json patch not a list, field validation ignored", method: "PATCH", path: sprocketsPath + "/g?fieldValidation=Ignore", ct: jsonPatch,
			body: `{"op":"add"}`, code: 400, reason: "BadRequest", message: "json: cannot unmarshal object into Go value of type jsonpatch.Patch"},
		{name: "apiVersion of another group: no warning", method: "PATCH", path: sprocketsPath + "/g", ct: mergePatch,
			body: `{"apiVersion":"other.example.com/v1"}`, code: 422, reason: "Invalid",
			message: `Sprocket.other.example.com "g" is invalid: apiVersion: Invalid value: "other.example.com/v1": must be example.com/v1`},
		{name: "scale labels a string: the untouched managedFields in their order", method: "PATCH", path: sprocketsPath + "/g/scale", ct: mergePatch,
			body: `{"metadata":{"labels":"x"}}`, code: 422, reason: "Invalid",
			message: quoted + `\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\",\"metadata\":{\"creationTimestamp\":`, prefix: true,
			contains: []string{`\"labels\":\"x\",\"managedFields\":[{\"manager\":\"creator\",\"operation\":\"Update\",\"apiVersion\":\"autoscaling/v1\",\"time\":`},
			suffix:   `,\"spec\":{\"replicas\":1},\"status\":{\"replicas\":0}}": json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string`},
		{name: "apply of YAML that is not", method: "PATCH", path: sprocketsPath + "/g?fieldManager=a", ct: applyPatch, body: `spec: [`,
			code: 400, reason: "BadRequest", message: "error encoding patch: yaml: line 1: did not find expected node content"},
		{name: "scale apply of YAML that is not", method: "PATCH", path: sprocketsPath + "/g/scale?fieldManager=a", ct: applyPatch, body: `spec: [`,
			code: 400, reason: "BadRequest", message: "error encoding patch: yaml: line 1: did not find expected node content"},
		{name: "scale apply of another kind", method: "PATCH", path: sprocketsPath + "/g/scale?fieldManager=scaler", ct: applyPatch,
			body: `{"apiVersion":"autoscaling/v1","kind":"Sprocket","metadata":{"name":"g"},"spec":{"replicas":5}}`, code: 400, reason: "BadRequest",
			message: "invalid object type: autoscaling/v1, Kind=Sprocket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var header []string
			if tt.ct != "" {
				header = []string{"Content-Type", tt.ct}
			}
			var body any
			if tt.body != "" {
				body = tt.body
			}
			r := s.do(tt.method, tt.path, body, header...)
			st := r.obj(t)
			if r.code != tt.code || st["reason"] != tt.reason {
				t.Fatalf("got %d %v; want %d %s: %s", r.code, st["reason"], tt.code, tt.reason, r.body)
			}
			msg, _ := st["message"].(string)
			switch {
			case tt.prefix && (!strings.HasPrefix(msg, tt.message) || !strings.HasSuffix(msg, tt.suffix)):
				t.Errorf("message %q; want it to start %q and end %q", msg, tt.message, tt.suffix)
			case !tt.prefix && msg != tt.message:
				t.Errorf("message %q; want %q", msg, tt.message)
			}
			for _, c := range tt.contains {
				if !strings.Contains(msg, c) {
					t.Errorf("message %q; want it to contain %q", msg, c)
				}
			}
			if tt.prefix && !json.Valid([]byte(quotedValue(t, msg))) {
				t.Errorf("the quoted patched object is not JSON: %s", msg)
			}
			d, hasDetails := st["details"]
			switch {
			case tt.noDetails && hasDetails:
				t.Errorf("details %v; want none", d)
			case tt.emptyDetails && (!hasDetails || len(d.(map[string]any)) != 0):
				t.Errorf("details %v; want {}", d)
			}
			if tt.causes != nil && !slices.Equal(causesOf(st), tt.causes) {
				t.Errorf("causes %q; want %q", causesOf(st), tt.causes)
			}
			if got := r.header.Get("Warning"); got != tt.warning {
				t.Errorf("Warning %q; want %q", got, tt.warning)
			}
		})
	}
	// None of them changed anything.
	g := s.must(200, "GET", sprocketsPath+"/g", nil)
	if path(g, "spec.replicas") != float64(1) || str(g, "spec.color") != "red" || path(g, "metadata.generation") != float64(1) {
		t.Errorf("gadget after the refused patches: %v", g)
	}
}

// quotedValue is the patched object a "patch: Invalid value" message
// quotes, unquoted.
func quotedValue(t *testing.T, msg string) string {
	t.Helper()
	start := strings.Index(msg, `Invalid value: "`)
	end := strings.LastIndex(msg, `": `)
	if start < 0 || end < start {
		t.Fatalf("no quoted value in %q", msg)
	}
	var v string
	if err := json.Unmarshal([]byte(msg[start+len(`Invalid value: `):end+1]), &v); err != nil {
		t.Fatalf("quoted value of %q: %v", msg, err)
	}
	return v
}

// TestScaleManagedFieldsAsKube checks the managedFields writes of /scale
// leave, as kube's ScaleHandler maps them (the corpus's "scale *" cases).
func TestScaleManagedFieldsAsKube(t *testing.T) {
	type entry struct{ manager, operation, subresource, fields string }
	const replicas, color = `{"f:spec":{"f:replicas":{}}}`, `{"f:spec":{".":{},"f:color":{}}}`
	scale := func(replicas int) string {
		return `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"g"},"spec":{"replicas":` + string(rune('0'+replicas)) + `}}`
	}
	tests := []struct {
		name, method, query, ct, body string
		replicas                      float64
		unowned                       bool    // created without spec.replicas: no entry owns them
		want                          []entry // sorted by manager, operation, fields
	}{
		// kube's field manager does not track an update of an object
		// whose managedFields are empty: the Scale's, when no entry owns
		// the replicas.
		{name: "a scale no one owned is not tracked", method: "PATCH", query: "?fieldManager=writer", ct: "application/merge-patch+json", body: `{"spec":{"replicas":5}}`,
			replicas: 5, unowned: true, want: []entry{{"creator", "Update", "", color}}},
		{name: "apply with force takes the replicas", method: "PATCH", query: "?fieldManager=scaler&force=true", ct: applyPatch, body: scale(5),
			replicas: 5, want: []entry{{"creator", "Update", "", color}, {"scaler", "Apply", "scale", replicas}}},
		{name: "apply of the same replicas shares them", method: "PATCH", query: "?fieldManager=scaler", ct: applyPatch, body: scale(1),
			replicas: 1, want: []entry{{"creator", "Update", "", color}, {"creator", "Update", "", replicas}, {"scaler", "Apply", "scale", replicas}}},
		{name: "put without kind is not tracked", method: "PUT", query: "?fieldManager=writer", ct: "application/json", body: `{"metadata":{"name":"g"},"spec":{"replicas":5}}`,
			replicas: 5, want: []entry{{"creator", "Update", "", color}, {"creator", "Update", "", replicas}}},
		{name: "put with kind is the writer's", method: "PUT", query: "?fieldManager=writer", ct: "application/json", body: scale(5),
			replicas: 5, want: []entry{{"creator", "Update", "", color}, {"writer", "Update", "scale", replicas}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, sprockets())
			spec := map[string]any{"color": "red", "replicas": 1}
			if tt.unowned {
				delete(spec, "replicas")
			}
			s.must(201, "POST", sprocketsPath+"?fieldManager=creator", map[string]any{"apiVersion": "example.com/v1", "kind": "Sprocket",
				"metadata": map[string]any{"name": "g"}, "spec": spec})
			sc := s.must(200, tt.method, sprocketsPath+"/g/scale"+tt.query, tt.body, "Content-Type", tt.ct)
			if sc["kind"] != "Scale" || path(sc, "spec.replicas") != tt.replicas {
				t.Errorf("answer: %v; want a Scale of %v replicas", sc, tt.replicas)
			}
			g := s.must(200, "GET", sprocketsPath+"/g", nil)
			if path(g, "spec.replicas") != tt.replicas {
				t.Errorf("spec.replicas %v; want %v", path(g, "spec.replicas"), tt.replicas)
			}
			mfs, _ := path(g, "metadata.managedFields").([]any)
			var got []entry
			for _, e := range mfs {
				m := e.(map[string]any)
				fv, _ := json.Marshal(m["fieldsV1"])
				sub, _ := m["subresource"].(string)
				got = append(got, entry{m["manager"].(string), m["operation"].(string), sub, string(fv)})
			}
			slices.SortFunc(got, func(a, b entry) int {
				return strings.Compare(a.manager+a.operation+a.fields, b.manager+b.operation+b.fields)
			})
			if !slices.Equal(got, tt.want) {
				t.Errorf("managedFields %v; want %v", got, tt.want)
			}
		})
	}
}
