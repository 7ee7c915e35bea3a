package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/durable"
	"github.com/kapi-dev/kapi/storage/etcd3"
	"github.com/kapi-dev/kapi/storage/memory"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// restClient is client-go's unversioned JSON REST client for e: real
// transport and real error decoding, for requests the typed and dynamic
// clients cannot shape (raw bodies, Accept headers, no retries).
func restClient(t *testing.T, e *env) rest.Interface {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(e.config())
	if err != nil {
		t.Fatal(err)
	}
	return dc.RESTClient()
}

const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"

// OPS-1, VERB-2, CODEC-1, CODEC-5: bad input answers a clear 4xx Status and
// writes nothing.
func TestBadInput(t *testing.T) {
	e := newEnv(t)
	ctx := testContext(t)
	rc := restClient(t, e)
	tests := []struct {
		name   string
		req    func() *rest.Request
		is     func(error) bool
		reason string
	}{
		{"malformed JSON body", func() *rest.Request { return rc.Post().AbsPath(widgetsPath).Body([]byte(`{"metadata":`)) }, apierrors.IsBadRequest, "BadRequest"},
		{"data after the JSON object", func() *rest.Request {
			return rc.Post().AbsPath(widgetsPath).Body([]byte(`{"metadata":{"name":"trailing"}}]xyz`))
		}, apierrors.IsBadRequest, "BadRequest"},
		{"number out of range", func() *rest.Request {
			return rc.Post().AbsPath(widgetsPath).Body([]byte(`{"metadata":{"name":"big"},"spec":{"replicas":1e400}}`))
		}, apierrors.IsBadRequest, "BadRequest"},
		{"body over 3 MiB", func() *rest.Request {
			return rc.Post().AbsPath(widgetsPath).Body([]byte(`{"metadata":{"name":"huge"},"spec":{"blob":"` + strings.Repeat("x", 3<<20) + `"}}`))
		}, apierrors.IsRequestEntityTooLargeError, "RequestEntityTooLarge"},
		{"protobuf only accepted", func() *rest.Request {
			return rc.Get().AbsPath(widgetsPath).SetHeader("Accept", "application/vnd.kubernetes.protobuf")
		}, apierrors.IsNotAcceptable, "NotAcceptable"},
		{"unknown dryRun", func() *rest.Request {
			return rc.Post().AbsPath(widgetsPath).Param("dryRun", "Some").Body([]byte(`{"metadata":{"name":"d"}}`))
		}, apierrors.IsInvalid, "Invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req().Do(ctx).Error()
			var st apierrors.APIStatus
			if !tt.is(err) || !errors.As(err, &st) || string(st.Status().Reason) != tt.reason || st.Status().Message == "" {
				t.Fatalf("got %v; want a %s Status with a message", err, tt.reason)
			}
		})
	}
	list, err := e.widgets("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("after bad requests: got %v, %v; want no widgets (nothing half-written)", names(list.Items), err)
	}
	raw, err := rc.Get().AbsPath("/api/v1/namespaces/default").Param("pretty", "true").DoRaw(ctx)
	if err != nil || !strings.Contains(string(raw), "\n  \"kind\": \"Namespace\"") {
		t.Errorf("pretty=true: got %q, %v; want indented JSON", raw, err)
	}
}

// DRY-1 (as far as issue 3 goes): dryRun=All runs every stage and
// persists nothing.
func TestDryRun(t *testing.T) {
	e := newEnv(t)
	ctx := testContext(t)
	c := e.widgets("default")
	dry := []string{metav1.DryRunAll}
	got, err := c.Create(ctx, widget("default", "dry", "red", 1, nil), metav1.CreateOptions{DryRun: dry})
	if err != nil || got.GetUID() == "" || got.GetCreationTimestamp().Time.IsZero() {
		t.Fatalf("dry-run create: got %v, %v; want the object with server fields set", got, err)
	}
	if _, err := c.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after dry-run create: got %v; want NotFound", err)
	}
	e.create(t, widgetsGVR, widget("default", "real", "red", 1, nil))
	if _, err := c.Patch(ctx, "real", "application/merge-patch+json", []byte(`{"spec":{"color":"blue"}}`), metav1.PatchOptions{DryRun: dry}); err != nil {
		t.Fatalf("dry-run patch: %v", err)
	}
	if err := c.Delete(ctx, "real", metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Fatalf("dry-run delete: %v", err)
	}
	cur, err := c.Get(ctx, "real", metav1.GetOptions{})
	if err != nil || nestedString(t, cur, "spec", "color") != "red" {
		t.Errorf("after dry-run patch and delete: got %v, %v; want the widget unchanged (red)", cur, err)
	}
}

