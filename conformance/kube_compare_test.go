package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/cel"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	kschema "github.com/kapi-dev/kapi/schema"
)

// Comparison tests: the same raw HTTP request goes to kapi's example server
// and to the reference apiextensions-apiserver (kube_test.go), both serving
// the same CRD, and the answers must agree: status code, the Status's
// reason, message and details (kind, group, name, causes), the Warning
// headers and, where a step asks for it, the body. Only what must differ
// between two servers is normalised (uids, timestamps, resourceVersions,
// generated names). Issue 8.

// gadgetsCRD is the CRD of the comparisons: a widget-like resource whose
// schema has nested objects, required fields, enums, patterns, bounds,
// list-maps, a set, an int-or-string, defaults and a subtree that keeps
// unknown fields.
const gadgetsCRD = "testdata/crds/validation.example.com.yaml"

// gadgets is the collection path of gadgets in the scenario's namespace,
// written {ns}.
const gadgets = "/apis/validation.example.com/v1/namespaces/{ns}/gadgets"

// compareUserAgent is the User-Agent of every compared request, so that
// both servers name the same field manager.
const compareUserAgent = "compare/v0.0.0 (conformance) kubernetes/compare"

// compareLogEnv, set to anything, logs both answers of every step.
const compareLogEnv = "KAPI_COMPARE_LOG"

// kreq is one raw HTTP request, sent unchanged to both servers.
type kreq struct {
	Method string
	// Path is absolute; {ns} is replaced by the scenario's namespace.
	Path        string
	Query       string
	ContentType string
	// Body may contain {ns}, and {rv}: the resourceVersion of the last
	// object this server answered with in the scenario.
	Body string
}

func (r kreq) String() string {
	s := r.Method + " " + r.Path
	if r.Query != "" {
		s += "?" + r.Query
	}
	if r.ContentType != "" {
		s += " (" + r.ContentType + ")"
	}
	return s
}

// kresp is a server's answer, reduced to what the comparison looks at.
type kresp struct {
	Code     int
	Warnings []string `json:",omitempty"`
	// Status is set when the body is a Status.
	Status *kstatus `json:",omitempty"`
	// Body is the decoded JSON body (after normalisation), set when the
	// step compares bodies.
	Body any `json:",omitempty"`
	// obj is the decoded JSON body, before normalisation.
	obj map[string]any
	raw []byte
}

// kstatus is the part of a metav1.Status the comparison looks at.
type kstatus struct {
	Status  string
	Reason  string
	Message string
	Code    int
	Details *kdetails `json:",omitempty"`
}

type kdetails struct {
	Name   string   `json:",omitempty"`
	Group  string   `json:",omitempty"`
	Kind   string   `json:",omitempty"`
	Causes []kcause `json:",omitempty"`
}

type kcause struct {
	Type    string `json:"reason"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// do sends r to the server at cfg, with {ns} in its path and body
// replaced by ns and {rv} in its body by rv.
func do(ctx context.Context, cfg *rest.Config, ns, rv string, r kreq) (kresp, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return kresp{}, err
	}
	u := strings.TrimSuffix(cfg.Host, "/") + strings.ReplaceAll(r.Path, "{ns}", ns)
	if r.Query != "" {
		u += "?" + r.Query
	}
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(strings.NewReplacer("{ns}", ns, "{rv}", rv).Replace(r.Body))
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		return kresp{}, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", compareUserAgent)
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return kresp{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return kresp{}, err
	}
	out := kresp{Code: resp.StatusCode, raw: raw, Warnings: resp.Header.Values("Warning")}
	slices.Sort(out.Warnings)
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		out.obj = obj
	}
	if obj["kind"] == "Status" {
		var st kstatus
		var full struct {
			Details *struct {
				Name   string `json:"name"`
				Group  string `json:"group"`
				Kind   string `json:"kind"`
				Causes []struct {
					Type    string `json:"reason"`
					Field   string `json:"field"`
					Message string `json:"message"`
				} `json:"causes"`
			} `json:"details"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
			Code    int    `json:"code"`
		}
		if err := json.Unmarshal(raw, &full); err != nil {
			return kresp{}, fmt.Errorf("decode Status %s: %w", raw, err)
		}
		st = kstatus{Status: full.Status, Reason: full.Reason, Message: normalizeMessage(full.Message), Code: full.Code}
		if d := full.Details; d != nil {
			st.Details = &kdetails{Name: d.Name, Group: d.Group, Kind: d.Kind}
			for _, c := range d.Causes {
				st.Details.Causes = append(st.Details.Causes, kcause{Type: c.Type, Field: c.Field, Message: normalizeMessage(c.Message)})
			}
			// The message lists the causes in order; the comparison of
			// causes is of the set.
			slices.SortFunc(st.Details.Causes, func(a, b kcause) int {
				return strings.Compare(a.Field+"\x00"+a.Type+"\x00"+a.Message, b.Field+"\x00"+b.Type+"\x00"+b.Message)
			})
		}
		st.Message = maskCauses(st.Message, st.Details)
		out.Status = &st
	}
	return out, nil
}

