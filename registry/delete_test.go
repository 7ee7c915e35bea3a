package registry_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

const holdFinalizer = "example.com/hold"

// newGCServer is newServer whose registry (and garbage collector) is
// closed when the test ends.
func newGCServer(t *testing.T) *server {
	t.Helper()
	s := newServer(t)
	t.Cleanup(func() { s.reg.Close() })
	return s
}

// eventually polls cond until it holds, failing the test with what after
// a deadline (a bound on failure, not a timing assertion).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: deadline exceeded", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func finalizers(m map[string]any) []string {
	l, _ := path(m, "metadata.finalizers").([]any)
	out := make([]string, 0, len(l))
	for _, v := range l {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

// DEL-2: DELETE bodies and options are read and refused as kube-apiserver
// does (endpoints/handlers/delete.go, ValidateDeleteOptions).
func TestDeleteOptionsChecks(t *testing.T) {
	s := newGCServer(t)
	s.must(201, "POST", widgetsPath, widget("a", nil, nil))
	tests := []struct {
		name string
		body any
		code int
		msg  string // the whole message, or a prefix ending in "…"
	}{
		{"a Widget", `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"a"}}`, 400,
			`no kind "Widget" is registered for version "example.com/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{"a Status", `{"kind":"Status","apiVersion":"v1"}`, 400, `converting (v1.Status) to (v1.DeleteOptions): unknown conversion`},
		{"ListOptions", `{"kind":"ListOptions","apiVersion":"meta.k8s.io/v1"}`, 400, `converting (v1.ListOptions) to (v1.DeleteOptions): unknown conversion`},
		{"ListOptions of another version", `{"kind":"ListOptions","apiVersion":"meta.k8s.io/v1beta1"}`, 400,
			`no kind "ListOptions" is registered for version "meta.k8s.io/v1beta1" in scheme "pkg/runtime/scheme.go:111"`},
		{"an unparsable apiVersion", `{"kind":"DeleteOptions","apiVersion":"a/b/c"}`, 400, `unexpected GroupVersion string: a/b/c`},
		{"an array", `[]`, 400, "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }"},
		{"a wrong field type", `{"dryRun":"All"}`, 400, `json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string`},
		{"an unknown policy", map[string]any{"propagationPolicy": "Sideways"}, 422,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`},
		{"an unknown policy in the query", nil, 422,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`},
		{"both policies", map[string]any{"propagationPolicy": "Orphan", "orphanDependents": true}, 422,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`},
		{"an unknown dryRun", map[string]any{"dryRun": []string{"Bogus"}}, 422,
			`DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported values: "All"`},
		{"unsafe delete with other options", map[string]any{"ignoreStoreReadErrorWithClusterBreakingPotential": true,
			"propagationPolicy": "Orphan", "gracePeriodSeconds": 0, "preconditions": map[string]any{}}, 422,
			`DeleteOptions.meta.k8s.io "" is invalid: [ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .propagationPolicy, ` +
				`ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .gracePeriodSeconds, ` +
				`ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .preconditions]`},
		{"a resourceVersion precondition of 0", map[string]any{"preconditions": map[string]any{"resourceVersion": "0"}}, 409,
			`Operation cannot be fulfilled on Widget.example.com "a": the ResourceVersion in the precondition (0) does not match the ResourceVersion in record (…`},
		{"a resourceVersion precondition that is not a revision", map[string]any{"preconditions": map[string]any{"resourceVersion": "abc"}}, 409,
			`Operation cannot be fulfilled on Widget.example.com "a": the ResourceVersion in the precondition (abc) does not match the ResourceVersion in record (…`},
		{"an empty uid precondition", map[string]any{"preconditions": map[string]any{"uid": ""}}, 409,
			`Operation cannot be fulfilled on Widget.example.com "a": the UID in the precondition () does not match the UID in record (…`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := widgetsPath + "/a"
			if tt.body == nil {
				p += "?propagationPolicy=Sideways"
			}
			r := s.do("DELETE", p, tt.body)
			if r.code != tt.code {
				t.Fatalf("got %d %s; want %d", r.code, r.body, tt.code)
			}
			msg := str(r.obj(t), "message")
			if prefix, ok := strings.CutSuffix(tt.msg, "…"); ok {
				if !strings.HasPrefix(msg, prefix) {
					t.Errorf("message: got %q; want it to start with %q", msg, prefix)
				}
			} else if msg != tt.msg {
				t.Errorf("message:\n got %q\nwant %q", msg, tt.msg)
			}
		})
	}
	s.must(200, "GET", widgetsPath+"/a", nil)

	// What kube accepts: null, and DeleteOptions under any apiVersion
	// (it is an unversioned kind of kube's meta scheme).
	for _, body := range []string{`null`, `{"kind":"DeleteOptions","apiVersion":"example.com/v1"}`, `{"kind":"DeleteOptions","apiVersion":"v1"}`} {
		s.must(201, "POST", widgetsPath, widget("ok", nil, nil))
		s.must(200, "DELETE", widgetsPath+"/ok", body)
	}
}

