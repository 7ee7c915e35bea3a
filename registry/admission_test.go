package registry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/admission"
	apirequest "github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage/memory"
)

// newAdmissionServer is newServer with an admission chain; its registry
// (and garbage collector) is closed when the test ends.
func newAdmissionServer(t *testing.T, chain admission.Chain) *server {
	t.Helper()
	store := memory.New(memory.Options{Wait: 200 * time.Millisecond})
	reg, err := registry.New(registry.Options{Storage: store, Admission: chain})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	for _, res := range []*registry.Resource{widgets(), configMaps()} {
		if err := reg.Register(res); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	return &server{t: t, reg: reg, store: store, url: srv.URL}
}

// recorder is a mutating and validating hook that records every call.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) record(stage string, a *admission.Attributes) {
	user := ""
	if a.User != nil {
		user = a.User.Name
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("%s %s %s %s/%s user=%s dry=%v obj=%v old=%v", stage, a.Operation, res, a.Namespace, a.Name,
		user, a.DryRun, a.Object != nil, a.OldObject != nil))
}

func (r *recorder) Admit(_ context.Context, a *admission.Attributes) error {
	r.record("M", a)
	return nil
}

func (r *recorder) Validate(_ context.Context, a *admission.Attributes) error {
	r.record("V", a)
	return nil
}

// take returns the calls recorded since the last take.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

const (
	gcUser = "system:serviceaccount:kube-system:generic-garbage-collector"
	nsUser = "system:serviceaccount:kube-system:namespace-controller"
)

// both is what a write admitted once records: its mutating call, then its
// validating call.
func both(call string) []string { return []string{"M " + call, "V " + call} }

func concat(l ...[]string) []string { return slices.Concat(l...) }