// Values that differ between two servers for the same request.
var (
	uidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	rvPattern  = regexp.MustCompile(`(?i)(resourceVersion in record|resourceVersion in the precondition) \(\d+\)`)
	// A patched object quoted in a message (kube's strict decoding
	// errors of patches quote it) has a resourceVersion and timestamps.
	quotedRVPattern = regexp.MustCompile(`(resourceVersion[\\"]*:[\\"]*)\d+`)
	timePattern     = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)
	// The patched object a Strict patch error quotes is kube's raw
	// patched JSON: its key order (and, after a JSON patch, duplicate
	// keys kept verbatim) is an artefact of encoding, not of semantics.
	patchedPattern = regexp.MustCompile(`Invalid value: "\{.*?\}": strict decoding error`)
)

// normalizeMessage replaces uids, resourceVersions and timestamps in a
// Status message.
func normalizeMessage(s string) string {
	s = uidPattern.ReplaceAllString(s, "UID")
	s = timePattern.ReplaceAllString(s, "TIME")
	s = quotedRVPattern.ReplaceAllString(s, "${1}RV")
	s = patchedPattern.ReplaceAllString(s, `Invalid value: "<patched object>": strict decoding error`)
	return rvPattern.ReplaceAllString(s, "$1 (RV)")
}

// maskCauses replaces, in an Invalid Status's message, each cause listed
// in details by "<cause>": kube lists the causes of a custom resource in
// an order that varies from request to request (its schema validator walks
// a Go map), so the message is compared for its frame only, and the causes
// as a set.
func maskCauses(msg string, d *kdetails) string {
	if d == nil {
		return msg
	}
	for _, c := range d.Causes {
		item := c.Message
		if c.Field != "" {
			item = c.Field + ": " + c.Message
		}
		msg = strings.Replace(msg, item, "<cause>", 1)
	}
	return msg
}

// normalizeObject returns a copy of the JSON object obj with what two
// servers cannot agree on replaced: metadata.uid, creationTimestamp,
// resourceVersion, deletionTimestamp, the time of managedFields entries, and
// the name when the server generated it.
func normalizeObject(obj map[string]any) any {
	b, _ := json.Marshal(obj)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	md, _ := c["metadata"].(map[string]any)
	if md == nil {
		return c
	}
	for _, k := range []string{"uid", "creationTimestamp", "resourceVersion", "deletionTimestamp"} {
		if _, ok := md[k]; ok {
			md[k] = strings.ToUpper(k)
		}
	}
	if gn, ok := md["generateName"].(string); ok {
		if n, ok := md["name"].(string); ok && strings.HasPrefix(n, gn) {
			md["name"] = gn + "GENERATED"
		}
	}
	if mfs, ok := md["managedFields"].([]any); ok {
		for _, mf := range mfs {
			if m, ok := mf.(map[string]any); ok {
				if _, ok := m["time"]; ok {
					m["time"] = "TIME"
				}
			}
		}
		// Both servers order entries by operation, then by time in
		// seconds, then by manager, apiVersion and subresource. The two
		// servers' requests fall in different seconds, so with the times
		// gone the order is compared without them.
		slices.SortStableFunc(mfs, func(a, b any) int {
			am, _ := a.(map[string]any)
			bm, _ := b.(map[string]any)
			for _, k := range []string{"operation", "manager", "apiVersion", "subresource"} {
				x, _ := am[k].(string)
				y, _ := bm[k].(string)
				if c := strings.Compare(x, y); c != 0 {
					return c
				}
			}
			return 0
		})
	}
	return c
}

// step is one request of a scenario.
type step struct {
	req kreq
	// body compares the (normalised) response bodies too, not only the
	// status.
	body bool
	// want, if not zero, is the status code kube answers: a check that the
	// scenario still tests what it says (the reference is right by
	// definition; a different answer means the scenario is wrong).
	want int
}

