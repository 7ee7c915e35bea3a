package conformance

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cborserializer "k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	protobufserializer "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/cel"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	kschema "github.com/kapi-dev/kapi/schema"
)

// The differential corpus (issue 21): request scripts, as data in
// testdata/diff/*.yaml, each run in a namespace of its own against kapi's
// example server and against the real kube-apiserver (kubeapiserver_test.go),
// both reading refTokens with RBAC on and serving the same CRDs. Their
// answers, once normalised (diffNormalize), must be identical: status code,
// content type, Warning headers and the body — a Status's reason, message,
// details and causes, an object's fields including managedFields, a watch's
// events. A case may be marked `differs: <reason>` where kapi deliberately
// answers otherwise (beyond kube, a kube 500 on bad input, kube's
// controllers); its steps then record kapi's own answer (`kapi:`), which
// is checked instead, and the mark must still be needed.
//
// How to add a case: see diffCase and the files in testdata/diff.
//
// Admission webhooks: both servers reach the test's webhook server
// (webhook_server_test.go) by URL. In a step, {hooks} is its base URL
// (https://127.0.0.1:<port>), {caBundle} its CA bundle (base64, for a
// clientConfig.caBundle) and {down} a URL where nothing listens. A case's
// webhook configuration is cluster-scoped: it is named after the case's
// namespace and scoped to it by a namespaceSelector on
// kubernetes.io/metadata.name, so that no other case meets it. kube-apiserver
// sees a configuration through an informer, a moment after writing it: a
// step with `until` waits for it (see diffUntil).

// diffCRDs are the CRDs of the corpus: the example server serves widgets
// itself; both get the gadgets of the validation comparisons.
var diffCRDs = []string{"../examples/apiserver/server/crds/widgets.example.com.yaml", gadgetsCRD}

// diffFile is one file of the corpus.
type diffFile struct {
	Cases []diffCase `json:"cases"`
}

// diffCase is one script: its steps run in order, in a fresh namespace
// ({ns}).
type diffCase struct {
	Name string `json:"name"`
	// Differs, when set, is why kapi deliberately answers otherwise; the
	// steps with a `kapi` expectation are then checked against it.
	Differs string `json:"differs,omitempty"`
	// Each, when set, makes one case per entry: {key} in the name and in
	// every step is replaced by the entry's value.
	Each  []map[string]string `json:"each,omitempty"`
	Steps []diffStep          `json:"steps"`
}

// diffStep is one request. In path, query, headers and body, {ns} is the
// case's namespace and {x} the value a previous step saved as x (on the
// same server).
type diffStep struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// User is the refTokens user sending the request (admin when empty,
	// "anonymous" for none).
	User    string            `json:"user,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Body is sent as JSON when it is YAML structure, verbatim when it is a
	// string. Content-Type defaults to JSON (merge patch for PATCH).
	Body json.RawMessage `json:"body,omitempty"`
	// Save names values of the answer (dotted paths into the JSON body,
	// e.g. metadata.resourceVersion) for later steps.
	Save map[string]string `json:"save,omitempty"`
	// Compare is what is compared: "all" (the default), "status" (code,
	// content type, Warning headers and a Status body, not an object
	// body) or "code".
	Compare string `json:"compare,omitempty"`
	// Kube, when set, is the status code kube answers: a check that the
	// step tests what it says.
	Kube int `json:"kube,omitempty"`
	// Kapi is kapi's own answer in a case marked differs.
	Kapi *diffExpect `json:"kapi,omitempty"`
	// Retry, for a read, sends the step again (up to diffRetries times)
	// while the answers differ: kube serves a list or watch at
	// resourceVersion=0 from its watch cache, which may not have seen the
	// case's last writes yet.
	Retry bool `json:"retry,omitempty"`
	// Groups, for an aggregated discovery list, keeps the groups it names
	// (their order among themselves included) and drops the others: the
	// lists of two servers that serve different groups are compared on
	// the groups both serve.
	Groups []string `json:"groups,omitempty"`
	// Until sends the step again, to each server on its own, until its
	// answer is the one described (up to diffUntilTimeout); the last
	// answer is compared.
	Until *diffUntil `json:"until,omitempty"`
}

// diffUntil is the answer a step waits for: its code (any when unset),
// a text the answer (its body or a Warning header) contains, and a
// condition its status.conditions hold, "Type" or "Type=Status" (True
// when not given), when set. A probe, typically a dry-run create that a
// new webhook configuration changes or refuses (kube-apiserver applies a
// configuration a moment after writing it, kapi for the next request),
// or a read of a CRD kube's controllers establish a moment after its
// create returns, and remove a moment after its delete.
type diffUntil struct {
	// Code is a number, or a string holding one (for a case's Each to
	// set: "{code}").
	Code      json.RawMessage `json:"code,omitempty"`
	Contains  string          `json:"contains,omitempty"`
	Condition string          `json:"condition,omitempty"`
}

// diffUntilTimeout bounds an Until step's polling on each server,
// diffRetryWait apart.
const diffUntilTimeout = 30 * time.Second

func (u *diffUntil) done(a diffAnswer, raw any) bool {
	code, _ := strconv.Atoi(strings.Trim(string(u.Code), `"`))
	if code != 0 && a.Code != code || !strings.Contains(diffJSON(a), u.Contains) {
		return false
	}
	if u.Condition == "" {
		return true
	}
	typ, want, ok := strings.Cut(u.Condition, "=")
	if !ok {
		want = "True"
	}
	m, _ := raw.(map[string]any)
	status, _ := m["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	return slices.ContainsFunc(conds, func(c any) bool {
		cm, _ := c.(map[string]any)
		return cm["type"] == typ && cm["status"] == want
	})
}

