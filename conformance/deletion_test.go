package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// newDeletionEnv is an env on a store the test keeps (to write into it
// directly), with the registry closed when the test ends.
func newDeletionEnv(t *testing.T) (*env, storage.Interface) {
	t.Helper()
	opts := withStorage(t, server.Options{})
	if opts.Storage == nil {
		opts.Storage = memory.New(memory.Options{})
	}
	reg, err := server.New(opts)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	t.Cleanup(func() { reg.Close() })
	return newEnvFor(t, reg), opts.Storage
}

// ownerRef is an ownerReferences entry for owner.
func ownerRef(owner *unstructured.Unstructured, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(),
		UID: owner.GetUID(), BlockOwnerDeletion: &block}
}

// waitGone waits until GET of name through c answers NotFound.
func waitGone(t *testing.T, what string, get func(ctx context.Context) error) {
	t.Helper()
	poll(t, what+" to be deleted", func(ctx context.Context) (bool, error) {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, nil
	})
}

// DEL-2, DEL-3: kubectl delete --cascade=background|foreground|orphan of
// an owner with dependents of two resources, collected by the built-in
// garbage collector.
func TestKubectlCascade(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cascade string // "" is kubectl's default, background
		orphan  bool
	}{
		{"", false},
		{"background", false},
		{"foreground", false},
		{"orphan", true},
	}
	for _, tt := range tests {
		t.Run("cascade "+tt.cascade, func(t *testing.T) {
			t.Parallel()
			e, _ := newDeletionEnv(t)
			ctx := testContext(t)
			k := newKubectl(t, e)
			owner := e.create(t, configMapsGVR, configMap("default", "owner", nil))
			dw := widget("default", "dep", "red", 1, nil)
			dw.SetOwnerReferences([]metav1.OwnerReference{ownerRef(owner, true)})
			e.create(t, widgetsGVR, dw)
			dc := configMap("default", "dep", nil)
			dc.SetOwnerReferences([]metav1.OwnerReference{ownerRef(owner, false)})
			e.create(t, configMapsGVR, dc)

			args := []string{"delete", "configmap", "owner", "-n", "default"}
			if tt.cascade != "" {
				args = append(args, "--cascade="+tt.cascade)
			}
			out := k.mustRun(t, args...)
			if !strings.Contains(out, `configmap "owner" deleted`) {
				t.Errorf("kubectl output: got %q; want it to report the deletion", out)
			}
			waitGone(t, "the owner", func(ctx context.Context) error {
				_, err := e.configMaps("default").Get(ctx, "owner", metav1.GetOptions{})
				return err
			})
			for _, c := range []struct {
				what string
				get  func(ctx context.Context) (*unstructured.Unstructured, error)
			}{
				{"widget dep", func(ctx context.Context) (*unstructured.Unstructured, error) {
					return e.widgets("default").Get(ctx, "dep", metav1.GetOptions{})
				}},
				{"configmap dep", func(ctx context.Context) (*unstructured.Unstructured, error) {
					return e.configMaps("default").Get(ctx, "dep", metav1.GetOptions{})
				}},
			} {
				if !tt.orphan {
					waitGone(t, c.what, func(ctx context.Context) error { _, err := c.get(ctx); return err })
					continue
				}
				got, err := c.get(ctx)
				if err != nil {
					t.Fatalf("%s after an orphaning delete: %v; want it kept", c.what, err)
				}
				if refs := got.GetOwnerReferences(); len(refs) != 0 {
					t.Errorf("%s ownerReferences: got %v; want none", c.what, refs)
				}
			}
		})
	}
}