// scenario is a sequence of steps, run on both servers in a namespace of
// its own.
type scenario struct {
	name  string
	steps []step
}

// comparison holds the two servers of a comparison test.
type comparison struct {
	kapi *env
	kube *rest.Config
}

// newComparison starts kapi's example server with the CRDs of the
// manifest files crdFiles, and installs them on the reference server.
func newComparison(t *testing.T, crdFiles ...string) *comparison {
	t.Helper()
	kube := kubeServer(t)
	var crds []kschema.CRD
	for _, f := range crdFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		installCRD(t, kube, string(b))
		defs, err := kschema.ParseCRDs(b)
		if err != nil {
			t.Fatalf("ParseCRDs %s: %v", f, err)
		}
		crds = append(crds, defs...)
	}
	reg, err := server.New(withStorage(t, server.Options{Registry: registry.Options{CEL: cel.Compile}, CRDs: crds}))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	return &comparison{kapi: newEnvFor(t, reg), kube: kube}
}

// namespaces numbers the namespaces of scenarios: the reference server is
// shared by every test of the process.
var namespaces atomic.Int64

// run runs each scenario as a parallel subtest.
func (c *comparison) run(t *testing.T, scenarios []scenario) {
	t.Helper()
	seen := map[string]bool{}
	for _, sc := range scenarios {
		if seen[sc.name] {
			t.Fatalf("scenario %q twice", sc.name)
		}
		seen[sc.name] = true
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ns := c.kapi.namespace(t, fmt.Sprintf("compare-%d", namespaces.Add(1)))
			var kapiRV, kubeRV string
			for i, st := range sc.steps {
				kapi, kube := c.compare(t, ns, kapiRV, kubeRV, i, st)
				kapiRV, kubeRV = lastRV(kapi, kapiRV), lastRV(kube, kubeRV)
			}
		})
	}
}

// compare sends st's request to both servers and reports every difference
// (as a diff, -kube +kapi) and a kube answer other than st.want.
func (c *comparison) compare(t *testing.T, ns, kapiRV, kubeRV string, i int, st step) (kapi, kube kresp) {
	t.Helper()
	ctx := testContext(t)
	var err error
	if kube, err = do(ctx, c.kube, ns, kubeRV, st.req); err != nil {
		t.Fatalf("step %d, %s: kube: %v", i, st.req, err)
	}
	if kapi, err = do(ctx, c.kapi.cfg, ns, kapiRV, st.req); err != nil {
		t.Fatalf("step %d, %s: kapi: %v", i, st.req, err)
	}
	if os.Getenv(compareLogEnv) != "" {
		t.Logf("step %d, %s:\nkube: %d %q %s\nkapi: %d %q %s", i, st.req, kube.Code, kube.Warnings, oneLine(kube.raw), kapi.Code, kapi.Warnings, oneLine(kapi.raw))
	}
	if st.want != 0 && kube.Code != st.want {
		t.Errorf("step %d, %s: kube answered %d; the scenario expects %d (fix the scenario):\n%s", i, st.req, kube.Code, st.want, kube.raw)
	}
	if st.body && kube.Status == nil && kapi.Status == nil {
		kube.Body, kapi.Body = normalizeObject(kube.obj), normalizeObject(kapi.obj)
	}
	if d := cmp.Diff(kube, kapi, cmpopts.IgnoreUnexported(kresp{})); d != "" {
		t.Errorf("step %d, %s: kapi differs from kube (-kube +kapi):\n%s\nkube body: %s\nkapi body: %s", i, st.req, d, oneLine(kube.raw), oneLine(kapi.raw))
	}
	return kapi, kube
}

// lastRV returns the resourceVersion of the object r holds, or prev.
func lastRV(r kresp, prev string) string {
	if r.Status != nil {
		return prev
	}
	md, _ := r.obj["metadata"].(map[string]any)
	if rv, ok := md["resourceVersion"].(string); ok && rv != "" {
		return rv
	}
	return prev
}

// oneLine compacts a JSON body for a failure message.
func oneLine(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) == nil {
		b = buf.Bytes()
	}
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// Request builders for gadgets.