// DEL-2: the propagation policy adds or removes the orphan and
// foregroundDeletion finalizers as kube's store does.
func TestDeletePropagationFinalizers(t *testing.T) {
	s := newGCServer(t)
	tests := []struct {
		name string
		held []string // finalizers at create
		body any
		want []string // finalizers in the DELETE response
		code int
	}{
		{"orphan", []string{holdFinalizer}, map[string]any{"propagationPolicy": "Orphan"}, []string{holdFinalizer, "orphan"}, 200},
		{"foreground", []string{holdFinalizer}, map[string]any{"propagationPolicy": "Foreground"}, []string{holdFinalizer, "foregroundDeletion"}, 200},
		{"background", []string{holdFinalizer}, map[string]any{"propagationPolicy": "Background"}, []string{holdFinalizer}, 200},
		{"default", []string{holdFinalizer}, nil, []string{holdFinalizer}, 200},
		{"orphanDependents true", []string{holdFinalizer}, map[string]any{"orphanDependents": true}, []string{holdFinalizer, "orphan"}, 200},
		{"orphanDependents false answers 202", []string{holdFinalizer}, map[string]any{"orphanDependents": false}, []string{holdFinalizer}, 202},
		{"background removes orphan", []string{holdFinalizer, "orphan"}, map[string]any{"propagationPolicy": "Background"}, []string{holdFinalizer}, 200},
		{"foreground replaces orphan", []string{"orphan", holdFinalizer}, map[string]any{"propagationPolicy": "Foreground"}, []string{holdFinalizer, "foregroundDeletion"}, 200},
		{"the object's finalizer wins over the default", []string{holdFinalizer, "orphan"}, nil, []string{holdFinalizer, "orphan"}, 200},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "p" + string(rune('a'+i))
			w := widget(name, nil, nil)
			w["metadata"].(map[string]any)["finalizers"] = tt.held
			s.must(201, "POST", widgetsPath, w)
			got := s.must(tt.code, "DELETE", widgetsPath+"/"+name, tt.body)
			if f := finalizers(got); !slices.Equal(f, tt.want) {
				t.Errorf("finalizers: got %v; want %v", f, tt.want)
			}
			if str(got, "metadata.deletionTimestamp") == "" {
				t.Errorf("deletionTimestamp: got unset; want set")
			}
			// The collector removes its finalizer (no dependents); the
			// user's keeps the object.
			eventually(t, "the collector's finalizers to go", func() bool {
				f := finalizers(s.must(200, "GET", widgetsPath+"/"+name, nil))
				return slices.Equal(f, []string{holdFinalizer})
			})
		})
	}

	t.Run("a deleting object may change policy", func(t *testing.T) {
		w := widget("again", nil, nil)
		w["metadata"].(map[string]any)["finalizers"] = []string{holdFinalizer}
		s.must(201, "POST", widgetsPath, w)
		first := s.must(200, "DELETE", widgetsPath+"/again", nil)
		got := s.must(200, "DELETE", widgetsPath+"/again", map[string]any{"propagationPolicy": "Orphan"})
		if f := finalizers(got); !slices.Equal(f, []string{holdFinalizer, "orphan"}) {
			t.Errorf("finalizers: got %v; want [%s orphan]", f, holdFinalizer)
		}
		if str(got, "metadata.deletionTimestamp") != str(first, "metadata.deletionTimestamp") {
			t.Errorf("deletionTimestamp moved: %s then %s", str(first, "metadata.deletionTimestamp"), str(got, "metadata.deletionTimestamp"))
		}
	})

	t.Run("emptied by the policy, the object goes", func(t *testing.T) {
		w := widget("onlyorphan", nil, nil)
		w["metadata"].(map[string]any)["finalizers"] = []string{"orphan"}
		s.must(201, "POST", widgetsPath, w)
		got := s.must(200, "DELETE", widgetsPath+"/onlyorphan", map[string]any{"propagationPolicy": "Background"})
		if str(got, "status") != "Success" {
			t.Errorf("got %v; want a Success Status", got)
		}
		s.must(404, "GET", widgetsPath+"/onlyorphan", nil)
	})
}