// DEL-2: foreground deletion keeps the owner, with deletionTimestamp and
// the foregroundDeletion finalizer, while a blocking dependent remains.
func TestForegroundDeletionBlocks(t *testing.T) {
	t.Parallel()
	e, _ := newDeletionEnv(t)
	ctx := testContext(t)
	c := e.widgets("default")
	owner := e.create(t, widgetsGVR, widget("default", "owner", "red", 1, nil))
	dep := widget("default", "blocker", "red", 1, nil)
	dep.SetOwnerReferences([]metav1.OwnerReference{ownerRef(owner, true)})
	dep.SetFinalizers([]string{holdFinalizer})
	e.create(t, widgetsGVR, dep)

	fg := metav1.DeletePropagationForeground
	if err := c.Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	poll(t, "the blocker to be marked for deletion", func(ctx context.Context) (bool, error) {
		b, err := c.Get(ctx, "blocker", metav1.GetOptions{})
		return err == nil && b.GetDeletionTimestamp() != nil, err
	})
	o, err := c.Get(ctx, "owner", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("owner while the blocker remains: %v; want it kept", err)
	}
	if o.GetDeletionTimestamp() == nil || len(o.GetFinalizers()) != 1 || o.GetFinalizers()[0] != metav1.FinalizerDeleteDependents {
		t.Fatalf("owner: deletionTimestamp %v, finalizers %v; want set and [foregroundDeletion]", o.GetDeletionTimestamp(), o.GetFinalizers())
	}
	if _, err := c.Patch(ctx, "blocker", "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("remove the blocker's finalizer: %v", err)
	}
	waitGone(t, "the owner", func(ctx context.Context) error { _, err := c.Get(ctx, "owner", metav1.GetOptions{}); return err })
}