// gadgetJSON is a Gadget named name with the JSON spec.
func gadgetJSON(name, spec string) string {
	return `{"apiVersion":"validation.example.com/v1","kind":"Gadget","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

// gadgetJSONAt is gadgetJSON with metadata.resourceVersion {rv}, for a
// PUT: custom resources take no unconditional update.
func gadgetJSONAt(name, spec string) string {
	return `{"apiVersion":"validation.example.com/v1","kind":"Gadget","metadata":{"name":"` + name + `","resourceVersion":"{rv}"},"spec":` + spec + `}`
}

func kpost(body string) kreq {
	return kreq{Method: http.MethodPost, Path: gadgets, ContentType: "application/json", Body: body}
}

func kget(name string) kreq { return kreq{Method: http.MethodGet, Path: gadgets + "/" + name} }

func kput(name, body string) kreq {
	return kreq{Method: http.MethodPut, Path: gadgets + "/" + name, ContentType: "application/json", Body: body}
}

func kpatch(name, contentType, body string) kreq {
	return kreq{Method: http.MethodPatch, Path: gadgets + "/" + name, ContentType: contentType, Body: body}
}

func kdel(name, body string) kreq {
	r := kreq{Method: http.MethodDelete, Path: gadgets + "/" + name, Body: body}
	if body != "" {
		r.ContentType = "application/json"
	}
	return r
}

func kquery(r kreq, q string) kreq {
	r.Query = q
	return r
}

// created is the step that creates a valid gadget name for later steps.
func kcreated(name string) step {
	return step{req: kpost(gadgetJSON(name, `{"size":"small","replicas":2}`)), want: http.StatusCreated}
}

// Issue 8: schema validation of custom resources on create, error for
// error: status 422, the message and every cause.
func TestCompareValidation(t *testing.T) {
	t.Parallel()
	c := newComparison(t, gadgetsCRD)
	invalid := func(name, spec string) []step {
		return []step{{req: kpost(gadgetJSON(name, spec)), want: http.StatusUnprocessableEntity}, {req: kget(name), want: http.StatusNotFound}}
	}
	c.run(t, []scenario{
		{name: "type errors deep down", steps: invalid("types", `{"size":"small","replicas":"three","ratio":"half","port":true,"tags":"a","labels":{"a":1},"options":{"verbose":"yes","level":7},`+
			`"template":{"spec":{"containers":[{"name":"c","image":["x"],"ports":[{"containerPort":"eighty","protocol":6}]},"not-an-object"]}}}`)},
		{name: "spec of the wrong type", steps: invalid("spec-type", `"a string"`)},
		{name: "missing required", steps: invalid("required", `{"template":{"spec":{"containers":[{"image":"x","ports":[{"protocol":"TCP"}]}]}}}`)},
		{name: "enum", steps: invalid("enum", `{"size":"huge","template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80,"protocol":"SCTP"}]}]}}}`)},
		{name: "pattern, length and bounds", steps: invalid("bounds", `{"size":"small","name":"Bad_Name_that_is_too_long","replicas":11,"ratio":1.5,`+
			`"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":0},{"containerPort":70000}]}]}}}`)},
		{name: "negative", steps: invalid("negative", `{"size":"small","replicas":-1,"ratio":-0.5}`)},
		{name: "list-map duplicate keys", steps: invalid("dup-keys", `{"size":"small","template":{"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"a","image":"y"}]}}}`)},
		{name: "list-map duplicate keys after defaulting", steps: invalid("dup-defaulted", `{"size":"small","template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":80,"protocol":"TCP"}]}]}}}`)},
		{name: "set duplicates", steps: invalid("dup-set", `{"size":"small","tags":["x","y","x"]}`)},
		{name: "null in a list", steps: invalid("null-item", `{"size":"small","tags":["x",null]}`)},
		{name: "many errors at once", steps: invalid("many", `{"size":"huge","replicas":"three","name":"Bad","tags":["x","x"],"template":{"spec":{"containers":[{"name":"a"},{"name":"a"},{"image":"z"}]}}}`)},
		{name: "int-or-string string", steps: []step{{req: kpost(gadgetJSON("port-string", `{"size":"small","port":"http"}`)), body: true, want: http.StatusCreated}}},
		{name: "int-or-string integer", steps: []step{{req: kpost(gadgetJSON("port-int", `{"size":"small","port":8080}`)), body: true, want: http.StatusCreated}}},
		{name: "preserve unknown fields subtree", steps: []step{
			{req: kquery(kpost(gadgetJSON("extra", `{"size":"small","extra":{"any":{"deep":[1,"two",{"three":3}]},"x":null}}`)), "fieldValidation=Strict"), body: true, want: http.StatusCreated},
			{req: kget("extra"), body: true, want: http.StatusOK},
		}},
	})
}