// diffRetries bounds a Retry step's attempts, diffRetryWait apart.
const (
	diffRetries   = 5
	diffRetryWait = 200 * time.Millisecond
)

// diffExpect is kapi's answer to a step of a marked case: the code, and
// the Status reason and a part of its message when set.
type diffExpect struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// diffAnswer is an answer as compared.
type diffAnswer struct {
	Code        int
	ContentType string
	Warnings    []string `json:",omitempty"`
	Body        any      `json:",omitempty"`
}

// diffTally counts the cases of a run, logged by TestDiff.
type diffTally struct {
	mu                       sync.Mutex
	cases, identical, marked int
	differing                []string
	summaries                map[string]string
}

func (d *diffTally) add(name string, marked, same bool, summary string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cases++
	switch {
	case marked:
		d.marked++
	case same:
		d.identical++
	default:
		d.differing = append(d.differing, name)
		if d.summaries == nil {
			d.summaries = map[string]string{}
		}
		d.summaries[name] = summary
	}
}

// diffOpenFile lists the differences found and not yet closed: case name
// → what differs. A case listed there is run and its differences logged,
// but they fail the test only once it answers as kube does (then it must
// leave the list). KAPI_DIFF_WRITE_OPEN=1 rewrites the file from a run.
const (
	diffOpenFile     = "testdata/diff/open.yaml"
	diffWriteOpenEnv = "KAPI_DIFF_WRITE_OPEN"
	diffOpenHeader   = `# Differences between kapi and kube-apiserver the corpus finds and
# that are not closed yet (issue 21): case name: what differs. Written by
# KAPI_DIFF_WRITE_OPEN=1 go test -run TestDiff; every entry is work left.
`
)

func loadDiffOpen(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(diffOpenFile)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var open map[string]string
	if err := yaml.Unmarshal(b, &open); err != nil {
		t.Fatalf("%s: %v", diffOpenFile, err)
	}
	return open
}

