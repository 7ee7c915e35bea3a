package conformance

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// crudCase is one resource the verb tests run against.
type crudCase struct {
	name string
	gvr  schema.GroupVersionResource
	// build returns a new object named name in namespace ns.
	build func(ns, name string) *unstructured.Unstructured
	// mutate changes something outside metadata (spec or data).
	mutate func(u *unstructured.Unstructured)
	// hasGeneration: kube sets metadata.generation for custom resources but
	// not for configmaps.
	hasGeneration bool
}

var crudCases = []crudCase{
	{
		name:  "widgets",
		gvr:   widgetsGVR,
		build: func(ns, name string) *unstructured.Unstructured { return widget(ns, name, "red", 1, nil) },
		mutate: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "blue", "spec", "color")
		},
		hasGeneration: true,
	},
	{
		name:  "configmaps",
		gvr:   configMapsGVR,
		build: func(ns, name string) *unstructured.Unstructured { return configMap(ns, name, nil) },
		mutate: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "changed", "data", "key")
		},
	},
}

// VERB-1, VERB-3, META-1, META-2, RV-6: create, get, list, update and
// delete through the dynamic client, with kube's error semantics.
func TestDynamicCRUD(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range crudCases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			c := e.dyn.Resource(tc.gvr).Namespace("default")

			before := time.Now().Add(-2 * time.Second)
			created, err := c.Create(ctx, tc.build("default", "one"), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			t.Run("create", func(t *testing.T) {
				if created.GetUID() == "" {
					t.Errorf("uid: got empty; want a server-assigned uid")
				}
				if ts := created.GetCreationTimestamp(); ts.Time.Before(before) || ts.Time.After(time.Now().Add(2*time.Second)) {
					t.Errorf("creationTimestamp: got %v; want about now", ts)
				}
				if created.GetResourceVersion() == "" {
					t.Errorf("resourceVersion: got empty; want set")
				}
				if tc.hasGeneration && created.GetGeneration() != 1 {
					t.Errorf("generation: got %d; want 1", created.GetGeneration())
				}
				posts := e.log.matching(func(r request) bool {
					return r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/namespaces/default/"+tc.gvr.Resource)
				})
				if len(posts) != 1 || posts[0].Status != http.StatusCreated {
					t.Errorf("POST status: got %v; want one request answered 201", posts)
				}
			})

			t.Run("get", func(t *testing.T) {
				got, err := c.Get(ctx, "one", metav1.GetOptions{})
				if err != nil {
					t.Fatalf("get: %v", err)
				}
				if got.GetUID() != created.GetUID() || got.GetResourceVersion() != created.GetResourceVersion() {
					t.Errorf("get: got uid %s rv %s; want uid %s rv %s", got.GetUID(), got.GetResourceVersion(), created.GetUID(), created.GetResourceVersion())
				}
			})

			t.Run("get missing", func(t *testing.T) {
				_, err := c.Get(ctx, "missing", metav1.GetOptions{})
				if !apierrors.IsNotFound(err) {
					t.Errorf("get missing: got %v; want NotFound", err)
				}
			})

			t.Run("create duplicate", func(t *testing.T) {
				_, err := c.Create(ctx, tc.build("default", "one"), metav1.CreateOptions{})
				if !apierrors.IsAlreadyExists(err) {
					t.Errorf("create duplicate: got %v; want AlreadyExists", err)
				}
			})

			t.Run("list", func(t *testing.T) {
				l, err := c.List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatalf("list: %v", err)
				}
				wantKind := created.GetKind() + "List"
				if l.GetKind() != wantKind {
					t.Errorf("list kind: got %q; want %q", l.GetKind(), wantKind)
				}
				if l.GetResourceVersion() == "" {
					t.Errorf("list resourceVersion: got empty; want set")
				}
				if got := names(l.Items); len(got) != 1 || got[0] != "one" {
					t.Errorf("list names: got %v; want [one]", got)
				}
			})

			specChanged := created.DeepCopy()
			tc.mutate(specChanged)
			updated, err := c.Update(ctx, specChanged, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			t.Run("update spec", func(t *testing.T) {
				if updated.GetResourceVersion() == created.GetResourceVersion() {
					t.Errorf("resourceVersion: got %s unchanged; want a new one", updated.GetResourceVersion())
				}
				if tc.hasGeneration && updated.GetGeneration() != 2 {
					t.Errorf("generation after spec change: got %d; want 2", updated.GetGeneration())
				}
				if updated.GetUID() != created.GetUID() || !updated.GetCreationTimestamp().Time.Equal(created.GetCreationTimestamp().Time) {
					t.Errorf("uid/creationTimestamp: got %s/%v; want unchanged %s/%v", updated.GetUID(), updated.GetCreationTimestamp(), created.GetUID(), created.GetCreationTimestamp())
				}
			})

			labelled := updated.DeepCopy()
			labelled.SetLabels(map[string]string{"tier": "gold"})
			relabelled, err := c.Update(ctx, labelled, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update labels: %v", err)
			}
			t.Run("update metadata only", func(t *testing.T) {
				if tc.hasGeneration && relabelled.GetGeneration() != 2 {
					t.Errorf("generation after label change: got %d; want 2 (unchanged)", relabelled.GetGeneration())
				}
				if relabelled.GetLabels()["tier"] != "gold" {
					t.Errorf("labels: got %v; want tier=gold", relabelled.GetLabels())
				}
			})

			t.Run("update stale resourceVersion", func(t *testing.T) {
				stale := created.DeepCopy()
				tc.mutate(stale)
				_, err := c.Update(ctx, stale, metav1.UpdateOptions{})
				if !apierrors.IsConflict(err) {
					t.Errorf("update with resourceVersion %s (current %s): got %v; want Conflict", created.GetResourceVersion(), relabelled.GetResourceVersion(), err)
				}
			})

			t.Run("update missing", func(t *testing.T) {
				_, err := c.Update(ctx, tc.build("default", "missing"), metav1.UpdateOptions{})
				if !apierrors.IsNotFound(err) {
					t.Errorf("update missing: got %v; want NotFound", err)
				}
			})

			t.Run("delete", func(t *testing.T) {
				if err := c.Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
					t.Fatalf("delete: %v", err)
				}
				if _, err := c.Get(ctx, "one", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("get after delete: got %v; want NotFound", err)
				}
				if err := c.Delete(ctx, "one", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("delete again: got %v; want NotFound", err)
				}
				again, err := c.Create(ctx, tc.build("default", "one"), metav1.CreateOptions{})
				if err != nil {
					t.Fatalf("re-create after delete: %v", err)
				}
				if again.GetUID() == created.GetUID() {
					t.Errorf("re-created uid: got %s; want a new uid", again.GetUID())
				}
			})
		})
	}
}