// Issue 8: defaults of the schema applied on create (and on a patch that
// removes a defaulted field), in the response and in what is stored.
func TestCompareDefaults(t *testing.T) {
	t.Parallel()
	c := newComparison(t, gadgetsCRD)
	c.run(t, []scenario{
		{name: "minimal", steps: []step{
			{req: kpost(gadgetJSON("minimal", `{"size":"small"}`)), body: true, want: http.StatusCreated},
			{req: kget("minimal"), body: true, want: http.StatusOK},
		}},
		{name: "nested list items", steps: []step{
			{req: kpost(gadgetJSON("nested", `{"size":"small","options":{"level":"debug"},"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":53,"protocol":"UDP"}]},{"name":"b","image":"nginx"}]}}}`)), body: true, want: http.StatusCreated},
		}},
		{name: "null replaced by the default", steps: []step{
			{req: kpost(gadgetJSON("nulls", `{"size":"small","replicas":null,"options":null}`)), body: true, want: http.StatusCreated},
		}},
		{name: "generateName", steps: []step{
			{req: kpost(`{"apiVersion":"validation.example.com/v1","kind":"Gadget","metadata":{"generateName":"gen-"},"spec":{"size":"large"}}`), body: true, want: http.StatusCreated},
		}},
		{name: "merge patch removing a defaulted field", steps: []step{
			{req: kpost(gadgetJSON("repatch", `{"size":"small","replicas":5}`)), want: http.StatusCreated},
			{req: kpatch("repatch", "application/merge-patch+json", `{"spec":{"replicas":null,"options":null}}`), body: true, want: http.StatusOK},
		}},
		{name: "dry run", steps: []step{
			{req: kquery(kpost(gadgetJSON("dry", `{"size":"small"}`)), "dryRun=All"), body: true, want: http.StatusCreated},
		}},
	})
}