// EXT-2: every write of every kind passes the admission chain once,
// mutating then validating, the garbage collector's and the namespace
// controller's included, with the attributes of the write.
func TestAdmissionSeesEveryWrite(t *testing.T) {
	rec := &recorder{}
	s := newAdmissionServer(t, admission.Chain{Mutating: []admission.Mutator{rec}, Validating: []admission.Validator{rec}})
	if got, want := rec.take(), both("CREATE namespaces /default user=system:apiserver dry=false obj=true old=false"); !slices.Equal(got, want) {
		t.Fatalf("New: got %q; want %q", got, want)
	}
	const applyType = "application/apply-patch+yaml"
	var owner, orphaner map[string]any
	steps := []struct {
		name  string
		write func()
		want  []string // in order; the writes of a step run one after the other
	}{
		{"create", func() { s.must(201, "POST", widgetsPath, widget("w", nil, map[string]any{"replicas": 1})) },
			both("CREATE widgets default/w user=system:anonymous dry=false obj=true old=false")},
		{"update", func() {
			w := s.must(200, "GET", widgetsPath+"/w", nil)
			w["spec"] = map[string]any{"replicas": 2}
			s.must(200, "PUT", widgetsPath+"/w", w)
		}, both("UPDATE widgets default/w user=system:anonymous dry=false obj=true old=true")},
		{"json patch", func() {
			s.must(200, "PATCH", widgetsPath+"/w", `[{"op":"add","path":"/spec/color","value":"red"}]`, "Content-Type", "application/json-patch+json")
		}, both("UPDATE widgets default/w user=system:anonymous dry=false obj=true old=true")},
		{"merge patch", func() {
			s.must(200, "PATCH", widgetsPath+"/w", `{"spec":{"color":"blue"}}`, "Content-Type", "application/merge-patch+json")
		}, both("UPDATE widgets default/w user=system:anonymous dry=false obj=true old=true")},
		{"strategic merge patch", func() {
			s.must(200, "PATCH", namespacesPath+"/default", `{"metadata":{"labels":{"a":"b"}}}`, "Content-Type", "application/strategic-merge-patch+json")
		}, both("UPDATE namespaces /default user=system:anonymous dry=false obj=true old=true")},
		{"apply creates", func() {
			s.must(201, "PATCH", widgetsPath+"/applied?fieldManager=test", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: applied\nspec:\n  replicas: 1\n", "Content-Type", applyType)
		}, both("CREATE widgets default/applied user=system:anonymous dry=false obj=true old=false")},
		{"apply updates", func() {
			s.must(200, "PATCH", widgetsPath+"/applied?fieldManager=test", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: applied\nspec:\n  replicas: 2\n", "Content-Type", applyType)
		}, both("UPDATE widgets default/applied user=system:anonymous dry=false obj=true old=true")},
		{"status", func() {
			w := s.must(200, "GET", widgetsPath+"/w", nil)
			w["status"] = map[string]any{"readyReplicas": 2}
			s.must(200, "PUT", widgetsPath+"/w/status", w)
		}, both("UPDATE widgets/status default/w user=system:anonymous dry=false obj=true old=true")},
		{"scale", func() {
			s.must(200, "PATCH", widgetsPath+"/w/scale", `{"spec":{"replicas":5}}`, "Content-Type", "application/merge-patch+json")
		}, both("UPDATE widgets/scale default/w user=system:anonymous dry=false obj=true old=true")},
		{"delete", func() { s.must(200, "DELETE", widgetsPath+"/applied", nil) },
			both("DELETE widgets default/applied user=system:anonymous dry=false obj=false old=true")},
		{"deletecollection", func() {
			s.must(201, "POST", configMapsPath, configMap("c1"))
			s.must(201, "POST", configMapsPath, configMap("c2"))
			s.must(200, "DELETE", configMapsPath, nil)
		}, concat(both("CREATE configmaps default/c1 user=system:anonymous dry=false obj=true old=false"), both("CREATE configmaps default/c2 user=system:anonymous dry=false obj=true old=false"),
			// One call per item, without a name: kube's attributes of a
			// DELETE of a collection.
			both("DELETE configmaps default/ user=system:anonymous dry=false obj=false old=true"), both("DELETE configmaps default/ user=system:anonymous dry=false obj=false old=true"))},
		{"garbage collector deletes a dependent", func() {
			owner = s.must(201, "POST", configMapsPath, configMap("owner"))
			s.must(201, "POST", configMapsPath, configMap("dep", ownedBy(owner, false)))
			s.must(200, "DELETE", configMapsPath+"/owner", nil)
			s.gone(t, configMapsPath+"/dep")
		}, concat(both("CREATE configmaps default/owner user=system:anonymous dry=false obj=true old=false"), both("CREATE configmaps default/dep user=system:anonymous dry=false obj=true old=false"),
			both("DELETE configmaps default/owner user=system:anonymous dry=false obj=false old=true"), both("DELETE configmaps default/dep user="+gcUser+" dry=false obj=false old=true"))},
		{"garbage collector orphans", func() {
			orphaner = s.must(201, "POST", configMapsPath, configMap("orphaner"))
			s.must(201, "POST", configMapsPath, configMap("orphan", ownedBy(orphaner, false)))
			s.must(200, "DELETE", configMapsPath+"/orphaner?propagationPolicy=Orphan", nil)
			s.gone(t, configMapsPath+"/orphaner")
		}, concat(both("CREATE configmaps default/orphaner user=system:anonymous dry=false obj=true old=false"), both("CREATE configmaps default/orphan user=system:anonymous dry=false obj=true old=false"),
			both("DELETE configmaps default/orphaner user=system:anonymous dry=false obj=false old=true"),
			both("UPDATE configmaps default/orphan user="+gcUser+" dry=false obj=true old=true"),
			both("UPDATE configmaps default/orphaner user="+gcUser+" dry=false obj=true old=true"))},
		{"namespace deletion", func() {
			s.must(201, "POST", namespacesPath, map[string]any{"metadata": map[string]any{"name": "doomed"}})
			s.must(201, "POST", "/api/v1/namespaces/doomed/configmaps", configMap("inside"))
			s.must(200, "DELETE", namespacesPath+"/doomed", nil)
			s.gone(t, namespacesPath+"/doomed")
		}, concat(both("CREATE namespaces /doomed user=system:anonymous dry=false obj=true old=false"), both("CREATE configmaps doomed/inside user=system:anonymous dry=false obj=true old=false"),
			both("DELETE namespaces /doomed user=system:anonymous dry=false obj=false old=true"),
			both("DELETE configmaps doomed/inside user="+nsUser+" dry=false obj=false old=true"),
			both("UPDATE namespaces/finalize /doomed user="+nsUser+" dry=false obj=true old=true"))},
		{"in-process client", func() {
			c, err := registry.NewClient[map[string]any](s.reg, "v1", "configmaps")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Create(context.Background(), "default", &map[string]any{"metadata": map[string]any{"name": "go"}}); err != nil {
				t.Fatal(err)
			}
		}, both("CREATE configmaps default/go user= dry=false obj=true old=false")},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.write()
			// The collector's writes are asynchronous: wait for as many
			// calls as expected, then for any extra one.
			eventually(t, "the expected admission calls", func() bool { return rec.len() >= len(st.want) })
			time.Sleep(50 * time.Millisecond)
			if got := rec.take(); !slices.Equal(got, st.want) {
				t.Errorf("got calls\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(st.want, "\n\t"))
			}
		})
	}
}

// EXT-2: the attributes carry the request's user and options.
func TestAdmissionAttributes(t *testing.T) {
	var got []admission.Attributes
	var mu sync.Mutex
	see := &admission.Hook{Check: func(_ context.Context, a *admission.Attributes) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, *a)
		return nil
	}}
	s := newAdmissionServer(t, admission.Chain{Validating: []admission.Validator{see}})
	c, err := registry.NewClient[map[string]any](s.reg, "v1", "configmaps")
	if err != nil {
		t.Fatal(err)
	}
	ctx := apirequest.WithUser(context.Background(), &apirequest.User{Name: "alice"})
	mu.Lock()
	got = nil
	mu.Unlock()
	if _, err := c.Create(ctx, "default", &map[string]any{"metadata": map[string]any{"name": "a"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "default", "a"); err != nil {
		t.Fatal(err)
	}
	s.must(201, "POST", configMapsPath+"?fieldManager=me&dryRun=All", configMap("b"))
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("got %d calls; want 3", len(got))
	}
	tests := []struct {
		user, kind, manager string
		dry                 bool
	}{{"alice", "CreateOptions", "", false}, {"alice", "DeleteOptions", "", false}, {"system:anonymous", "CreateOptions", "me", true}} // an HTTP request without an authenticator is anonymous
	for i, tt := range tests {
		a := got[i]
		user := ""
		if a.User != nil {
			user = a.User.Name
		}
		manager, _ := a.Options["fieldManager"].(string)
		if user != tt.user || a.Options["kind"] != tt.kind || manager != tt.manager || a.DryRun != tt.dry {
			t.Errorf("call %d: got user %q, options %v, dry run %v; want %q, %s with fieldManager %q, %v", i, user, a.Options, a.DryRun, tt.user, tt.kind, tt.manager, tt.dry)
		}
	}
}