// With the collector off, no finalizer is added (kube's store with
// garbage collection disabled): an Orphan delete removes the object.
func TestDeletePropagationWithoutGC(t *testing.T) {
	store := memory.New(memory.Options{})
	reg, err := registry.New(registry.Options{Storage: store, DisableGarbageCollection: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(widgets()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	s := &server{t: t, reg: reg, store: store, url: srv.URL}
	s.must(201, "POST", widgetsPath, widget("a", nil, nil))
	got := s.must(200, "DELETE", widgetsPath+"/a", map[string]any{"propagationPolicy": "Orphan"})
	if str(got, "status") != "Success" {
		t.Errorf("got %v; want a Success Status", got)
	}
	s.must(404, "GET", widgetsPath+"/a", nil)
}

// DRY-1: dryRun deletes persist nothing, finalizers and all.
func TestDeleteDryRun(t *testing.T) {
	s := newGCServer(t)
	w := widget("held", nil, nil)
	w["metadata"].(map[string]any)["finalizers"] = []string{holdFinalizer}
	before := s.must(201, "POST", widgetsPath, w)
	s.must(201, "POST", widgetsPath, widget("plain", nil, nil))
	for _, tt := range []struct {
		name, path string
		body       any
	}{
		{"orphan", widgetsPath + "/held", map[string]any{"dryRun": []string{"All"}, "propagationPolicy": "Orphan"}},
		{"foreground in the query", widgetsPath + "/held?dryRun=All&propagationPolicy=Foreground", nil},
		{"plain", widgetsPath + "/plain?dryRun=All", nil},
		{"collection", widgetsPath, map[string]any{"dryRun": []string{"All"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s.must(200, "DELETE", tt.path, tt.body)
			got := s.must(200, "GET", widgetsPath+"/held", nil)
			if str(got, "metadata.resourceVersion") != str(before, "metadata.resourceVersion") || str(got, "metadata.deletionTimestamp") != "" {
				t.Errorf("held widget changed by a dry run: %v", got)
			}
			s.must(200, "GET", widgetsPath+"/plain", nil)
		})
	}
}

// DEL-4: an object whose stored bytes do not decode fails reads with
// kube's InternalError and goes only with the unsafe delete option.
func TestDeleteCorrupt(t *testing.T) {
	s := newGCServer(t)
	const key = "/example.com/widgets/default/bad"
	if _, err := s.store.Create(context.Background(), storage.Object{Key: key, Value: []byte("{not json"),
		Fields: map[string]string{"metadata.name": "bad", "metadata.namespace": "default"}}); err != nil {
		t.Fatal(err)
	}
	s.must(201, "POST", widgetsPath, widget("good", nil, nil))
	unsafe := map[string]any{"ignoreStoreReadErrorWithClusterBreakingPotential": true}
	tests := []struct {
		name       string
		method     string
		path       string
		body       any
		code       int
		msgPrefix  string
		stillThere bool
	}{
		{"plain delete", "DELETE", widgetsPath + "/bad", nil, 500,
			"Internal error occurred: StorageError: corrupt object, Code: 6, Key: " + key + ", ResourceVersion: 0, AdditionalErrorMsg: ", true},
		{"unsafe with a policy", "DELETE", widgetsPath + "/bad", map[string]any{"ignoreStoreReadErrorWithClusterBreakingPotential": true, "propagationPolicy": "Background"}, 422,
			`DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .propagationPolicy`, true},
		{"unsafe collection", "DELETE", widgetsPath, unsafe, 422,
			`DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option`, true},
		{"unsafe on a decodable object", "DELETE", widgetsPath + "/good", unsafe, 409,
			`Operation cannot be fulfilled on widgets.example.com "good": StorageError: invalid object, Code: 4, Key: /example.com/widgets/default/good`, true},
		{"unsafe dry run", "DELETE", widgetsPath + "/bad?dryRun=All&ignoreStoreReadErrorWithClusterBreakingPotential=true", nil, 200, "", true},
		{"unsafe", "DELETE", widgetsPath + "/bad", unsafe, 200, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(tt.method, tt.path, tt.body)
			if r.code != tt.code {
				t.Fatalf("got %d %s; want %d", r.code, r.body, tt.code)
			}
			if msg := str(r.obj(t), "message"); !strings.HasPrefix(msg, tt.msgPrefix) {
				t.Errorf("message: got %q; want it to start with %q", msg, tt.msgPrefix)
			}
			_, err := s.store.Get(context.Background(), key, storage.GetOptions{})
			if there := err == nil; there != tt.stillThere {
				t.Errorf("corrupt object still stored: got %v; want %v", there, tt.stillThere)
			}
		})
	}
	s.must(200, "GET", widgetsPath+"/good", nil)
}
