package conformance

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// The media types the server answers in (CODEC-3, CODEC-4).
const (
	ctJSON          = "application/json"
	ctYAML          = "application/yaml"
	ctProtobuf      = "application/vnd.kubernetes.protobuf"
	ctProtobufWatch = "application/vnd.kubernetes.protobuf;stream=watch"
	ctCBOR          = "application/cbor"
	ctCBORSeq       = "application/cbor-seq"
)

// isWatch reports whether r is a watch request.
func isWatch(r request) bool {
	q, _ := url.ParseQuery(r.Query)
	return q.Get("watch") == "true" || q.Get("watch") == "1"
}

// sameMediaType reports whether the Content-Type got is the media type
// want: the same type, every parameter of want, and a stream parameter
// only when want has one. Other parameters (as=..., charset) may be there.
func sameMediaType(got, want string) bool {
	gt, gp, err := mime.ParseMediaType(got)
	if err != nil {
		return false
	}
	wt, wp, err := mime.ParseMediaType(want)
	if err != nil || gt != wt {
		return false
	}
	for k, v := range wp {
		if gp[k] != v {
			return false
		}
	}
	if _, ok := gp["stream"]; ok && wp["stream"] == "" {
		return false
	}
	return true
}

// checkAnswered checks from the server's request log that every request for
// which keep is true was answered in the media type object, watches in
// stream. There must be at least one such request, and at least one watch
// unless stream is empty.
func checkAnswered(t *testing.T, log *requestLog, keep func(request) bool, object, stream string) {
	t.Helper()
	var n, watches int
	for _, r := range log.matching(keep) {
		n++
		want := object
		if isWatch(r) {
			watches++
			want = stream
		}
		if !sameMediaType(r.ContentType, want) {
			t.Errorf("server answered %v (Accept %q): got Content-Type %q; want %q", r, r.Accept, r.ContentType, want)
		}
	}
	if n == 0 {
		t.Errorf("requests to check: got none; want some (all requests: %v)", log.all())
	}
	if stream != "" && watches == 0 {
		t.Errorf("watch requests: got none; want at least one (all requests: %v)", log.all())
	}
}

// pathUnder returns a filter for requests whose path is prefix or below it.
func pathUnder(prefix string) func(request) bool {
	return func(r request) bool { return r.Path == prefix || strings.HasPrefix(r.Path, prefix+"/") }
}

// bodyLog records, server side, the Content-Type of every request that
// carries a body (so a test can prove what the client sent).
type bodyLog struct {
	mu   sync.Mutex
	reqs []string // "METHOD PATH CONTENT-TYPE"
}