// DEL-2: DELETE bodies that are not DeleteOptions, sent raw, are refused
// as kube-apiserver refuses them; invalid options are 422.
func TestDeleteBodies(t *testing.T) {
	t.Parallel()
	e, _ := newDeletionEnv(t)
	ctx := testContext(t)
	created := e.create(t, widgetsGVR, widget("default", "target", "red", 1, nil))
	rc := restClient(t, e)
	tests := []struct {
		name   string
		body   string
		code   int
		reason metav1.StatusReason
		msg    string // prefix
	}{
		{"a Widget", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"target"}}`, 400, metav1.StatusReasonBadRequest,
			`no kind "Widget" is registered for version "example.com/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{"a Status", `{"apiVersion":"v1","kind":"Status","status":"Success"}`, 400, metav1.StatusReasonBadRequest,
			`converting (v1.Status) to (v1.DeleteOptions): unknown conversion`},
		{"an unparsable apiVersion", `{"apiVersion":"meta.k8s.io/v1/x","kind":"DeleteOptions"}`, 400, metav1.StatusReasonBadRequest,
			`unexpected GroupVersion string: meta.k8s.io/v1/x`},
		{"an unknown policy", `{"propagationPolicy":"Sideways"}`, 422, metav1.StatusReasonInvalid,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways"`},
		{"a resourceVersion precondition of 0", `{"preconditions":{"resourceVersion":"0"}}`, 409, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on Widget.example.com "target": the ResourceVersion in the precondition (0) does not match`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := rc.Delete().AbsPath("/apis/example.com/v1/namespaces/default/widgets/target").
				SetHeader("Content-Type", "application/json").Body([]byte(tt.body)).Do(ctx)
			var code int
			res.StatusCode(&code)
			err := res.Error()
			var st apierrors.APIStatus
			if code != tt.code || err == nil || !errors.As(err, &st) || st.Status().Reason != tt.reason || !strings.HasPrefix(st.Status().Message, tt.msg) {
				t.Fatalf("got %d %v; want %d %s %q…", code, err, tt.code, tt.reason, tt.msg)
			}
		})
	}
	got, err := e.widgets("default").Get(ctx, "target", metav1.GetOptions{})
	if err != nil || got.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatalf("target after refused deletes: %v, %v; want unchanged", got, err)
	}

	// kube decodes null, and DeleteOptions of any group, as DeleteOptions.
	for i, body := range []string{`null`, `{"apiVersion":"example.com/v1","kind":"DeleteOptions"}`} {
		name := []string{"null-body", "other-group"}[i]
		e.create(t, widgetsGVR, widget("default", name, "red", 1, nil))
		if err := rc.Delete().AbsPath("/apis/example.com/v1/namespaces/default/widgets/"+name).
			SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(ctx).Error(); err != nil {
			t.Errorf("DELETE with %s: %v; want success", body, err)
		}
	}
}

// DRY-1: dryRun on DELETE and deletecollection persists nothing.
func TestDeleteDryRunPersistsNothing(t *testing.T) {
	t.Parallel()
	e, _ := newDeletionEnv(t)
	ctx := testContext(t)
	c := e.widgets("default")
	held := widget("default", "held", "red", 1, nil)
	held.SetFinalizers([]string{holdFinalizer})
	before := e.create(t, widgetsGVR, held)
	e.create(t, widgetsGVR, widget("default", "plain", "red", 1, nil))
	orphan := metav1.DeletePropagationOrphan
	dry := metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}, PropagationPolicy: &orphan}
	if err := c.Delete(ctx, "held", dry); err != nil {
		t.Fatalf("dry-run delete: %v", err)
	}
	if err := c.Delete(ctx, "plain", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("dry-run delete: %v", err)
	}
	if err := c.DeleteCollection(ctx, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}, metav1.ListOptions{}); err != nil {
		t.Fatalf("dry-run deletecollection: %v", err)
	}
	l, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(l.Items); len(got) != 2 {
		t.Fatalf("widgets after dry runs: got %v; want [held plain]", got)
	}
	for _, it := range l.Items {
		if it.GetName() == "held" && (it.GetResourceVersion() != before.GetResourceVersion() || it.GetDeletionTimestamp() != nil) {
			t.Errorf("held widget changed by a dry run: %v", it.Object)
		}
	}
}

// DEL-4: undecodable stored bytes: reads fail with an InternalError naming
// the key; only DELETE with ignoreStoreReadErrorWithClusterBreakingPotential
// removes the object.
func TestCorruptObjectDeletion(t *testing.T) {
	t.Parallel()
	e, store := newDeletionEnv(t)
	ctx := testContext(t)
	const key = "/example.com/widgets/default/corrupt"
	if _, err := store.Create(ctx, storage.Object{Key: key, Value: []byte("\x00not an object"),
		Fields: map[string]string{"metadata.name": "corrupt", "metadata.namespace": "default"}}); err != nil {
		t.Fatalf("write corrupt bytes: %v", err)
	}
	c := e.widgets("default")
	var st apierrors.APIStatus
	for what, read := range map[string]func() error{
		"get":  func() error { _, err := c.Get(ctx, "corrupt", metav1.GetOptions{}); return err },
		"list": func() error { _, err := c.List(ctx, metav1.ListOptions{}); return err },
	} {
		if err := read(); !apierrors.IsInternalError(err) || !errors.As(err, &st) || !strings.Contains(st.Status().Message, "corrupt object") || !strings.Contains(st.Status().Message, key) {
			t.Errorf("%s of a corrupt object: got %v; want 500 InternalError naming %s", what, err, key)
		}
	}

	err := c.Delete(ctx, "corrupt", metav1.DeleteOptions{})
	if !apierrors.IsInternalError(err) || !errors.As(err, &st) || !strings.Contains(st.Status().Message, "corrupt object") || !strings.Contains(st.Status().Message, key) {
		t.Fatalf("delete of a corrupt object: got %v; want 500 InternalError naming %s", err, key)
	}
	yes := true
	orphan := metav1.DeletePropagationOrphan
	if err := c.Delete(ctx, "corrupt", metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: &yes, PropagationPolicy: &orphan}); !apierrors.IsInvalid(err) {
		t.Fatalf("unsafe delete with a policy: got %v; want 422 Invalid", err)
	}
	if err := c.Delete(ctx, "corrupt", metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: &yes}); err != nil {
		t.Fatalf("unsafe delete: %v", err)
	}
	if _, err := store.Get(ctx, key, storage.GetOptions{}); !storage.IsNotFound(err) {
		t.Fatalf("corrupt object after the unsafe delete: %v; want it gone", err)
	}
}