// Issue 8: fieldValidation Strict, Warn, Ignore and unset (Warn for a
// client that does not say) with unknown and duplicate fields, on every
// verb that takes a body: the status, the message, the Warning headers,
// and what is stored.
func TestCompareFieldValidation(t *testing.T) {
	t.Parallel()
	c := newComparison(t, gadgetsCRD)
	type verb struct {
		name string
		// create reports whether the request creates the object (no
		// object is created before it).
		create bool
		// unknown and duplicate are the request with unknown fields and
		// with duplicate fields, for the object named name.
		unknown, duplicate func(name string) kreq
	}
	verbs := []verb{
		{name: "POST", create: true,
			unknown: func(n string) kreq {
				return kpost(`{"apiVersion":"validation.example.com/v1","kind":"Gadget","unknownTop":"x","metadata":{"name":"` + n + `","unknownMeta":"y"},` +
					`"spec":{"size":"small","unknownA":1,"options":{"unknownB":true},"template":{"spec":{"containers":[{"name":"a","unknownC":"z"}]}},"extra":{"kept":1}}}`)
			},
			duplicate: func(n string) kreq {
				return kpost(`{"apiVersion":"validation.example.com/v1","kind":"Gadget","metadata":{"name":"` + n + `","name":"` + n + `"},"spec":{"size":"small","size":"large","replicas":1,"replicas":2}}`)
			}},
		{name: "PUT",
			unknown: func(n string) kreq {
				return kput(n, `{"apiVersion":"validation.example.com/v1","kind":"Gadget","unknownTop":"x","metadata":{"name":"`+n+`","resourceVersion":"{rv}","unknownMeta":"y"},`+
					`"spec":{"size":"medium","unknownA":1,"options":{"unknownB":true},"template":{"spec":{"containers":[{"name":"a","unknownC":"z"}]}},"extra":{"kept":1}}}`)
			},
			duplicate: func(n string) kreq {
				return kput(n, `{"apiVersion":"validation.example.com/v1","kind":"Gadget","metadata":{"name":"`+n+`","resourceVersion":"{rv}"},"spec":{"size":"small","size":"large","replicas":1,"replicas":2}}`)
			}},
		{name: "merge PATCH",
			unknown: func(n string) kreq {
				return kpatch(n, "application/merge-patch+json", `{"unknownTop":"x","metadata":{"unknownMeta":"y"},"spec":{"size":"medium","unknownA":1,"options":{"unknownB":true},"extra":{"kept":1}}}`)
			},
			duplicate: func(n string) kreq {
				return kpatch(n, "application/merge-patch+json", `{"spec":{"size":"medium","size":"large","replicas":1,"replicas":2}}`)
			}},
		{name: "JSON PATCH",
			unknown: func(n string) kreq {
				return kpatch(n, "application/json-patch+json", `[{"op":"add","path":"/unknownTop","value":"x"},{"op":"add","path":"/spec/unknownA","value":1},{"op":"add","path":"/spec/options","value":{"unknownB":true}},{"op":"replace","path":"/spec/size","value":"medium"}]`)
			},
			duplicate: func(n string) kreq {
				return kpatch(n, "application/json-patch+json", `[{"op":"replace","path":"/spec","value":{"size":"medium","size":"large","replicas":1,"replicas":2}}]`)
			}},
		{name: "apply", create: true,
			unknown: func(n string) kreq {
				return kreq{Method: http.MethodPatch, Path: gadgets + "/" + n, Query: "fieldManager=applier", ContentType: "application/apply-patch+yaml",
					// One unknown field: kube reports only one of them,
					// picked at random (its typed-patch conversion
					// stops at the first unknown field of a map).
					Body: "apiVersion: validation.example.com/v1\nkind: Gadget\nmetadata:\n  name: " + n + "\nspec:\n  size: medium\n  unknownA: 1\n  extra:\n    kept: 1\n"}
			},
			duplicate: func(n string) kreq {
				return kreq{Method: http.MethodPatch, Path: gadgets + "/" + n, Query: "fieldManager=applier", ContentType: "application/apply-patch+yaml",
					Body: "apiVersion: validation.example.com/v1\nkind: Gadget\nmetadata:\n  name: " + n + "\nspec:\n  size: medium\n  size: large\n  replicas: 1\n  replicas: 2\n"}
			}},
	}
	var scenarios []scenario
	for _, mode := range []string{"", "Strict", "Warn", "Ignore"} {
		for _, v := range verbs {
			for _, problem := range []string{"unknown", "duplicate"} {
				if v.name == "apply" && problem == "unknown" {
					// kube answers 500 ("failed to create typed patch
					// object ... field not declared in schema"), naming
					// one unknown field picked at random; kapi answers
					// 422 with the same message
					// (TestApplyUnknownFieldIsInvalid).
					continue
				}
				name := strings.ToLower(strings.ReplaceAll(v.name, " ", "-")) + "-" + problem
				r := v.unknown(name)
				if problem == "duplicate" {
					r = v.duplicate(name)
				}
				if mode != "" {
					r.Query = strings.TrimPrefix(r.Query+"&fieldValidation="+mode, "&")
				}
				var steps []step
				if !v.create {
					steps = append(steps, kcreated(name))
				}
				steps = append(steps, step{req: r, body: true}, step{req: kget(name), body: true})
				modeName := mode
				if modeName == "" {
					modeName = "unset"
				}
				scenarios = append(scenarios, scenario{name: modeName + "/" + v.name + "/" + problem + " fields", steps: steps})
			}
		}
	}
	scenarios = append(scenarios, scenario{name: "bogus fieldValidation", steps: []step{
		{req: kquery(kpost(gadgetJSON("bogus", `{"size":"small"}`)), "fieldValidation=Bogus")},
		{req: kget("bogus")},
	}})
	c.run(t, scenarios)
}