// loadDiffCorpus reads testdata/diff/*.yaml, expanding each case's Each.
func loadDiffCorpus(t *testing.T) []diffCase {
	t.Helper()
	files, err := filepath.Glob("testdata/diff/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	var out []diffCase
	seen := map[string]bool{}
	for _, f := range files {
		if f == diffOpenFile {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var df diffFile
		if err := yaml.UnmarshalStrict(b, &df); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		prefix := strings.TrimSuffix(filepath.Base(f), ".yaml") + "/"
		for _, c := range df.Cases {
			for _, c := range c.expand() {
				c.Name = prefix + c.Name
				if seen[c.Name] {
					t.Fatalf("%s: case %q twice", f, c.Name)
				}
				seen[c.Name] = true
				if c.Differs != "" && !slices.ContainsFunc(c.Steps, func(s diffStep) bool { return s.Kapi != nil }) {
					t.Fatalf("%s: case %q is marked differs but records no kapi answer", f, c.Name)
				}
				if len(c.Steps) == 0 {
					t.Fatalf("%s: case %q has no steps", f, c.Name)
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// expand returns the cases c stands for: itself, or one per Each entry.
func (c diffCase) expand() []diffCase {
	if len(c.Each) == 0 {
		return []diffCase{c}
	}
	var out []diffCase
	for _, vars := range c.Each {
		keys := make([]string, 0, 2*len(vars))
		for k, v := range vars {
			keys = append(keys, "{"+k+"}", v)
		}
		r := strings.NewReplacer(keys...)
		b, _ := json.Marshal(c.Steps)
		var steps []diffStep
		// The values are substituted in the JSON text of the steps: a
		// value holding a quote or backslash must be written escaped.
		if err := json.Unmarshal([]byte(r.Replace(string(b))), &steps); err != nil {
			panic(fmt.Sprintf("case %q: substituting %v: %v", c.Name, vars, err))
		}
		out = append(out, diffCase{Name: r.Replace(c.Name), Differs: r.Replace(c.Differs), Steps: steps})
	}
	return out
}

// diffSide is one server of the comparison.
type diffSide struct {
	name string
	url  string
	ca   []byte
}

func (s diffSide) client(t *testing.T, user string) *http.Client {
	cfg := &rest.Config{Host: s.url, TLSClientConfig: rest.TLSClientConfig{CAData: s.ca}, QPS: -1}
	switch user {
	case "":
		cfg.BearerToken = "admin-token"
	case "anonymous":
	default:
		cfg.BearerToken = user + "-token"
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

// diffServer starts kapi's example server with refTokens, RBAC and the
// corpus's CRDs, over TLS.
func diffServer(t *testing.T) diffSide {
	t.Helper()
	var crds []kschema.CRD
	for _, f := range diffCRDs[1:] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		defs, err := kschema.ParseCRDs(b)
		if err != nil {
			t.Fatalf("ParseCRDs %s: %v", f, err)
		}
		crds = append(crds, defs...)
	}
	// The listener first: the service account issuer (and so the API
	// audience) is the server's own URL, as the reference's is.
	srv := httptest.NewUnstartedServer(nil)
	url := "https://" + srv.Listener.Addr().String()
	tokens, err := builtin.NewTokens(builtin.TokenOptions{Issuer: url + "/"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := server.New(withStorage(t, server.Options{
		Registry: registry.Options{CEL: cel.Compile, WebhookConditions: cel.CompileMatchConditions},
		CRDs:     crds,
		Auth:     server.Auth{TokenAuthFile: writeTemp(t, "tokens.csv", []byte(refTokens)), AuthorizationMode: "RBAC"},
		// kube-apiserver's --service-cluster-ip-range (reference/kubeapiserver).
		Builtin: builtin.Options{ServiceCIDR: "10.0.0.0/24", Tokens: tokens},
	}))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	cert, caPEM, err := server.SelfSignedCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = reg
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return diffSide{name: "kapi", url: url, ca: caPEM}
}

// diffWorkers is how many cases run at once.
const diffWorkers = 16

// diffRuns numbers the namespaces of the corpus's cases in a process.
var diffRuns atomic.Int64

// TestDiff runs the corpus against kapi and kube-apiserver.
func TestDiff(t *testing.T) {
	corpus := loadDiffCorpus(t)
	kube := kubeAPIServer(t)
	kubeSide := diffSide{name: "kube-apiserver", url: kube.URL, ca: kube.CA}
	admin := &rest.Config{Host: kube.URL, BearerToken: "admin-token", TLSClientConfig: rest.TLSClientConfig{CAData: kube.CA}, QPS: -1}
	for _, f := range diffCRDs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		installCRD(t, admin, string(b))
	}
	kapiSide := diffServer(t)
	hooks, hookCA := crWebhookServer(t)
	vars := map[string]string{
		"hooks":    hooks,
		"caBundle": base64.StdEncoding.EncodeToString(hookCA),
		"down":     fmt.Sprintf("https://127.0.0.1:%d", freePort(t)),
	}
	only := os.Getenv("KAPI_DIFF_CASE")
	open := loadDiffOpen(t)
	tally := &diffTally{}
	t.Run("corpus", func(t *testing.T) {
		// diffWorkers cases at a time, whatever -parallel says: most of
		// a case's time is waiting on the two servers (a watch waits its
		// timeoutSeconds), not CPU. t.Run may be called from several
		// goroutines at once.
		cases := make(chan diffCase)
		var wg sync.WaitGroup
		for range diffWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range cases {
					t.Run(c.Name, func(t *testing.T) {
						ns := fmt.Sprintf("diff-%d", diffRuns.Add(1))
						same, summary := runDiffCase(t, c, ns, vars, kubeSide, kapiSide, open[c.Name])
						tally.add(c.Name, c.Differs != "", same, summary)
					})
				}
			}()
		}
		for _, c := range corpus {
			if only == "" || strings.Contains(c.Name, only) {
				cases <- c
			}
		}
		close(cases)
		wg.Wait()
	})
	t.Logf("differential corpus: %d cases, %d identical (%.1f%%), %d marked (deliberate differences), %d open differences (listed in %s)",
		tally.cases, tally.identical, 100*float64(tally.identical)/float64(max(tally.cases, 1)), tally.marked, len(tally.differing), diffOpenFile)
	if os.Getenv(diffWriteOpenEnv) != "" && only == "" {
		slices.Sort(tally.differing)
		var b strings.Builder
		b.WriteString(diffOpenHeader)
		for _, name := range tally.differing {
			fmt.Fprintf(&b, "%q: %q\n", name, tally.summaries[name])
		}
		if err := os.WriteFile(diffOpenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// diffState is what one server's side of a case carries from step to step.
type diffState struct {
	vars map[string]string
	norm *diffNormalizer
	// saved is norm before the step, for a Retry step's next attempt.
	saved *diffNormalizer
}

// runDiffCase runs c on both servers and reports whether every step
// answered the same, and if not, what differs. open is what the case is
// listed with in diffOpenFile, if it is; vars are the variables every
// step may use besides {ns}.
func runDiffCase(t *testing.T, c diffCase, ns string, vars map[string]string, kube, kapi diffSide, open string) (bool, string) {
	for _, s := range []diffSide{kube, kapi} {
		a, _ := diffDo(t, s, diffStep{Method: http.MethodPost, Path: "/api/v1/namespaces", Body: json.RawMessage(`{"metadata":{"name":"` + ns + `"}}`)}, map[string]string{"ns": ns})
		if a.Code != http.StatusCreated {
			t.Fatalf("%s: create namespace %s: %d %v", s.name, ns, a.Code, a.Body)
		}
	}
	states := [2]diffState{{vars: map[string]string{"ns": ns}, norm: newDiffNormalizer()}, {vars: map[string]string{"ns": ns}, norm: newDiffNormalizer()}}
	for _, s := range states {
		maps.Copy(s.vars, vars)
		s.vars["ns"] = ns
	}
	for _, st := range c.Steps {
		for _, s := range states {
			s.norm.generateNames(st.Body)
		}
	}
	same := true
	var summary []string
	for i, st := range c.Steps {
		var answers [2]diffAnswer
		var raws [2]any
		for attempt := 0; attempt == 0 || (st.Retry && open == "" && attempt < diffRetries && !cmp.Equal(answers[0], answers[1])); attempt++ {
			if attempt > 0 {
				time.Sleep(diffRetryWait)
				states[0].norm, states[1].norm = states[0].saved.clone(), states[1].saved.clone()
			}
			states[0].saved, states[1].saved = states[0].norm.clone(), states[1].norm.clone()
			for j, s := range []diffSide{kube, kapi} {
				a, raw := diffDo(t, s, st, states[j].vars)
				for deadline := time.Now().Add(diffUntilTimeout); st.Until != nil && !st.Until.done(a, raw) && time.Now().Before(deadline); {
					time.Sleep(diffRetryWait)
					a, raw = diffDo(t, s, st, states[j].vars)
				}
				for name, path := range st.Save {
					if v, ok := lookupPath(raw, path); ok {
						states[j].vars[name] = v
					}
				}
				a.Body = states[j].norm.normalize(a.Body)
				switch st.Compare {
				case "status":
					if m, ok := a.Body.(map[string]any); !ok || m["kind"] != "Status" {
						a.Body = nil
					}
				case "code":
					a = diffAnswer{Code: a.Code}
				}
				answers[j], raws[j] = a, raw
			}
		}
		kubeA, kapiA := answers[0], answers[1]
		desc := fmt.Sprintf("step %d, %s %s", i, st.Method, st.Path)
		if st.Query != "" {
			desc += "?" + st.Query
		}
		if st.Kube != 0 && kubeA.Code != st.Kube {
			t.Errorf("%s: kube answered %d; the case expects %d (fix the case): %s", desc, kubeA.Code, st.Kube, diffJSON(kubeA.Body))
		}
		d := cmp.Diff(kubeA, kapiA)
		if d != "" {
			same = false
			summary = append(summary, fmt.Sprintf("step %d: %s", i, diffSummary(kubeA, kapiA)))
		}
		switch {
		case c.Differs != "" && st.Kapi != nil:
			if err := st.Kapi.check(kapiA); err != nil {
				t.Errorf("%s: kapi's own answer (case marked differs: %s): %v\nkapi: %s", desc, c.Differs, err, diffJSON(kapiA))
			}
			if d != "" {
				t.Logf("%s: differs as marked (%s) (-kube +kapi):\n%s", desc, c.Differs, d)
			}
		case d != "" && open != "":
			t.Logf("%s: differs (open: %s) (-kube +kapi):\n%s", desc, open, d)
		case d != "":
			t.Errorf("%s: kapi differs from kube (-kube +kapi):\n%s", desc, d)
		}
		if os.Getenv(compareLogEnv) != "" {
			t.Logf("%s:\nkube: %s\nkapi: %s", desc, diffJSON(kubeA), diffJSON(kapiA))
		}
	}
	if c.Differs != "" && same {
		t.Errorf("case marked differs (%s) but kapi answers every step as kube does: remove the mark", c.Differs)
	}
	if open != "" && same {
		t.Errorf("case listed in %s (%s) but kapi answers every step as kube does: remove it from the list", diffOpenFile, open)
	}
	return same, strings.Join(summary, "; ")
}

// diffSummary says in a few words where two answers differ.
func diffSummary(kube, kapi diffAnswer) string {
	var parts []string
	if kube.Code != kapi.Code {
		parts = append(parts, fmt.Sprintf("code %d (kube %d)", kapi.Code, kube.Code))
	}
	if kube.ContentType != kapi.ContentType {
		parts = append(parts, fmt.Sprintf("content type %q (kube %q)", kapi.ContentType, kube.ContentType))
	}
	if !slices.Equal(kube.Warnings, kapi.Warnings) {
		parts = append(parts, "warnings")
	}
	km, _ := kube.Body.(map[string]any)
	am, _ := kapi.Body.(map[string]any)
	if km != nil && am != nil {
		var keys []string
		for k := range km {
			if !cmp.Equal(km[k], am[k]) {
				keys = append(keys, k)
			}
		}
		for k := range am {
			if _, ok := km[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if k == "message" {
				parts = append(parts, fmt.Sprintf("message %q (kube %q)", am[k], km[k]))
				continue
			}
			parts = append(parts, k)
		}
	} else if !cmp.Equal(kube.Body, kapi.Body) {
		parts = append(parts, "body")
	}
	return strings.Join(parts, ", ")
}

func (e diffExpect) check(a diffAnswer) error {
	if a.Code != e.Code {
		return fmt.Errorf("code %d; want %d", a.Code, e.Code)
	}
	if e.Reason == "" && e.Message == "" {
		return nil
	}
	m, _ := a.Body.(map[string]any)
	if r, _ := m["reason"].(string); e.Reason != "" && r != e.Reason {
		return fmt.Errorf("reason %q; want %q", r, e.Reason)
	}
	if msg, _ := m["message"].(string); !strings.Contains(msg, e.Message) {
		return fmt.Errorf("message %q; want it to contain %q", msg, e.Message)
	}
	return nil
}

// diffDo sends st to s with vars substituted, and returns the answer
// (its body decoded, not yet normalised) and the decoded body.
func diffDo(t *testing.T, s diffSide, st diffStep, vars map[string]string) (diffAnswer, any) {
	t.Helper()
	keys := make([]string, 0, 2*len(vars))
	for k, v := range vars {
		keys = append(keys, "{"+k+"}", v)
	}
	r := strings.NewReplacer(keys...)
	u := s.url + r.Replace(st.Path)
	if st.Query != "" {
		u += "?" + r.Replace(st.Query)
	}
	var body io.Reader
	if len(st.Body) > 0 {
		text := string(st.Body)
		var str string
		if json.Unmarshal(st.Body, &str) == nil {
			text = str
		}
		body = strings.NewReader(r.Replace(text))
	}
	ctx := testContext(t)
	req, err := http.NewRequestWithContext(ctx, st.Method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", compareUserAgent)
	if body != nil {
		ct := "application/json"
		if st.Method == http.MethodPatch {
			ct = "application/merge-patch+json"
		}
		req.Header.Set("Content-Type", ct)
	}
	for k, v := range st.Headers {
		req.Header.Set(k, r.Replace(v))
	}
	resp, err := s.client(t, st.User).Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", s.name, st.Method, u, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %s %s: reading the body: %v", s.name, st.Method, u, err)
	}
	a := diffAnswer{Code: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Warnings: resp.Header.Values("Warning")}
	slices.Sort(a.Warnings)
	// Each server names itself (a token's audience, its issuer) by its
	// own URL.
	raw = bytes.ReplaceAll(raw, []byte(s.url), []byte("https://SERVER"))
	a.Body = decodeDiffBody(a.ContentType, raw)
	if m, ok := a.Body.(map[string]any); ok && st.Groups != nil {
		items, _ := m["items"].([]any)
		kept := []any{}
		for _, g := range items {
			if name, _ := lookupPath(g, "metadata.name"); slices.Contains(st.Groups, name) {
				kept = append(kept, g)
			}
		}
		m["items"] = kept
	}
	return a, a.Body
}

// decodeDiffBody decodes a JSON body (a watch's stream of events as a
// list); any other body is kept as text.
func decodeDiffBody(contentType string, raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var vals []any
		for {
			var v any
			if err := dec.Decode(&v); err == io.EOF {
				break
			} else if err != nil {
				return fmt.Sprintf("invalid JSON (%v): %s", err, raw)
			}
			vals = append(vals, v)
		}
		if len(vals) == 1 && !strings.Contains(contentType, "watch") && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`{"type"`)) {
			return vals[0]
		}
		return map[string]any{"stream": vals}
	}
	if strings.Contains(mt, "yaml") {
		// Both the document, normalised as a JSON body is, and its text
		// (yamlText), where quoted numbers (resourceVersions) are masked:
		// the layout is compared, the values in the document.
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return string(raw)
		}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		var doc any
		if dec.Decode(&doc) != nil {
			return string(raw)
		}
		return map[string]any{"yaml": doc, "yamlText": string(raw)}
	}
	if strings.HasPrefix(mt, "text/") || mt == "" {
		return string(raw)
	}
	if v, ok := decodeAsClient(mt, raw); ok {
		return v
	}
	return fmt.Sprintf("<%d bytes of %s>", len(raw), mt)
}

// diffScheme knows the values the corpus reads in protobuf and CBOR: the
// discovery documents (meta.k8s.io's unversioned APIGroupList, APIGroup,
// APIResourceList, and apidiscovery.k8s.io/v2's aggregated list) and Status.
var diffScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	if err := apidiscoveryv2.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// decodeAsClient decodes a protobuf or CBOR body as a Go client does,
// with apimachinery's own serializers, into the JSON form of the value
// (so that two encoders' bytes, which may differ, are compared by what
// they say); false for a body they cannot decode (a kind diffScheme does
// not know).
func decodeAsClient(mt string, raw []byte) (any, bool) {
	var dec runtime.Decoder
	switch mt {
	case "application/vnd.kubernetes.protobuf":
		dec = protobufserializer.NewSerializer(diffScheme, diffScheme)
	case "application/cbor":
		dec = cborserializer.NewSerializer(diffScheme, diffScheme)
	default:
		return nil, false
	}
	obj, gvk, err := dec.Decode(raw, nil, nil)
	if err != nil {
		return nil, false
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, false
	}
	return decodeDiffBody("application/json", j), true
}

// lookupPath returns the string at the dotted path in v.
func lookupPath(v any, path string) (string, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		v = m[k]
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	}
	return "", false
}

func diffJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// diffNormalizer replaces what two servers cannot agree on, consistently
// within a case: resourceVersions and uids by their order of appearance
// (RV1, RV2…, UID1…), a list's or a bookmark's resourceVersion by "RV",
// timestamps by TIME, generated names by <prefix>GEN<n>, continue tokens
// by CONTINUE, a Service's clusterIPs and nodePorts by their order of
// appearance (IP1…, NODEPORT1…), signed tokens (JWTs) by TOKEN;
// managedFields are put in one order.
type diffNormalizer struct {
	rvs, uids, names map[string]string
	// ips and ports are the clusterIPs and nodePorts a server allocated.
	ips, ports map[string]string
	// generated matches the names a server makes up from the
	// generateNames of the case's requests.
	generated []*regexp.Regexp
}

// generateNames notes the metadata.generateName of a request body.
func (n *diffNormalizer) generateNames(body json.RawMessage) {
	var text string
	if json.Unmarshal(body, &text) != nil {
		text = string(body)
	}
	for _, m := range generateNamePattern.FindAllStringSubmatch(text, -1) {
		n.generated = append(n.generated, regexp.MustCompile(regexp.QuoteMeta(m[1])+`[a-z0-9]{5}\b`))
	}
}

var (
	generateNamePattern = regexp.MustCompile(`"generateName":\s*"([^"]+)"`)
	// A quoted number in a YAML text (a resourceVersion).
	quotedNumberPattern = regexp.MustCompile(`"\d+"`)
	yamlAgePattern      = regexp.MustCompile(`(?m)^(\s*- )\d+[smhdy]$`)
	// The current revision a "Too large resource version" names.
	currentRVPattern = regexp.MustCompile(`(Too large resource version: \d+, current: )\d+`)
	// The etcd prefix of the reference (kubeapiserver's default), which a
	// storage error's key starts with: kapi's keys have none.
	etcdPrefixPattern = regexp.MustCompile(`(Key: )/kapi-reference/[^/,]+`)
)

// clone is a copy of n, to normalise an answer again from the same state.
func (n *diffNormalizer) clone() *diffNormalizer {
	return &diffNormalizer{rvs: maps.Clone(n.rvs), uids: maps.Clone(n.uids), names: maps.Clone(n.names),
		ips: maps.Clone(n.ips), ports: maps.Clone(n.ports), generated: slices.Clone(n.generated)}
}

func newDiffNormalizer() *diffNormalizer {
	return &diffNormalizer{rvs: map[string]string{}, uids: map[string]string{}, names: map[string]string{},
		ips: map[string]string{}, ports: map[string]string{}}
}

var (
	ipv4Pattern = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)
	jwtPattern  = regexp.MustCompile(`^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)
)

var wholeTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$`)

func (n *diffNormalizer) mapped(m map[string]string, prefix, v string) string {
	if v == "" {
		return v
	}
	if r, ok := m[v]; ok {
		return r
	}
	r := fmt.Sprintf("%s%d", prefix, len(m)+1)
	m[v] = r
	return r
}

func (n *diffNormalizer) normalize(v any) any {
	n.collectNames(v)
	return n.walk(v, "")
}

// collectNames records generated names first, so that a message naming
// one is rewritten too.
func (n *diffNormalizer) collectNames(v any) {
	switch x := v.(type) {
	case map[string]any:
		if md, ok := x["metadata"].(map[string]any); ok {
			gn, _ := md["generateName"].(string)
			name, _ := md["name"].(string)
			if gn != "" && strings.HasPrefix(name, gn) && name != gn {
				if _, ok := n.names[name]; !ok {
					n.names[name] = fmt.Sprintf("%sGEN%d", gn, len(n.names)+1)
				}
			}
		}
		for _, e := range x {
			n.collectNames(e)
		}
	case []any:
		for _, e := range x {
			n.collectNames(e)
		}
	}
}

func (n *diffNormalizer) walk(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		kind, _ := x["kind"].(string)
		for _, k := range keys {
			e := x[k]
			switch {
			case k == "metadata" && (strings.HasSuffix(kind, "List") || x["items"] != nil || kind == "Table"):
				// A list's resourceVersion is the store's, moved on by
				// every write of the server (a Table's too, when it is
				// a list's; one object's is not told apart).
				if md, ok := e.(map[string]any); ok {
					md = maps.Clone(md)
					if s, _ := md["resourceVersion"].(string); s != "" {
						md["resourceVersion"] = "RV"
					}
					if s, _ := md["continue"].(string); s != "" {
						md["continue"] = "CONTINUE"
					}
					e = md
				}
			case k == "object" && x["type"] == "BOOKMARK":
				if o, ok := e.(map[string]any); ok {
					o = maps.Clone(o)
					if md, ok := o["metadata"].(map[string]any); ok {
						md = maps.Clone(md)
						md["resourceVersion"] = "RV"
						o["metadata"] = md
					}
					e = o
				}
			}
			out[k] = n.walk(e, k)
		}
		if mfs, ok := out["managedFields"].([]any); ok {
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
		if kind == "Table" {
			maskAges(out)
		}
		if kind == "Status" {
			if d, ok := out["details"].(map[string]any); ok {
				if causes, ok := d["causes"].([]any); ok && len(causes) > 1 {
					msg, _ := out["message"].(string)
					slices.SortFunc(causes, func(a, b any) int { return strings.Compare(diffJSON(a), diffJSON(b)) })
					for _, c := range causes {
						cm, _ := c.(map[string]any)
						f, _ := cm["field"].(string)
						m, _ := cm["message"].(string)
						item := m
						if f != "" {
							item = f + ": " + m
						}
						msg = strings.Replace(msg, item, "<cause>", 1)
					}
					out["message"] = msg
				}
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = n.walk(e, key)
		}
		return out
	case string:
		switch {
		case key == "resourceVersion" && x != "RV":
			return n.mapped(n.rvs, "RV", x)
		case key == "uid":
			return n.mapped(n.uids, "UID", x)
		case key == "continue" && x != "":
			return "CONTINUE"
		case (key == "clusterIP" || key == "clusterIPs") && ipv4Pattern.MatchString(x):
			return n.mapped(n.ips, "IP", x)
		case jwtPattern.MatchString(x):
			return "TOKEN"
		case wholeTime.MatchString(x):
			return "TIME"
		case key == "yamlText":
			x = quotedNumberPattern.ReplaceAllString(x, `"N"`)
			x = yamlAgePattern.ReplaceAllString(x, "${1}AGE") // a Table's Age cells, as maskAges
		}
		for name, gen := range n.names {
			x = strings.ReplaceAll(x, name, gen)
		}
		for _, re := range n.generated {
			x = re.ReplaceAllStringFunc(x, func(s string) string { return s[:len(s)-5] + "GEN" })
		}
		x = currentRVPattern.ReplaceAllString(x, "${1}RV")
		x = etcdPrefixPattern.ReplaceAllString(x, "${1}")
		return normalizeMessage(x)
	case json.Number:
		if key == "nodePort" {
			return n.mapped(n.ports, "NODEPORT", x.String())
		}
	}
	return v
}

// maskAges replaces a Table's Age cells by AGE: an age is the time since
// creation when the server answers ("0s", "1s"), which the two servers
// may see on either side of a second.
func maskAges(table map[string]any) {
	cols, _ := table["columnDefinitions"].([]any)
	for i, c := range cols {
		if cm, _ := c.(map[string]any); cm["name"] != "Age" {
			continue
		}
		rows, _ := table["rows"].([]any)
		for _, r := range rows {
			rm, _ := r.(map[string]any)
			if cells, _ := rm["cells"].([]any); i < len(cells) {
				cells[i] = "AGE"
			}
		}
	}
}