// mutator is a mutating hook of one function.
type mutator func(ctx context.Context, a *admission.Attributes) error

func (m mutator) Admit(ctx context.Context, a *admission.Attributes) error { return m(ctx, a) }

// EXT-2: a mutating hook's change is stored, and validated like the
// request's own.
func TestAdmissionMutates(t *testing.T) {
	label := mutator(func(_ context.Context, a *admission.Attributes) error {
		if a.Operation == admission.Create && a.Resource == "widgets" {
			meta := a.Object["metadata"].(map[string]any)
			meta["labels"] = map[string]any{"mutated": meta["name"]}
		}
		return nil
	})
	s := newAdmissionServer(t, admission.Chain{Mutating: []admission.Mutator{label}})
	s.must(201, "POST", widgetsPath, widget("w", nil, nil))
	if got := str(s.must(200, "GET", widgetsPath+"/w", nil), "metadata.labels.mutated"); got != "w" {
		t.Errorf("stored label: got %q; want w", got)
	}
	// The label the hook sets from this name is not a valid label value.
	r := s.do("POST", widgetsPath, widget(strings.Repeat("x", 64), nil, nil))
	if r.code != 422 || !strings.Contains(string(r.body), "metadata.labels") {
		t.Errorf("invalid mutation: got %d %s; want 422 on metadata.labels", r.code, r.body)
	}
}