// Issue 8: dryRun=All on every write persists nothing; an unknown dryRun
// value is refused.
func TestCompareDryRun(t *testing.T) {
	t.Parallel()
	c := newComparison(t, gadgetsCRD)
	c.run(t, []scenario{
		{name: "POST", steps: []step{
			{req: kquery(kpost(gadgetJSON("a", `{"size":"small"}`)), "dryRun=All"), body: true, want: http.StatusCreated},
			{req: kget("a"), want: http.StatusNotFound},
		}},
		{name: "PUT", steps: []step{
			kcreated("a"),
			{req: kquery(kput("a", gadgetJSONAt("a", `{"size":"large"}`)), "dryRun=All"), body: true, want: http.StatusOK},
			{req: kget("a"), body: true, want: http.StatusOK},
		}},
		{name: "PUT creating", steps: []step{
			{req: kquery(kput("a", gadgetJSON("a", `{"size":"large"}`)), "dryRun=All"), body: true},
			{req: kget("a"), want: http.StatusNotFound},
		}},
		{name: "merge PATCH", steps: []step{
			kcreated("a"),
			{req: kquery(kpatch("a", "application/merge-patch+json", `{"spec":{"size":"large"}}`), "dryRun=All"), body: true, want: http.StatusOK},
			{req: kget("a"), body: true, want: http.StatusOK},
		}},
		{name: "apply", steps: []step{
			{req: kreq{Method: http.MethodPatch, Path: gadgets + "/a", Query: "fieldManager=applier&dryRun=All", ContentType: "application/apply-patch+yaml",
				Body: "apiVersion: validation.example.com/v1\nkind: Gadget\nmetadata:\n  name: a\nspec:\n  size: large\n"}, body: true, want: http.StatusCreated},
			{req: kget("a"), want: http.StatusNotFound},
		}},
		{name: "DELETE", steps: []step{
			kcreated("a"),
			{req: kquery(kdel("a", ""), "dryRun=All"), body: true, want: http.StatusOK},
			{req: kget("a"), body: true, want: http.StatusOK},
		}},
		{name: "DELETE with options in the body", steps: []step{
			kcreated("a"),
			{req: kdel("a", `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`), body: true, want: http.StatusOK},
			{req: kget("a"), want: http.StatusOK},
		}},
		{name: "DELETE collection", steps: []step{
			kcreated("a"),
			{req: kreq{Method: http.MethodDelete, Path: gadgets, Query: "dryRun=All"}, want: http.StatusOK},
			{req: kget("a"), want: http.StatusOK},
		}},
		{name: "Bogus on POST", steps: []step{
			{req: kquery(kpost(gadgetJSON("a", `{"size":"small"}`)), "dryRun=Bogus")},
			{req: kget("a"), want: http.StatusNotFound},
		}},
		{name: "Bogus on DELETE", steps: []step{
			kcreated("a"),
			{req: kquery(kdel("a", ""), "dryRun=Bogus")},
			{req: kget("a"), want: http.StatusOK},
		}},
		{name: "Bogus on PATCH", steps: []step{
			kcreated("a"),
			{req: kquery(kpatch("a", "application/merge-patch+json", `{"spec":{"size":"large"}}`), "dryRun=Bogus")},
		}},
	})
}