// RV-6, DEL-2: delete preconditions on uid and resourceVersion.
func TestDeletePreconditions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	c := e.widgets("default")
	w := e.create(t, widgetsGVR, widget("default", "pre", "red", 1, nil))

	tests := []struct {
		name string
		pre  metav1.Preconditions
	}{
		{name: "wrong uid", pre: metav1.Preconditions{UID: ptrTo(types.UID("00000000-0000-0000-0000-000000000000"))}},
		{name: "wrong resourceVersion", pre: metav1.Preconditions{ResourceVersion: ptrTo("1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Delete(ctx, "pre", metav1.DeleteOptions{Preconditions: &tt.pre})
			if !apierrors.IsConflict(err) {
				t.Errorf("delete with %+v: got %v; want Conflict", tt.pre, err)
			}
		})
	}
	t.Run("matching", func(t *testing.T) {
		pre := metav1.Preconditions{UID: ptrTo(w.GetUID()), ResourceVersion: ptrTo(w.GetResourceVersion())}
		if err := c.Delete(ctx, "pre", metav1.DeleteOptions{Preconditions: &pre}); err != nil {
			t.Fatalf("delete with matching preconditions: %v", err)
		}
		if _, err := c.Get(ctx, "pre", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after delete: got %v; want NotFound", err)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }

// PATCH-1, PATCH-2, PATCH-5: merge and JSON patches through the dynamic
// client.
func TestDynamicPatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	c := e.widgets("default")
	w := e.create(t, widgetsGVR, widget("default", "p", "red", 1, nil))

	tests := []struct {
		name      string
		pt        types.PatchType
		patch     string
		wantColor string
		wantRepl  int64
		wantGen   int64
		// wantCode is the HTTP code of the expected error, 0 for success.
		wantCode int32
	}{
		{name: "merge spec", pt: types.MergePatchType, patch: `{"spec":{"color":"blue"}}`, wantColor: "blue", wantRepl: 1, wantGen: 2},
		{name: "merge labels only", pt: types.MergePatchType, patch: `{"metadata":{"labels":{"tier":"gold"}}}`, wantColor: "blue", wantRepl: 1, wantGen: 2},
		{name: "json replace", pt: types.JSONPatchType, patch: `[{"op":"replace","path":"/spec/replicas","value":5}]`, wantColor: "blue", wantRepl: 5, wantGen: 3},
		{name: "json test passes", pt: types.JSONPatchType, patch: `[{"op":"test","path":"/spec/color","value":"blue"},{"op":"replace","path":"/spec/color","value":"green"}]`, wantColor: "green", wantRepl: 5, wantGen: 4},
		{name: "json test fails", pt: types.JSONPatchType, patch: `[{"op":"test","path":"/spec/color","value":"purple"},{"op":"replace","path":"/spec/color","value":"black"}]`, wantColor: "green", wantRepl: 5, wantGen: 4, wantCode: http.StatusUnprocessableEntity},
		{name: "json malformed", pt: types.JSONPatchType, patch: `{"op":"replace"}`, wantColor: "green", wantRepl: 5, wantGen: 4, wantCode: http.StatusBadRequest},
		{name: "merge stale resourceVersion", pt: types.MergePatchType, patch: `{"metadata":{"resourceVersion":"` + w.GetResourceVersion() + `"},"spec":{"color":"black"}}`, wantColor: "green", wantRepl: 5, wantGen: 4, wantCode: http.StatusConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Patch(ctx, "p", tt.pt, []byte(tt.patch), metav1.PatchOptions{})
			switch {
			case tt.wantCode == 0 && err != nil:
				t.Fatalf("patch %s: %v", tt.patch, err)
			case tt.wantCode != 0:
				var st apierrors.APIStatus
				if !errors.As(err, &st) || st.Status().Code != tt.wantCode {
					t.Errorf("patch %s: got %v; want an HTTP %d Status", tt.patch, err, tt.wantCode)
				}
			}
			got, err := c.Get(ctx, "p", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if color := nestedString(t, got, "spec", "color"); color != tt.wantColor {
				t.Errorf("spec.color: got %q; want %q", color, tt.wantColor)
			}
			if repl, _ := nestedInt(t, got, "spec", "replicas"); repl != tt.wantRepl {
				t.Errorf("spec.replicas: got %d; want %d", repl, tt.wantRepl)
			}
			if got.GetGeneration() != tt.wantGen {
				t.Errorf("generation: got %d; want %d", got.GetGeneration(), tt.wantGen)
			}
		})
	}
	t.Run("missing object", func(t *testing.T) {
		_, err := c.Patch(ctx, "nope", types.MergePatchType, []byte(`{"spec":{"color":"blue"}}`), metav1.PatchOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("patch missing: got %v; want NotFound", err)
		}
	})
}

// URI-6: generateName makes a unique name from a prefix.
func TestGenerateName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	seen := map[string]bool{}
	for range 3 {
		w := widget("default", "", "red", 1, nil)
		w.SetGenerateName("wd-")
		got, err := e.widgets("default").Create(ctx, w, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create with generateName: %v", err)
		}
		name := got.GetName()
		if !strings.HasPrefix(name, "wd-") || len(name) != len("wd-")+5 {
			t.Errorf("generated name: got %q; want %q plus 5 characters", name, "wd-")
		}
		if seen[name] {
			t.Errorf("generated name %q: got a duplicate; want unique names", name)
		}
		seen[name] = true
		if _, err := e.widgets("default").Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("get %q: %v", name, err)
		}
	}
}

// META-6: a namespaced object can only be created in an existing namespace.
func TestCreateInMissingNamespace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	for _, tc := range crudCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.dyn.Resource(tc.gvr).Namespace("nowhere").Create(ctx, tc.build("nowhere", "x"), metav1.CreateOptions{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("create in missing namespace: got %v; want NotFound", err)
			}
		})
	}
}