// EXT-2: a hook's plain error is kube's 403; an *admission.Error answers
// with its own code, reason and message.
func TestAdmissionDenies(t *testing.T) {
	deny := &admission.Hook{Check: func(_ context.Context, a *admission.Attributes) error {
		switch {
		case a.Resource == "namespaces" && a.Operation == admission.Create:
			return nil
		case a.Name == "plain":
			return errors.New("plain widgets are not allowed")
		case a.Name == "typed":
			return &admission.Error{Code: 422, Reason: "Invalid", Message: "typed widgets are invalid"}
		}
		return nil
	}}
	s := newAdmissionServer(t, admission.Chain{Validating: []admission.Validator{deny}})
	tests := []struct {
		method, path string
		body         any
		code         int
		reason, msg  string
	}{
		{"POST", widgetsPath, widget("plain", nil, nil), 403, "Forbidden", `widgets.example.com "plain" is forbidden: plain widgets are not allowed`},
		{"POST", widgetsPath, widget("typed", nil, nil), 422, "Invalid", "typed widgets are invalid"},
		{"DELETE", namespacesPath + "/plain", nil, 404, "NotFound", `namespaces "plain" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := s.do(tt.method, tt.path, tt.body)
			m := r.obj(t)
			if r.code != tt.code || m["reason"] != tt.reason || m["message"] != tt.msg {
				t.Errorf("got %d %v %q; want %d %s %q", r.code, m["reason"], m["message"], tt.code, tt.reason, tt.msg)
			}
		})
	}
	if r := s.do("GET", widgetsPath+"/plain", nil); r.code != 404 {
		t.Errorf("denied create: got %d on GET; want 404", r.code)
	}
	// A denied delete leaves the object.
	s.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "plain"}})
	r := s.do("DELETE", namespacesPath+"/plain", nil)
	if m := r.obj(t); r.code != 403 || m["message"] != `namespaces "plain" is forbidden: plain widgets are not allowed` {
		t.Errorf("denied delete: got %d %v", r.code, m["message"])
	}
	s.must(200, "GET", namespacesPath+"/plain", nil)
}

// DRY-2: a dry run runs the hooks, with DryRun set, and stores nothing; a
// hook with side effects makes it fail as kube's webhooks do.
func TestAdmissionDryRun(t *testing.T) {
	var mu sync.Mutex
	var sawDry []bool
	see := &admission.Hook{Mutate: func(_ context.Context, a *admission.Attributes) error {
		mu.Lock()
		defer mu.Unlock()
		sawDry = append(sawDry, a.DryRun)
		return nil
	}}
	sideEffects := &admission.Hook{HookName: "audit.example.com", SideEffects: true,
		Rules: []admission.Rule{{Resources: []string{"configmaps"}}}}
	s := newAdmissionServer(t, admission.Chain{Mutating: []admission.Mutator{see}, Validating: []admission.Validator{sideEffects}})
	mu.Lock()
	sawDry = nil
	mu.Unlock()
	s.must(201, "POST", widgetsPath+"?dryRun=All", widget("w", nil, nil))
	if r := s.do("GET", widgetsPath+"/w", nil); r.code != 404 {
		t.Errorf("dry-run create: got %d on GET; want 404", r.code)
	}
	s.must(201, "POST", widgetsPath, widget("w", nil, nil))
	s.must(200, "DELETE", widgetsPath+"/w?dryRun=All", nil)
	s.must(200, "GET", widgetsPath+"/w", nil)
	mu.Lock()
	if want := []bool{true, false, true}; !slices.Equal(sawDry, want) {
		t.Errorf("hooks saw DryRun %v; want %v", sawDry, want)
	}
	mu.Unlock()

	r := s.do("POST", configMapsPath+"?dryRun=All", configMap("c"))
	if m := r.obj(t); r.code != 400 || m["reason"] != "BadRequest" || m["message"] != `admission webhook "audit.example.com" does not support dry run` {
		t.Errorf("side effects on dry run: got %d %v %q; want 400 BadRequest", r.code, m["reason"], m["message"])
	}
	s.must(201, "POST", configMapsPath, configMap("c")) // without dry run, the hook runs
}

// EXT-4: a hook's warnings are Warning headers.
func TestAdmissionWarnings(t *testing.T) {
	warn := &admission.Hook{
		Mutate: func(_ context.Context, a *admission.Attributes) error { a.AddWarning("mutated"); return nil },
		Check:  func(_ context.Context, a *admission.Attributes) error { a.AddWarning("checked"); return nil },
	}
	s := newAdmissionServer(t, admission.Chain{Mutating: []admission.Mutator{warn}, Validating: []admission.Validator{warn}})
	r := s.do("POST", widgetsPath, widget("w", nil, nil))
	if want := []string{`299 - "mutated"`, `299 - "checked"`}; r.code != 201 || !slices.Equal(r.header.Values("Warning"), want) {
		t.Errorf("got %d %q; want 201 %q", r.code, r.header.Values("Warning"), want)
	}
}

// A strategy hook's plain error is a 500 Status, in-process too.
func TestStrategyHookError(t *testing.T) {
	res := configMaps()
	res.Strategy.PrepareForCreate = func(context.Context, registry.Object) error { return errors.New("no") }
	store := memory.New(memory.Options{})
	reg, err := registry.New(registry.Options{Storage: store})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if err := reg.Register(res); err != nil {
		t.Fatal(err)
	}
	c, err := registry.NewClient[map[string]any](reg, "v1", "configmaps")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Create(context.Background(), "default", &map[string]any{"metadata": map[string]any{"name": "a"}})
	var se *registry.StatusError
	if !errors.As(err, &se) || se.Code() != 500 {
		t.Errorf("got %v; want a 500 *StatusError", err)
	}
}

// annotator is a mutating hook adding an annotation to every object.
type annotator struct{}

func (annotator) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Object == nil {
		return nil
	}
	meta, _ := a.Object["metadata"].(map[string]any)
	meta["annotations"] = map[string]any{"added-by": "admission"}
	return nil
}

// TestAdmissionChangesNotOwned: managedFields record the object as the
// writer sent it; what mutating admission adds is owned by no one (kube's
// field manager runs before admission), on create and on update.
func TestAdmissionChangesNotOwned(t *testing.T) {
	s := newAdmissionServer(t, admission.Chain{Mutating: []admission.Mutator{annotator{}}})
	for _, tt := range []struct {
		name, method, path string
		body               map[string]any
	}{
		{"create", "POST", configMapsPath, map[string]any{"metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "v"}}},
		{"update", "PUT", configMapsPath + "/a", map[string]any{"metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "w", "l": "x"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code := 201
			if tt.method == "PUT" {
				code = 200
			}
			out := s.must(code, tt.method, tt.path, tt.body)
			meta, _ := out["metadata"].(map[string]any)
			if ann, _ := meta["annotations"].(map[string]any); ann["added-by"] != "admission" {
				t.Fatalf("the hook's annotation is missing: %v", meta)
			}
			mfs, _ := meta["managedFields"].([]any)
			if len(mfs) != 1 {
				t.Fatalf("managedFields: %v; want one entry", mfs)
			}
			fields, _ := mfs[0].(map[string]any)["fieldsV1"].(map[string]any)
			if _, ok := fields["f:data"]; !ok {
				t.Errorf("managedFields %v: the data the writer sent is not owned", fields)
			}
			if _, ok := fields["f:metadata"]; ok {
				t.Errorf("managedFields %v: the annotation admission added is owned", fields)
			}
		})
	}
}

// doubler doubles a Scale's spec.replicas, and records the kinds it saw.
type doubler struct {
	mu    sync.Mutex
	kinds []string
}

func (d *doubler) Admit(_ context.Context, a *admission.Attributes) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.kinds = append(d.kinds, fmt.Sprintf("%s/%s %s %v %v", a.KindGroup, a.KindVersion, a.Kind, a.Object["kind"], a.OldObject["kind"]))
	if a.Kind == "Scale" {
		spec, _ := a.Object["spec"].(map[string]any)
		n, _ := spec["replicas"].(float64)
		spec["replicas"] = 2 * n
	}
	return nil
}

// TestAdmissionOfScale: admission sees a /scale write as kube's does, an
// autoscaling/v1 Scale (old and new), and a mutating hook's change of its
// spec.replicas is written to the resource's replicas path.
func TestAdmissionOfScale(t *testing.T) {
	d := &doubler{}
	s := newAdmissionServer(t, admission.Chain{Mutating: []admission.Mutator{d}})
	s.must(201, "POST", widgetsPath, widget("w", nil, map[string]any{"replicas": 1}))
	scale := s.must(200, "PATCH", widgetsPath+"/w/scale", `{"spec":{"replicas":3}}`, "Content-Type", "application/merge-patch+json")
	if spec, _ := scale["spec"].(map[string]any); fmt.Sprint(spec["replicas"]) != "6" {
		t.Errorf("scale: got %v; want spec.replicas 6", scale)
	}
	w := s.must(200, "GET", widgetsPath+"/w", nil)
	if spec, _ := w["spec"].(map[string]any); fmt.Sprint(spec["replicas"]) != "6" {
		t.Errorf("widget: got %v; want spec.replicas 6", w)
	}
	want := []string{"/ Widget Widget <nil>", "autoscaling/v1 Scale Scale Scale"}
	if len(d.kinds) < 2 || !slices.Equal(d.kinds[len(d.kinds)-2:], want) { // after the default namespace's create
		t.Errorf("admission saw %q; want %q", d.kinds, want)
	}
}