// Issue 8: DELETE bodies that are not DeleteOptions, or DeleteOptions that
// cannot be honoured.
func TestCompareDeleteOptions(t *testing.T) {
	t.Parallel()
	c := newComparison(t, gadgetsCRD)
	cases := []struct{ name, body string }{
		{"empty object", `{}`},
		{"DeleteOptions", `{"kind":"DeleteOptions","apiVersion":"v1"}`},
		{"DeleteOptions of meta.k8s.io", `{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1"}`},
		{"kind Widget", `{"kind":"Widget","apiVersion":"example.com/v1"}`},
		{"kind Gadget", `{"kind":"Gadget","apiVersion":"validation.example.com/v1"}`},
		{"kind Status", `{"kind":"Status","apiVersion":"v1"}`},
		{"null", `null`},
		{"not JSON", `{"kind":`},
		{"DeleteOptions v2", `{"kind":"DeleteOptions","apiVersion":"v2"}`},
		{"precondition resourceVersion 0", `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"0"}}`},
		{"precondition uid", `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"6f1bfa8c-2f3d-4f6e-9d55-3b0b6c1a2e11"}}`},
		{"propagationPolicy Sideways", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Sideways"}`},
		{"propagationPolicy and orphanDependents", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground","orphanDependents":true}`},
		{"gracePeriodSeconds negative", `{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":-1}`},
		{"unknown field", `{"kind":"DeleteOptions","apiVersion":"v1","bogus":true}`},
	}
	var scenarios []scenario
	for _, tc := range cases {
		scenarios = append(scenarios, scenario{name: tc.name, steps: []step{
			kcreated("a"),
			{req: kdel("a", tc.body), body: true},
			{req: kget("a")},
		}})
	}
	scenarios = append(scenarios, scenario{name: "propagationPolicy Sideways in the query", steps: []step{
		kcreated("a"),
		{req: kquery(kdel("a", ""), "propagationPolicy=Sideways")},
		{req: kget("a")},
	}})
	c.run(t, scenarios)
}

// Issue 8: PUT with metadata.resourceVersion of the wrong JSON type.
func TestComparePutResourceVersionType(t *testing.T) {
	t.Parallel()
	c := newComparison(t, gadgetsCRD)
	body := func(rv string) string {
		return `{"apiVersion":"validation.example.com/v1","kind":"Gadget","metadata":{"name":"a","resourceVersion":` + rv + `},"spec":{"size":"large"}}`
	}
	c.run(t, []scenario{
		{name: "number", steps: []step{kcreated("a"), {req: kput("a", body("1"))}, {req: kget("a"), body: true}}},
		{name: "object", steps: []step{kcreated("a"), {req: kput("a", body(`{"v":"1"}`))}, {req: kget("a"), body: true}}},
		{name: "none", steps: []step{kcreated("a"), {req: kput("a", gadgetJSON("a", `{"size":"large"}`)), want: http.StatusUnprocessableEntity}}},
		{name: "current", steps: []step{kcreated("a"), {req: kput("a", gadgetJSONAt("a", `{"size":"large"}`)), body: true, want: http.StatusOK}}},
		{name: "stale string", steps: []step{kcreated("a"), {req: kput("a", body(`"1"`)), want: http.StatusConflict}}},
		// Not compared: "abc" makes kube answer 500 with a bare
		// strconv.ParseUint error (an unhandled error in its storage
		// layer), which is no behaviour to copy.
		{name: "number on POST", steps: []step{{req: kpost(body("1"))}, {req: kget("a")}}},
	})
}

// Issue 8: metadata.generation of a custom resource: 1 on create, +1 on
// every change of spec (and of anything but metadata and status), not on
// metadata or status changes.
func TestCompareGeneration(t *testing.T) {
	t.Parallel()
	c := newComparison(t, gadgetsCRD)
	status := func(phase string) kreq {
		return kreq{Method: http.MethodPatch, Path: gadgets + "/a/status", ContentType: "application/merge-patch+json", Body: `{"status":{"phase":"` + phase + `"}}`}
	}
	c.run(t, []scenario{
		{name: "lifecycle", steps: []step{
			{req: kpost(gadgetJSON("a", `{"size":"small"}`)), body: true, want: http.StatusCreated},
			{req: kpatch("a", "application/merge-patch+json", `{"spec":{"size":"large"}}`), body: true, want: http.StatusOK},
			{req: kpatch("a", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`), body: true, want: http.StatusOK},
			{req: kpatch("a", "application/merge-patch+json", `{"spec":{"size":"large"}}`), body: true, want: http.StatusOK},
			{req: status("Ready"), body: true, want: http.StatusOK},
			{req: kpatch("a", "application/merge-patch+json", `{"status":{"phase":"Ignored"}}`), body: true, want: http.StatusOK},
			{req: kput("a", gadgetJSONAt("a", `{"size":"medium"}`)), body: true, want: http.StatusOK},
			{req: kget("a"), body: true, want: http.StatusOK},
		}},
		{name: "generation in the request is ignored", steps: []step{
			{req: kpost(`{"apiVersion":"validation.example.com/v1","kind":"Gadget","metadata":{"name":"a","generation":7},"spec":{"size":"small"}}`), body: true, want: http.StatusCreated},
			{req: kpatch("a", "application/merge-patch+json", `{"metadata":{"generation":42}}`), body: true, want: http.StatusOK},
		}},
	})
}

// kube's configmap strategy (pkg/registry/core/configmap/strategy.go in
// kubernetes/kubernetes) never sets metadata.generation: PrepareForCreate
// and PrepareForUpdate leave ObjectMeta.Generation alone, so configmaps
// have none, on create or after updates. apiextensions-apiserver does not
// serve configmaps, so this is checked on kapi alone.
func TestConfigMapsHaveNoGeneration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.namespace(t, "generation")
	ctx := testContext(t)
	cm := e.create(t, configMapsGVR, configMap(ns, "a", nil))
	if g, ok := cm.Object["metadata"].(map[string]any)["generation"]; ok {
		t.Errorf("configmap after create: metadata.generation %v; want none", g)
	}
	cm.Object["data"] = map[string]any{"key": "changed"}
	updated, err := e.configMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if g, ok := updated.Object["metadata"].(map[string]any)["generation"]; ok {
		t.Errorf("configmap after update: metadata.generation %v; want none", g)
	}
}

// An apply configuration with a field the schema does not declare is
// refused: kapi answers 422 Invalid naming the field, where kube answers
// 500 naming one unknown field picked at random (see
// TestCompareFieldValidation). Nothing is created.
func TestApplyUnknownFieldIsInvalid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.namespace(t, "apply-unknown")
	ctx := testContext(t)
	cfg := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","bogus":1}}`)
	_, err := e.widgets(ns).Patch(ctx, "w", types.ApplyPatchType, cfg, metav1.PatchOptions{FieldManager: "applier"})
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != 422 || !strings.Contains(se.ErrStatus.Message, ".spec.bogus: field not declared in schema") {
		t.Fatalf("apply with an unknown field: %v; want 422 naming .spec.bogus", err)
	}
	if _, err := e.widgets(ns).Get(ctx, "w", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the refused apply: %v; want NotFound", err)
	}
}