func (l *bodyLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && r.Method != http.MethodGet {
			l.mu.Lock()
			l.reqs = append(l.reqs, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// check checks that every request with a body whose method is among
// methods was sent as want, and that there was at least one per method.
func (l *bodyLog) check(t *testing.T, want string, methods ...string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]bool{}
	for _, r := range l.reqs {
		f := strings.SplitN(r, " ", 3)
		if !slices.Contains(methods, f[0]) {
			continue
		}
		seen[f[0]] = true
		if !sameMediaType(f[2], want) {
			t.Errorf("request body of %s %s: got Content-Type %q; want %q", f[0], f[1], f[2], want)
		}
	}
	for _, m := range methods {
		if !seen[m] {
			t.Errorf("%s requests with a body: got none; want some sent as %s (all: %v)", m, want, l.reqs)
		}
	}
}

// newBodyEnv is newEnv with a bodyLog in front of the server.
func newBodyEnv(t *testing.T) (*env, *bodyLog) {
	t.Helper()
	bodies := &bodyLog{}
	return newEnvFor(t, bodies.wrap(newServerHandler(t))), bodies
}

// CODEC-3: client-go's typed clientset in its default configuration
// (protobuf bodies; Accept protobuf, then JSON) does CRUD, list, watch and
// delete with DeleteOptions, and the server answers every request in
// protobuf.
func TestTypedClientProtobufWire(t *testing.T) {
	t.Parallel()
	e, bodies := newBodyEnv(t)
	ctx := testContext(t)
	cs := newClientset(t, e)

	t.Run("namespaces", func(t *testing.T) {
		nss := cs.CoreV1().Namespaces()
		before, err := nss.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		w, err := nss.Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		ns, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "proto", Labels: map[string]string{"team": "a"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if ns.UID == "" || ns.Status.Phase != corev1.NamespaceActive {
			t.Errorf("created namespace: got uid %q phase %q; want a uid and phase Active", ns.UID, ns.Status.Phase)
		}
		ns.Labels["team"] = "b"
		if _, err := nss.Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update: %v", err)
		}
		got, err := nss.Get(ctx, "proto", metav1.GetOptions{})
		if err != nil || got.Labels["team"] != "b" {
			t.Fatalf("get: got %v, %v; want label team=b", got, err)
		}
		l, err := nss.List(ctx, metav1.ListOptions{LabelSelector: "team=b"})
		if err != nil || len(l.Items) != 1 || l.Items[0].Name != "proto" {
			t.Fatalf("list team=b: got %v, %v; want [proto]", l, err)
		}
		for i, want := range []watch.EventType{watch.Added, watch.Modified} {
			ev := nextEvent(t, w)
			n, ok := ev.Object.(*corev1.Namespace)
			if ev.Type != want || !ok || n.Name != "proto" {
				t.Fatalf("namespace watch event %d: got %s %T; want %s of Namespace proto", i, ev.Type, ev.Object, want)
			}
		}
	})

	t.Run("configmaps", func(t *testing.T) {
		cms := cs.CoreV1().ConfigMaps("proto")
		created, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"app": "p"}, Annotations: map[string]string{"note": "ünïcode"}},
			Data:       map[string]string{"a": "1"},
			BinaryData: map[string][]byte{"bin": {0, 1, 2, 0xff}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if created.UID == "" || created.Data["a"] != "1" || !bytes.Equal(created.BinaryData["bin"], []byte{0, 1, 2, 0xff}) || created.Annotations["note"] != "ünïcode" {
			t.Errorf("created: got %+v; want uid set, data a=1, binaryData bin=00 01 02 ff, annotation note", created)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		got, err := cms.Get(ctx, "c", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		got.Data["b"] = "2"
		if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update: %v", err)
		}
		patched, err := cms.Patch(ctx, "c", types.MergePatchType, []byte(`{"data":{"c":"3"}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("merge patch: %v", err)
		}
		l, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=p"})
		if err != nil || len(l.Items) != 1 || len(l.Items[0].Data) != 3 {
			t.Fatalf("list app=p: got %v, %v; want [c] with data a, b and c", l, err)
		}

		// DeleteOptions travel as a protobuf body.
		wrongUID := types.UID("not-the-uid")
		err = cms.Delete(ctx, "c", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
		if !apierrors.IsConflict(err) {
			t.Errorf("delete with a wrong uid precondition: got %v; want 409 Conflict", err)
		}
		if err := cms.Delete(ctx, "c", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Errorf("dry-run delete: %v", err)
		}
		if _, err := cms.Get(ctx, "c", metav1.GetOptions{}); err != nil {
			t.Errorf("get after a dry-run delete: got %v; want the configmap still there", err)
		}
		err = cms.Delete(ctx, "c", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &patched.UID, ResourceVersion: &patched.ResourceVersion}})
		if err != nil {
			t.Fatalf("delete with matching preconditions: %v", err)
		}
		_, err = cms.Get(ctx, "c", metav1.GetOptions{})
		if st, ok := err.(apierrors.APIStatus); !apierrors.IsNotFound(err) || !ok || st.Status().Details == nil || st.Status().Details.Name != "c" {
			t.Errorf("get after delete: got %v; want a NotFound Status naming c", err)
		}

		for i, want := range []watch.EventType{watch.Modified, watch.Modified, watch.Deleted} {
			ev := nextEvent(t, w)
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if ev.Type != want || !ok || cm.Name != "c" {
				t.Fatalf("configmap watch event %d: got %s %T; want %s of ConfigMap c", i, ev.Type, ev.Object, want)
			}
		}
	})

	// Everything above went through the typed client: every answer,
	// errors included, is protobuf.
	checkAnswered(t, e.log, func(request) bool { return true }, ctProtobuf, ctProtobufWatch)
	bodies.check(t, ctProtobuf, http.MethodPost, http.MethodPut, http.MethodDelete)
}

// typedRecorder records "add|update|delete NAME" events of typed objects
// of type T.
func typedRecorder[T runtime.Object]() (cache.ResourceEventHandlerFuncs, <-chan string) {
	events := make(chan string, 100)
	name := func(obj any) string {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if _, ok := obj.(T); !ok {
			return fmt.Sprintf("unexpected %T", obj)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return err.Error()
		}
		return m.GetName()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { events <- "add " + name(obj) },
		UpdateFunc: func(_, obj any) { events <- "update " + name(obj) },
		DeleteFunc: func(obj any) { events <- "delete " + name(obj) },
	}, events
}

// expectHandlerEvents reads len(want) informer events and compares them in
// order.
func expectHandlerEvents(t *testing.T, what string, events <-chan string, want ...string) {
	t.Helper()
	var got []string
	for range want {
		got = append(got, nextHandlerEvent(t, events))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s informer events: got %q; want %q", what, got, want)
	}
}

// CODEC-3: a SharedInformerFactory on the default typed clientset syncs
// namespaces and configmaps over protobuf lists and watch streams.
func TestTypedInformerProtobufWire(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	cs := newClientset(t, e)
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pre"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}

	factory := informers.NewSharedInformerFactory(cs, 0)
	nsInf := factory.Core().V1().Namespaces().Informer()
	cmInf := factory.Core().V1().ConfigMaps().Informer()
	nsHandler, nsEvents := typedRecorder[*corev1.Namespace]()
	cmHandler, cmEvents := typedRecorder[*corev1.ConfigMap]()
	if _, err := nsInf.AddEventHandler(nsHandler); err != nil {
		t.Fatal(err)
	}
	if _, err := cmInf.AddEventHandler(cmHandler); err != nil {
		t.Fatal(err)
	}
	stop, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(stop.Done())
	for what, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			t.Fatalf("informer for %v did not sync (requests: %v)", what, e.log.all())
		}
	}
	expectHandlerEvents(t, "namespace", nsEvents, "add default")
	expectHandlerEvents(t, "configmap", cmEvents, "add pre")

	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "inf"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	expectHandlerEvents(t, "namespace", nsEvents, "add inf")
	cms := cs.CoreV1().ConfigMaps("inf")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	cm.Data["a"] = "2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update configmap: %v", err)
	}
	if err := cms.Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete configmap: %v", err)
	}
	expectHandlerEvents(t, "configmap", cmEvents, "add x", "update x", "delete x")

	for _, path := range []string{"/api/v1/namespaces", "/api/v1/configmaps"} {
		checkAnswered(t, e.log, func(r request) bool { return r.Path == path }, ctProtobuf, ctProtobufWatch)
	}
}

// The Accept header client-go's metadata client sends for one object.
const acceptPartial = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// CODEC-8: client-go's metadata client and a metadata informer on widgets
// (which have no protobuf message of their own) get PartialObjectMetadata
// in protobuf.
func TestMetadataClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	mc, err := metadata.NewForConfig(e.config())
	if err != nil {
		t.Fatalf("metadata.NewForConfig: %v", err)
	}
	ns := e.namespace(t, "meta")
	created := e.create(t, widgetsGVR, widget(ns, "a", "red", 1, map[string]string{"app": "m"}))
	wc := mc.Resource(widgetsGVR).Namespace(ns)

	t.Run("client", func(t *testing.T) {
		got, err := wc.Get(ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if got.Name != "a" || got.UID != created.GetUID() || got.Labels["app"] != "m" || got.ResourceVersion != created.GetResourceVersion() {
			t.Errorf("get: got %+v; want the metadata of widget a (uid %s, rv %s, label app=m)", got.ObjectMeta, created.GetUID(), created.GetResourceVersion())
		}
		l, err := wc.List(ctx, metav1.ListOptions{LabelSelector: "app=m"})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(l.Items) != 1 || l.Items[0].Name != "a" || l.ResourceVersion == "" {
			t.Fatalf("list app=m: got %d items, rv %q; want [a] and a resourceVersion", len(l.Items), l.ResourceVersion)
		}
		w, err := wc.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		patched, err := wc.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"x"}}}`), metav1.PatchOptions{})
		if err != nil || patched.Labels["tier"] != "x" {
			t.Fatalf("patch: got %v, %v; want label tier=x", patched, err)
		}
		if err := wc.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if _, err := wc.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after delete: got %v; want NotFound", err)
		}
		for i, want := range []watch.EventType{watch.Modified, watch.Deleted} {
			ev := nextEvent(t, w)
			p, ok := ev.Object.(*metav1.PartialObjectMetadata)
			if ev.Type != want || !ok || p.Name != "a" || p.Labels["tier"] != "x" {
				t.Fatalf("watch event %d: got %s %T %v; want %s of PartialObjectMetadata a with label tier=x", i, ev.Type, ev.Object, ev.Object, want)
			}
		}
		// Errors are Statuses, which the as= clauses do not select: kube
		// answers them in the plain application/json the Accept header
		// ends with. Only successes are PartialObjectMetadata.
		checkAnswered(t, e.log, func(r request) bool {
			return r.Status < 300 && (r.Accept == acceptPartial || strings.Contains(r.Accept, "as=PartialObjectMetadataList"))
		}, ctProtobuf, ctProtobufWatch)
	})

	// The kinds on the wire, read with client-go's own protobuf decoding.
	t.Run("kinds", func(t *testing.T) {
		e.create(t, widgetsGVR, widget(ns, "b", "blue", 1, nil))
		tests := []struct {
			name, path, accept, kind string
		}{
			{"get", "/apis/example.com/v1/namespaces/" + ns + "/widgets/b", acceptPartial, "PartialObjectMetadata"},
			{"list", "/apis/example.com/v1/namespaces/" + ns + "/widgets", strings.ReplaceAll(acceptPartial, "PartialObjectMetadata", "PartialObjectMetadataList"), "PartialObjectMetadataList"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp, body := rawDo(t, http.DefaultClient, http.MethodGet, e.srv.URL+tt.path, nil, "Accept", tt.accept)
				if resp.StatusCode != http.StatusOK || !sameMediaType(resp.Header.Get("Content-Type"), ctProtobuf) {
					t.Fatalf("GET %s: got %d %q; want 200 %s", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), ctProtobuf)
				}
				u := pbEnvelope(t, body)
				if u.APIVersion != "meta.k8s.io/v1" || u.Kind != tt.kind {
					t.Errorf("GET %s envelope: got %s %s; want meta.k8s.io/v1 %s", tt.path, u.APIVersion, u.Kind, tt.kind)
				}
			})
		}
	})

	t.Run("informer", func(t *testing.T) {
		e.create(t, widgetsGVR, widget(ns, "pre", "red", 1, nil))
		factory := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, ns, nil)
		inf := factory.ForResource(widgetsGVR).Informer()
		handler, events := typedRecorder[*metav1.PartialObjectMetadata]()
		if _, err := inf.AddEventHandler(handler); err != nil {
			t.Fatal(err)
		}
		stop, cancel := context.WithCancel(context.Background())
		defer factory.Shutdown()
		defer cancel()
		factory.Start(stop.Done())
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatalf("metadata informer did not sync (requests: %v)", e.log.all())
		}
		initial := []string{nextHandlerEvent(t, events), nextHandlerEvent(t, events)}
		slices.Sort(initial)
		if want := []string{"add b", "add pre"}; !slices.Equal(initial, want) {
			t.Errorf("initial events: got %q; want %q", initial, want)
		}
		e.create(t, widgetsGVR, widget(ns, "new", "red", 1, nil))
		if _, err := e.widgets(ns).Patch(ctx, "new", types.MergePatchType, []byte(`{"metadata":{"labels":{"l":"v"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("patch: %v", err)
		}
		if err := e.widgets(ns).Delete(ctx, "pre", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		expectHandlerEvents(t, "metadata", events, "add new", "update new", "delete pre")
		obj, ok, err := inf.GetStore().GetByKey(ns + "/new")
		if p, isPartial := obj.(*metav1.PartialObjectMetadata); err != nil || !ok || !isPartial || p.Labels["l"] != "v" {
			t.Errorf("store %s/new: got %T %v, %v, %v; want PartialObjectMetadata with label l=v", ns, obj, obj, ok, err)
		}
		checkAnswered(t, e.log, func(r request) bool {
			return r.Status < 300 && r.Path == "/apis/example.com/v1/namespaces/"+ns+"/widgets" && strings.Contains(r.Accept, "as=PartialObjectMetadata")
		}, ctProtobuf, ctProtobufWatch)
	})
}

// CODEC-3: controller-runtime's client with a typed ConfigMap, in its
// default configuration, speaks protobuf.
func TestControllerRuntimeTypedProtobufWire(t *testing.T) {
	t.Parallel()
	e, bodies := newBodyEnv(t)
	ctx := testContext(t)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(e.config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "crp"}, Data: map[string]string{"a": "1"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatalf("create: %v", err)
	}
	var got corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.UID != cm.UID || got.Data["a"] != "1" {
		t.Errorf("get: got uid %q data %v; want uid %q data a=1", got.UID, got.Data, cm.UID)
	}
	got.Data["b"] = "2"
	if err := c.Update(ctx, &got); err != nil {
		t.Fatalf("update: %v", err)
	}
	var l corev1.ConfigMapList
	if err := c.List(ctx, &l, client.InNamespace("default")); err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(l.Items) != 1 || l.Items[0].Data["b"] != "2" {
		t.Errorf("list: got %+v; want [crp] with b=2", l.Items)
	}
	if err := c.Delete(ctx, &got); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: got %v; want NotFound", err)
	}
	checkAnswered(t, e.log, pathUnder("/api/v1/namespaces/default/configmaps"), ctProtobuf, "")
	bodies.check(t, ctProtobuf, http.MethodPost, http.MethodPut)
}

// cborChildEnv marks the test binary re-executed by TestCBORClient.
const cborChildEnv = "KAPI_CONFORMANCE_CBOR_CHILD"

// runInSubprocess runs the test name in a fresh copy of the test binary
// with env added to the environment, and fails t with the child's output if
// it fails. client-go reads its KUBE_FEATURE_* variables once, at the
// first feature check, which other tests in this process have long made.
func runInSubprocess(t *testing.T, name string, env ...string) {
	t.Helper()
	cmd := exec.CommandContext(testContext(t), os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in a subprocess with %v: %v\n%s", name, env, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s in a subprocess: the test did not run\n%s", name, out)
	}
}

// CODEC-4: a client-go dynamic client with the ClientsAllowCBOR and
// ClientsPreferCBOR gates on (set, as users set them, in the environment)
// sends CBOR bodies and gets CBOR answers and CBOR sequence watch streams.
func TestCBORClient(t *testing.T) {
	if os.Getenv(cborChildEnv) != "1" {
		t.Parallel()
		runInSubprocess(t, "TestCBORClient", cborChildEnv+"=1", "KUBE_FEATURE_ClientsAllowCBOR=true", "KUBE_FEATURE_ClientsPreferCBOR=true")
		return
	}
	gates := clientfeatures.FeatureGates()
	if !gates.Enabled(clientfeatures.ClientsAllowCBOR) || !gates.Enabled(clientfeatures.ClientsPreferCBOR) {
		t.Fatalf("client-go gates ClientsAllowCBOR %v, ClientsPreferCBOR %v; want both on from KUBE_FEATURE_*", gates.Enabled(clientfeatures.ClientsAllowCBOR), gates.Enabled(clientfeatures.ClientsPreferCBOR))
	}
	e, bodies := newBodyEnv(t)
	ctx := testContext(t)
	ns := e.namespace(t, "cbor")

	tests := []struct {
		gvr    schema.GroupVersionResource
		obj    *unstructured.Unstructured
		field  []string
		value  string
		update func(u *unstructured.Unstructured)
	}{
		{
			gvr: widgetsGVR, obj: widget(ns, "w", "red", 3, map[string]string{"app": "cbor"}),
			field: []string{"spec", "color"}, value: "red",
			update: func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "blue", "spec", "color") },
		},
		{
			gvr: configMapsGVR, obj: configMap(ns, "c", map[string]string{"app": "cbor"}),
			field: []string{"data", "key"}, value: "value",
			update: func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "other", "data", "key") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.gvr.Resource, func(t *testing.T) {
			c := e.dyn.Resource(tt.gvr).Namespace(ns)
			created, err := c.Create(ctx, tt.obj, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if created.GetUID() == "" || nestedString(t, created, tt.field...) != tt.value {
				t.Errorf("created: got uid %q %s %q; want a uid and %q", created.GetUID(), strings.Join(tt.field, "."), nestedString(t, created, tt.field...), tt.value)
			}
			if tt.gvr == widgetsGVR {
				if r, _ := nestedInt(t, created, "spec", "replicas"); r != 3 {
					t.Errorf("created spec.replicas: got %d; want 3", r)
				}
			}
			w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()
			got, err := c.Get(ctx, tt.obj.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			tt.update(got)
			if _, err := c.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("update: %v", err)
			}
			if _, err := c.Patch(ctx, tt.obj.GetName(), types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
				t.Fatalf("merge patch: %v", err)
			}
			l, err := c.List(ctx, metav1.ListOptions{LabelSelector: "app=cbor,patched=yes"})
			if err != nil || len(l.Items) != 1 {
				t.Fatalf("list: got %v, %v; want one item", l, err)
			}
			if err := c.Delete(ctx, tt.obj.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			expectEvents(t, w, []wantEvent{{watch.Modified, tt.obj.GetName()}, {watch.Modified, tt.obj.GetName()}, {watch.Deleted, tt.obj.GetName()}})
		})
	}
	// Every client in this process asks for CBOR: every answer is CBOR.
	checkAnswered(t, e.log, func(request) bool { return true }, ctCBOR, ctCBORSeq)
	bodies.check(t, ctCBOR, http.MethodPost, http.MethodPut)
}