// RV-4, RV-5, WATCH-3, LIST-2: compacted revisions are 410 Expired (a list
// error, or one ERROR event on a watch); a revision the store has not
// reached is 504 with cause ResourceVersionTooLarge and Retry-After.
func TestExpiredAndTooLarge(t *testing.T) {
	// The test compacts its store, and etcd compaction is global to the
	// cluster: on etcd3 it gets an etcd of its own.
	var store storage.Interface = memory.New(memory.Options{Wait: 100 * time.Millisecond})
	if onEtcd3() {
		store = cached(t, newEtcdStore(t, ownEtcd(t), etcd3.Options{Wait: 100 * time.Millisecond}), 100*time.Millisecond)
	}
	if backend == "durable" {
		store = newDurableStore(t, durable.Options{Wait: 100 * time.Millisecond})
	}
	reg, err := server.New(server.Options{Storage: store})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvFor(t, reg)
	ctx := testContext(t)
	c := e.widgets("default")
	old := e.create(t, widgetsGVR, widget("default", "a", "red", 1, nil)).GetResourceVersion()
	e.create(t, widgetsGVR, widget("default", "b", "red", 1, nil))
	first, err := c.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	e.create(t, widgetsGVR, widget("default", "c", "red", 1, nil))
	cur, _ := store.Revision(ctx)
	if err := store.Compact(ctx, cur); err != nil {
		t.Fatal(err)
	}

	_, err = c.List(ctx, metav1.ListOptions{ResourceVersion: old, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !apierrors.IsResourceExpired(err) {
		t.Errorf("exact list at a compacted revision: got %v; want 410 Expired", err)
	}
	_, err = c.List(ctx, metav1.ListOptions{Limit: 1, Continue: first.GetContinue()})
	var st apierrors.APIStatus
	if !apierrors.IsResourceExpired(err) || !errors.As(err, &st) || st.Status().ListMeta.Continue == "" {
		t.Errorf("continue after compaction: got %v; want 410 Expired carrying a fresh continue token", err)
	} else if rest, err := c.List(ctx, metav1.ListOptions{Limit: 5, Continue: st.Status().ListMeta.Continue}); err != nil || len(rest.Items) == 0 {
		t.Errorf("inconsistent continuation: got %v, %v; want the rest of the list", rest, err)
	}

	w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: old})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
			t.Errorf("watch from a compacted revision: got %s %v; want one ERROR event with 410 Expired", ev.Type, ev.Object)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no event on a watch from a compacted revision")
	}

	// client-go retries a 504 that carries Retry-After; ask for no retries
	// to see the answer itself.
	err = restClient(t, e).Get().AbsPath(widgetsPath).Param("resourceVersion", "999999").
		Param("resourceVersionMatch", "NotOlderThan").MaxRetries(0).Do(ctx).Error()
	if !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) || !apierrors.IsTimeout(err) {
		t.Errorf("list at a future revision: got %v; want 504 Timeout with cause ResourceVersionTooLarge", err)
	}
	if d, ok := apierrors.SuggestsClientDelay(err); !ok || d < 1 {
		t.Errorf("too large: got retry-after %d, %v; want a client delay", d, ok)
	}
}

// EXT-1, OPS-2: strategy hooks and a user-defined subresource through the
// dynamic and REST clients; a panicking hook answers 500 for that request
// only.
func TestStrategyHooksAndPanics(t *testing.T) {
	reg, err := server.New(withStorage(t, server.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	gadgets := &registry.Resource{
		Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true,
		Strategy: registry.Strategy{
			Default: func(_ context.Context, o registry.Object) error {
				if o.Name() == "boom" {
					panic("a bug in a hook")
				}
				o["spec"] = map[string]any{"size": "M"}
				return nil
			},
			ValidateCreate: func(_ context.Context, o registry.Object) []registry.FieldError {
				if o.Labels()["forbidden"] != "" {
					return []registry.FieldError{{Type: "FieldValueForbidden", Field: "metadata.labels", Detail: "the forbidden label is not allowed"}}
				}
				return nil
			},
		},
		Subresources: map[string]registry.SubresourceHandler{
			"size": func(_ context.Context, req registry.SubresourceRequest) (any, error) {
				return map[string]any{"kind": "Size", "apiVersion": "v1", "size": req.Object["spec"].(map[string]any)["size"]}, nil
			},
		},
	}
	if err := reg.Register(gadgets); err != nil {
		t.Fatal(err)
	}
	e := newEnvFor(t, reg)
	ctx := testContext(t)
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	c := e.dyn.Resource(gvr).Namespace("default")
	gadget := func(name string, labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": name}}}
		u.SetLabels(labels)
		return u
	}
	got, err := c.Create(ctx, gadget("g", nil), metav1.CreateOptions{})
	if err != nil || nestedString(t, got, "spec", "size") != "M" {
		t.Fatalf("create: got %v, %v; want the default size M", got, err)
	}
	if _, err := c.Create(ctx, gadget("h", map[string]string{"forbidden": "x"}), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("ValidateCreate: got %v; want 422 Invalid", err)
	}
	raw, err := restClient(t, e).Get().AbsPath("/apis/example.com/v1/namespaces/default/gadgets/g/size").DoRaw(ctx)
	if err != nil || !strings.Contains(string(raw), `"size":"M"`) {
		t.Errorf("custom subresource: got %s, %v", raw, err)
	}
	if _, err := c.Create(ctx, gadget("boom", nil), metav1.CreateOptions{}); !apierrors.IsInternalError(err) {
		t.Errorf("panicking hook: got %v; want 500 InternalError", err)
	}
	if _, err := c.Get(ctx, "g", metav1.GetOptions{}); err != nil {
		t.Errorf("after the panic: %v; want the server to go on", err)
	}
}
