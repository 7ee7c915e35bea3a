package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
)

// Media types of the patch requests the clients send.
const (
	smpType   = "application/strategic-merge-patch+json"
	mergeType = "application/merge-patch+json"
	applyType = "application/apply-patch+yaml"
)

// sentRequest is one request as the client sent it: the request's own
// Content-Type, and the status the server answered.
type sentRequest struct {
	Method, Path, Query, ContentType string
	Status                           int
}

func (r sentRequest) String() string {
	return fmt.Sprintf("%s %s?%s (%s) -> %d", r.Method, r.Path, r.Query, r.ContentType, r.Status)
}

// sentLog records, server side, the Content-Type of every request (the
// env's requestLog records the response's).
type sentLog struct {
	mu   sync.Mutex
	reqs []sentRequest
}

func (l *sentLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.reqs = append(l.reqs, sentRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, ContentType: r.Header.Get("Content-Type"), Status: sw.status})
	})
}

// find returns the recorded requests with method to path.
func (l *sentLog) find(method, path string) []sentRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []sentRequest
	for _, r := range l.reqs {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// statusWriter remembers the status code of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// newSentEnv is newEnv with a sentLog in front of the server.
func newSentEnv(t *testing.T) (*env, *sentLog) {
	t.Helper()
	sent := &sentLog{}
	return newEnvFor(t, sent.wrap(newServerHandler(t))), sent
}

// checkSent checks that the client sent method to path as contentType
// (ignoring parameters) at least once and that the server answered 2xx.
func checkSent(t *testing.T, sent *sentLog, method, path, contentType string) {
	t.Helper()
	got := sent.find(method, path)
	for _, r := range got {
		if sameMediaType(r.ContentType, contentType) && r.Status/100 == 2 {
			return
		}
	}
	t.Errorf("%s %s: got requests %v; want one sent as %s and answered 2xx", method, path, got, contentType)
}

// managedFieldsString describes managedFields for failure messages.
func managedFieldsString(mfs []metav1.ManagedFieldsEntry) string {
	var b strings.Builder
	for _, m := range mfs {
		raw := ""
		if m.FieldsV1 != nil {
			raw = m.FieldsV1.GetRawString()
		}
		fmt.Fprintf(&b, "\n  manager=%q operation=%s apiVersion=%s subresource=%q fieldsType=%s fieldsV1=%s", m.Manager, m.Operation, m.APIVersion, m.Subresource, m.FieldsType, raw)
	}
	if b.Len() == 0 {
		return " (none)"
	}
	return b.String()
}

// managedEntry returns manager's entry for operation op, or nil.
func managedEntry(mfs []metav1.ManagedFieldsEntry, manager string, op metav1.ManagedFieldsOperationType) *metav1.ManagedFieldsEntry {
	for i := range mfs {
		if mfs[i].Manager == manager && mfs[i].Operation == op {
			return &mfs[i]
		}
	}
	return nil
}

// ownedFields parses an entry's FieldsV1.
func ownedFields(t *testing.T, m *metav1.ManagedFieldsEntry) *fieldpath.Set {
	t.Helper()
	s := &fieldpath.Set{}
	if m == nil || m.FieldsV1 == nil {
		return s
	}
	if m.FieldsType != "FieldsV1" {
		t.Errorf("managedFields entry of %q: got fieldsType %q; want FieldsV1", m.Manager, m.FieldsType)
	}
	if err := s.FromJSON(bytes.NewReader(m.FieldsV1.GetRawBytes())); err != nil {
		t.Fatalf("managedFields entry of %q: fieldsV1 %s: %v", m.Manager, m.FieldsV1.GetRawString(), err)
	}
	return s
}

// owners returns the managers whose entries contain the path parts, as
// "manager/Operation", sorted.
func owners(t *testing.T, mfs []metav1.ManagedFieldsEntry, parts ...any) []string {
	t.Helper()
	p := fieldpath.MakePathOrDie(parts...)
	var out []string
	for i := range mfs {
		if ownedFields(t, &mfs[i]).Has(p) {
			out = append(out, mfs[i].Manager+"/"+string(mfs[i].Operation))
		}
	}
	slices.Sort(out)
	return out
}

// getObject reads an object through the dynamic client.
func getObject(t *testing.T, e *env, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := e.dyn.Resource(gvr).Namespace(ns).Get(testContext(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return u
}

// stringMap reads a map of strings (a configmap's data).
func stringMap(t *testing.T, u *unstructured.Unstructured, fields ...string) map[string]string {
	t.Helper()
	m, _, err := unstructured.NestedStringMap(u.Object, fields...)
	if err != nil {
		t.Fatalf("%s %s: %s: %v", u.GetKind(), u.GetName(), strings.Join(fields, "."), err)
	}
	return m
}

// widgetPorts returns a widget's spec.ports as "port/protocol=name", in
// order.
func widgetPorts(t *testing.T, u *unstructured.Unstructured) []string {
	t.Helper()
	ports, _, err := unstructured.NestedSlice(u.Object, "spec", "ports")
	if err != nil {
		t.Fatalf("widget %s: spec.ports: %v", u.GetName(), err)
	}
	var out []string
	for _, p := range ports {
		m, _ := p.(map[string]any)
		out = append(out, fmt.Sprintf("%v/%v=%v", m["port"], m["protocol"], m["name"]))
	}
	return out
}

// sorted returns a sorted copy of s.
func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// PATCH-3: `kubectl apply -f` (client-side apply) twice. For a configmap,
// whose kind kubectl knows, the second apply is a strategic merge patch
// computed from the last-applied annotation: a changed key is updated and
// a removed key deleted. For a widget, a custom resource, kubectl sends a
// JSON merge patch.
func TestKubectlClientSideApply(t *testing.T) {
	t.Parallel()
	e, sent := newSentEnv(t)
	k := newKubectl(t, e)

	t.Run("configmap", func(t *testing.T) {
		const first = `apiVersion: v1
kind: ConfigMap
metadata:
  name: csa
data:
  keep: "1"
  change: before
  remove: gone
`
		const second = `apiVersion: v1
kind: ConfigMap
metadata:
  name: csa
data:
  keep: "1"
  change: after
`
		if out := k.mustRun(t, "apply", "-f", writeFile(t, "cm1.yaml", first)); !strings.Contains(out, "configmap/csa created") {
			t.Errorf("first apply: got %q; want configmap/csa created", out)
		}
		if got := stringMap(t, getObject(t, e, configMapsGVR, "default", "csa"), "data"); !maps.Equal(got, map[string]string{"keep": "1", "change": "before", "remove": "gone"}) {
			t.Errorf("data after the first apply: got %v", got)
		}
		if out := k.mustRun(t, "apply", "-f", writeFile(t, "cm2.yaml", second)); !strings.Contains(out, "configmap/csa configured") {
			t.Errorf("second apply: got %q; want configmap/csa configured", out)
		}
		cm := getObject(t, e, configMapsGVR, "default", "csa")
		if got, want := stringMap(t, cm, "data"), map[string]string{"keep": "1", "change": "after"}; !maps.Equal(got, want) {
			t.Errorf("data after the second apply: got %v; want %v", got, want)
		}
		if a := cm.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; !strings.Contains(a, `"change":"after"`) || strings.Contains(a, "remove") {
			t.Errorf("last-applied-configuration: got %q; want the second manifest", a)
		}
		checkSent(t, sent, http.MethodPatch, "/api/v1/namespaces/default/configmaps/csa", smpType)
	})

	t.Run("widget", func(t *testing.T) {
		const first = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: csa
spec:
  color: red
  replicas: 2
  ports:
  - {name: http, port: 80, protocol: TCP}
`
		const second = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: csa
spec:
  color: blue
  ports:
  - {name: web, port: 8080, protocol: TCP}
`
		if out := k.mustRun(t, "apply", "-f", writeFile(t, "w1.yaml", first)); !strings.Contains(out, "widget.example.com/csa created") {
			t.Errorf("first apply: got %q; want widget.example.com/csa created", out)
		}
		if out := k.mustRun(t, "apply", "-f", writeFile(t, "w2.yaml", second)); !strings.Contains(out, "widget.example.com/csa configured") {
			t.Errorf("second apply: got %q; want widget.example.com/csa configured", out)
		}
		w := getObject(t, e, widgetsGVR, "default", "csa")
		if got := nestedString(t, w, "spec", "color"); got != "blue" {
			t.Errorf("spec.color: got %q; want blue", got)
		}
		if got, found := nestedInt(t, w, "spec", "replicas"); found {
			t.Errorf("spec.replicas: got %d; want it removed (dropped from the manifest)", got)
		}
		// A merge patch replaces the list.
		if got, want := widgetPorts(t, w), []string{"8080/TCP=web"}; !slices.Equal(got, want) {
			t.Errorf("spec.ports: got %v; want %v", got, want)
		}
		checkSent(t, sent, http.MethodPatch, "/apis/example.com/v1/namespaces/default/widgets/csa", mergeType)
	})
}

// PATCH-4: `kubectl apply --server-side`: create, a conflict with another
// field manager, and --force-conflicts moving ownership.
func TestKubectlServerSideApply(t *testing.T) {
	t.Parallel()
	e, sent := newSentEnv(t)
	k := newKubectl(t, e)
	const path = "/api/v1/namespaces/default/configmaps/ssa"
	manifest := func(value string) string {
		return `apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
data:
  key: ` + value + "\n"
	}

	out := k.mustRun(t, "apply", "--server-side", "-f", writeFile(t, "ssa.yaml", manifest("one")+"  other: x\n"))
	if !strings.Contains(out, "configmap/ssa serverside-applied") {
		t.Errorf("apply --server-side: got %q; want configmap/ssa serverside-applied", out)
	}
	checkSent(t, sent, http.MethodPatch, path, applyType)
	cm := getObject(t, e, configMapsGVR, "default", "ssa")
	if got, want := stringMap(t, cm, "data"), map[string]string{"key": "one", "other": "x"}; !maps.Equal(got, want) {
		t.Errorf("data after create: got %v; want %v", got, want)
	}
	mfs := cm.GetManagedFields()
	if m := managedEntry(mfs, "kubectl", metav1.ManagedFieldsOperationApply); m == nil || m.APIVersion != "v1" {
		t.Fatalf("managedFields after apply --server-side: got%s; want an Apply entry of manager kubectl for v1", managedFieldsString(mfs))
	}
	if got := owners(t, mfs, "data", "key"); !slices.Equal(got, []string{"kubectl/Apply"}) {
		t.Errorf("owners of data.key: got %v; want [kubectl/Apply]%s", got, managedFieldsString(mfs))
	}

	conflicting := writeFile(t, "other.yaml", manifest("two"))
	stdout, stderr, err := k.run("apply", "--server-side", "--field-manager=other", "-f", conflicting)
	if err == nil {
		t.Fatalf("apply --field-manager=other changing a field kubectl owns: got success (%s); want a conflict", stdout)
	}
	msg := err.Error() + "\n" + stderr
	for _, want := range []string{`Apply failed with 1 conflict: conflict with "kubectl"`, ".data.key"} {
		if !strings.Contains(msg, want) {
			t.Errorf("conflict message: got %q; want it to contain %q", msg, want)
		}
	}
	if got := stringMap(t, getObject(t, e, configMapsGVR, "default", "ssa"), "data")["key"]; got != "one" {
		t.Errorf("data.key after the conflict: got %q; want one (unchanged)", got)
	}
	var conflicts []sentRequest
	for _, r := range sent.find(http.MethodPatch, path) {
		if r.Status == http.StatusConflict {
			conflicts = append(conflicts, r)
		}
	}
	if len(conflicts) != 1 || !strings.Contains(conflicts[0].Query, "fieldManager=other") {
		t.Errorf("conflicting apply: got %v; want one PATCH with fieldManager=other answered 409", sent.find(http.MethodPatch, path))
	}

	out = k.mustRun(t, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", conflicting)
	if !strings.Contains(out, "configmap/ssa serverside-applied") {
		t.Errorf("apply --force-conflicts: got %q; want configmap/ssa serverside-applied", out)
	}
	cm = getObject(t, e, configMapsGVR, "default", "ssa")
	if got, want := stringMap(t, cm, "data"), map[string]string{"key": "two", "other": "x"}; !maps.Equal(got, want) {
		t.Errorf("data after --force-conflicts: got %v; want %v", got, want)
	}
	mfs = cm.GetManagedFields()
	if got := owners(t, mfs, "data", "key"); !slices.Equal(got, []string{"other/Apply"}) {
		t.Errorf("owners of data.key after --force-conflicts: got %v; want [other/Apply]%s", got, managedFieldsString(mfs))
	}
	if got := owners(t, mfs, "data", "other"); !slices.Equal(got, []string{"kubectl/Apply"}) {
		t.Errorf("owners of data.other: got %v; want [kubectl/Apply]%s", got, managedFieldsString(mfs))
	}
}

// conflictCauses returns err's causes of type FieldManagerConflict as
// "field|message".
func conflictCauses(err error) []string {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Details == nil {
		return nil
	}
	var out []string
	for _, c := range se.ErrStatus.Details.Causes {
		if c.Type == metav1.CauseTypeFieldManagerConflict {
			out = append(out, c.Field+"|"+c.Message)
		}
	}
	return out
}

// PATCH-4, CODEC-3: client-go's typed apply configurations, in the
// clientset's default configuration (apply body as application/apply-
// patch+yaml, protobuf answers): two managers sharing a configmap, a 409
// with one FieldManagerConflict cause, Force taking the field, and
// client-go's Extract reading the server's managedFields back.
func TestClientGoApplyConfigurations(t *testing.T) {
	t.Parallel()
	e, sent := newSentEnv(t)
	cs := newClientset(t, e)
	ctx := testContext(t)
	cms := cs.CoreV1().ConfigMaps("default")
	const path = "/api/v1/namespaces/default/configmaps/ac"

	got, err := cms.Apply(ctx, corev1ac.ConfigMap("ac", "default").WithData(map[string]string{"a": "1"}), metav1.ApplyOptions{FieldManager: "m1"})
	if err != nil {
		t.Fatalf("apply m1 (create): %v", err)
	}
	if got.UID == "" || !maps.Equal(got.Data, map[string]string{"a": "1"}) {
		t.Errorf("apply m1 (create): got uid %q data %v; want a created object with a=1", got.UID, got.Data)
	}
	checkSent(t, sent, http.MethodPatch, path, applyType)
	patches := e.log.matching(func(r request) bool { return r.Method == http.MethodPatch && r.Path == path })
	if len(patches) == 0 || !sameMediaType(patches[0].ContentType, "application/vnd.kubernetes.protobuf") {
		t.Errorf("apply answer: got %v; want protobuf", patches)
	}

	got, err = cms.Apply(ctx, corev1ac.ConfigMap("ac", "default").WithData(map[string]string{"b": "2"}), metav1.ApplyOptions{FieldManager: "m2"})
	if err != nil {
		t.Fatalf("apply m2: %v", err)
	}
	if want := map[string]string{"a": "1", "b": "2"}; !maps.Equal(got.Data, want) {
		t.Errorf("data after m2's apply: got %v; want %v", got.Data, want)
	}
	var applies []string
	for _, m := range got.ManagedFields {
		if m.Operation == metav1.ManagedFieldsOperationApply {
			applies = append(applies, m.Manager)
		}
	}
	if slices.Sort(applies); !slices.Equal(applies, []string{"m1", "m2"}) {
		t.Errorf("Apply entries: got %v; want [m1 m2]%s", applies, managedFieldsString(got.ManagedFields))
	}
	for key, want := range map[string]string{"a": "m1/Apply", "b": "m2/Apply"} {
		if o := owners(t, got.ManagedFields, "data", key); !slices.Equal(o, []string{want}) {
			t.Errorf("owners of data.%s: got %v; want [%s]%s", key, o, want, managedFieldsString(got.ManagedFields))
		}
	}

	// client-go reads the managedFields back: m1's own configuration.
	ext, err := corev1ac.ExtractConfigMap(got, "m1")
	if err != nil {
		t.Errorf("ExtractConfigMap m1: %v", err)
	} else if !maps.Equal(ext.Data, map[string]string{"a": "1"}) {
		t.Errorf("ExtractConfigMap m1: got data %v; want a=1", ext.Data)
	}

	conflicting := corev1ac.ConfigMap("ac", "default").WithData(map[string]string{"a": "x", "b": "2"})
	_, err = cms.Apply(ctx, conflicting, metav1.ApplyOptions{FieldManager: "m2"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("m2 applying m1's field: got %v; want 409 Conflict", err)
	}
	if c := conflictCauses(err); len(c) != 1 || !strings.HasPrefix(c[0], ".data.a|") || !strings.Contains(c[0], `conflict with "m1"`) {
		t.Errorf("conflict causes: got %q; want one FieldManagerConflict for .data.a naming m1 (error %v)", c, err)
	}
	if !strings.Contains(err.Error(), `Apply failed with 1 conflict: conflict with "m1"`) {
		t.Errorf("conflict message: got %q", err.Error())
	}

	got, err = cms.Apply(ctx, conflicting, metav1.ApplyOptions{FieldManager: "m2", Force: true})
	if err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if want := map[string]string{"a": "x", "b": "2"}; !maps.Equal(got.Data, want) {
		t.Errorf("data after the forced apply: got %v; want %v", got.Data, want)
	}
	if o := owners(t, got.ManagedFields, "data", "a"); !slices.Equal(o, []string{"m2/Apply"}) {
		t.Errorf("owners of data.a after the forced apply: got %v; want [m2/Apply]%s", o, managedFieldsString(got.ManagedFields))
	}
}

// PATCH-4: controller-runtime's Client.Apply with an unstructured widget:
// create, a conflict between owners, ForceOwnership.
func TestControllerRuntimeApply(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	c, err := client.New(e.config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	config := func(color string) *unstructured.Unstructured {
		u := newWidgetObject()
		u.SetNamespace("default")
		u.SetName("cr-apply")
		u.Object["spec"] = map[string]any{"color": color}
		return u
	}

	u := config("red")
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("x"), client.ForceOwnership); err != nil {
		t.Fatalf("apply x (create): %v", err)
	}
	if u.GetUID() == "" || u.GetResourceVersion() == "" {
		t.Errorf("apply x: the answer was not decoded into the object: uid %q rv %q", u.GetUID(), u.GetResourceVersion())
	}
	if o := owners(t, u.GetManagedFields(), "spec", "color"); !slices.Equal(o, []string{"x/Apply"}) {
		t.Errorf("owners of spec.color: got %v; want [x/Apply]%s", o, managedFieldsString(u.GetManagedFields()))
	}

	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(config("blue")), client.FieldOwner("y"))
	if !apierrors.IsConflict(err) {
		t.Fatalf("apply y without force: got %v; want 409 Conflict", err)
	}
	if cc := conflictCauses(err); len(cc) != 1 || !strings.HasPrefix(cc[0], ".spec.color|") {
		t.Errorf("conflict causes: got %q; want one for .spec.color", cc)
	}

	u = config("blue")
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("y"), client.ForceOwnership); err != nil {
		t.Fatalf("apply y with ForceOwnership: %v", err)
	}
	got := newWidgetObject()
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "cr-apply"}, got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if nestedString(t, got, "spec", "color") != "blue" {
		t.Errorf("spec.color: got %q; want blue", nestedString(t, got, "spec", "color"))
	}
	if o := owners(t, got.GetManagedFields(), "spec", "color"); !slices.Equal(o, []string{"y/Apply"}) {
		t.Errorf("owners of spec.color after ForceOwnership: got %v; want [y/Apply]%s", o, managedFieldsString(got.GetManagedFields()))
	}
}

// widgetPortsConfig is an apply configuration for widget name with the
// given ports.
func widgetPortsConfig(name string, ports ...map[string]any) *unstructured.Unstructured {
	list := []any{}
	for _, p := range ports {
		list = append(list, p)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec":       map[string]any{"ports": list},
	}}
}

// portKey is the fieldsV1 key of a widget port entry.
func portKey(port int, protocol string) *fieldpathKey {
	return &fieldpathKey{port: port, protocol: protocol}
}

type fieldpathKey struct {
	port     int
	protocol string
}

func (k *fieldpathKey) path(rest ...any) []any {
	return append([]any{"spec", "ports", fieldpath.KeyByFields("port", k.port, "protocol", k.protocol)}, rest...)
}

// json is the key as kube writes it in fieldsV1.
func (k *fieldpathKey) json() string {
	return fmt.Sprintf(`k:{\"port\":%d,\"protocol\":\"%s\"}`, k.port, k.protocol)
}

// PATCH-4, VAL-1: two managers applying entries of the widgets' list-map
// spec.ports (keys port and protocol) share the list, each owning its
// entry; an entry its manager stops applying is removed.
func TestApplyListMapOwnership(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	c := e.widgets("default")
	http80 := map[string]any{"port": int64(80), "protocol": "TCP", "name": "http"}
	https443 := map[string]any{"port": int64(443), "protocol": "TCP", "name": "https"}
	k80, k443 := portKey(80, "TCP"), portKey(443, "TCP")

	if _, err := c.Apply(ctx, "lm", widgetPortsConfig("lm", http80), metav1.ApplyOptions{FieldManager: "a"}); err != nil {
		t.Fatalf("apply a: %v", err)
	}
	got, err := c.Apply(ctx, "lm", widgetPortsConfig("lm", https443), metav1.ApplyOptions{FieldManager: "b"})
	if err != nil {
		t.Fatalf("apply b: %v", err)
	}
	if p, want := sorted(widgetPorts(t, got)), []string{"443/TCP=https", "80/TCP=http"}; !slices.Equal(p, want) {
		t.Errorf("spec.ports after both applies: got %v; want %v (merged by key)", p, want)
	}
	mfs := got.GetManagedFields()
	for _, tt := range []struct {
		key  *fieldpathKey
		want string
	}{{k80, "a"}, {k443, "b"}} {
		if o := owners(t, mfs, tt.key.path()...); !slices.Equal(o, []string{tt.want + "/Apply"}) {
			t.Errorf("owners of %s: got %v; want [%s/Apply]%s", tt.key.json(), o, tt.want, managedFieldsString(mfs))
		}
		if o := owners(t, mfs, tt.key.path("name")...); !slices.Equal(o, []string{tt.want + "/Apply"}) {
			t.Errorf("owners of %s.name: got %v; want [%s/Apply]", tt.key.json(), o, tt.want)
		}
		if m := managedEntry(mfs, tt.want, metav1.ManagedFieldsOperationApply); m == nil || m.FieldsV1 == nil || !strings.Contains(m.FieldsV1.GetRawString(), tt.key.json()) {
			t.Errorf("fieldsV1 of %s: want it to contain %s%s", tt.want, tt.key.json(), managedFieldsString(mfs))
		}
	}

	// a applies again without its entry: only b's remains.
	got, err = c.Apply(ctx, "lm", widgetPortsConfig("lm"), metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatalf("apply a without ports: %v", err)
	}
	if p, want := widgetPorts(t, got), []string{"443/TCP=https"}; !slices.Equal(p, want) {
		t.Errorf("spec.ports after a dropped its entry: got %v; want %v", p, want)
	}
	if o := owners(t, got.GetManagedFields(), k443.path()...); !slices.Equal(o, []string{"b/Apply"}) {
		t.Errorf("owners of %s: got %v; want [b/Apply]%s", k443.json(), o, managedFieldsString(got.GetManagedFields()))
	}
	if o := owners(t, got.GetManagedFields(), k80.path()...); len(o) != 0 {
		t.Errorf("owners of %s: got %v; want none", k80.json(), o)
	}
}

// PATCH-3: a strategic merge patch on widgets merges spec.ports by its
// list-map keys (port and protocol, a kapi extension: kube answers 415 to
// strategic merge patches on custom resources), and $patch: delete removes
// one entry. A resource without a schema answers 415.
func TestWidgetStrategicMergePatch(t *testing.T) {
	t.Parallel()
	reg, err := server.New(withStorage(t, server.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	gizmos := &registry.Resource{Group: "example.com", Version: "v1", Kind: "Gizmo", Plural: "gizmos", Namespaced: true}
	if err := reg.Register(gizmos); err != nil {
		t.Fatal(err)
	}
	e := newEnvFor(t, reg)
	ctx := testContext(t)
	c := e.widgets("default")

	w := widget("default", "smp", "red", 1, nil)
	w.Object["spec"].(map[string]any)["ports"] = []any{
		map[string]any{"name": "http", "port": int64(80), "protocol": "TCP"},
		map[string]any{"name": "metrics", "port": int64(9090), "protocol": "TCP"},
	}
	e.create(t, widgetsGVR, w)

	steps := []struct {
		name  string
		patch string
		want  []string // sorted
	}{
		{
			name:  "merge by key",
			patch: `{"spec":{"ports":[{"port":80,"protocol":"TCP","name":"web"},{"port":443,"protocol":"TCP","name":"https"},{"port":80,"protocol":"UDP","name":"dns"}]}}`,
			want:  []string{"443/TCP=https", "80/TCP=web", "80/UDP=dns", "9090/TCP=metrics"},
		},
		{
			name:  "$patch delete",
			patch: `{"spec":{"ports":[{"$patch":"delete","port":80,"protocol":"TCP"}]}}`,
			want:  []string{"443/TCP=https", "80/UDP=dns", "9090/TCP=metrics"},
		},
	}
	for _, st := range steps {
		got, err := c.Patch(ctx, "smp", types.StrategicMergePatchType, []byte(st.patch), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("%s: strategic merge patch %s: %v", st.name, st.patch, err)
		}
		if p := sorted(widgetPorts(t, got)); !slices.Equal(p, st.want) {
			t.Errorf("%s: spec.ports after %s: got %v; want %v", st.name, st.patch, p, st.want)
		}
		if color := nestedString(t, got, "spec", "color"); color != "red" {
			t.Errorf("%s: spec.color: got %q; want red (untouched)", st.name, color)
		}
	}

	t.Run("no schema", func(t *testing.T) {
		gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"}
		gc := e.dyn.Resource(gvr).Namespace("default")
		g := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Gizmo",
			"metadata": map[string]any{"name": "g"},
			"spec":     map[string]any{"items": []any{"a"}},
		}}
		if _, err := gc.Create(ctx, g, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create gizmo: %v", err)
		}
		_, err := gc.Patch(ctx, "g", types.StrategicMergePatchType, []byte(`{"spec":{"items":["b"]}}`), metav1.PatchOptions{})
		if !apierrors.IsUnsupportedMediaType(err) {
			t.Errorf("strategic merge patch on a resource without a schema: got %v; want 415 UnsupportedMediaType", err)
		}
		got, err := gc.Patch(ctx, "g", types.MergePatchType, []byte(`{"spec":{"items":["b"]}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("merge patch on the same resource: %v", err)
		}
		if items, _, _ := unstructured.NestedStringSlice(got.Object, "spec", "items"); !slices.Equal(items, []string{"b"}) {
			t.Errorf("spec.items after the merge patch: got %v; want [b]", items)
		}
	})
}

// PATCH-4: every write records managedFields: a typed-client create gets
// an Update entry for the client's default manager (the user agent's
// program name), `kubectl create` one for kubectl-create, and an update
// with another field manager an entry of its own.
func TestManagedFieldsOnWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)

	t.Run("typed create", func(t *testing.T) {
		cm, err := newClientset(t, e).CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "typed"}, Data: map[string]string{"key": "v"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		mfs := cm.ManagedFields
		if len(mfs) != 1 || mfs[0].Operation != metav1.ManagedFieldsOperationUpdate || mfs[0].Manager == "" || mfs[0].APIVersion != "v1" || mfs[0].Time == nil {
			t.Fatalf("managedFields: got%s; want one Update entry for v1 with a manager and a time", managedFieldsString(mfs))
		}
		// kube names the manager after the user agent's product token.
		if want := strings.Split(rest.DefaultKubernetesUserAgent(), "/")[0]; mfs[0].Manager != want {
			t.Errorf("manager: got %q; want %q (from the user agent %q)", mfs[0].Manager, want, rest.DefaultKubernetesUserAgent())
		}
		if o := owners(t, mfs, "data", "key"); len(o) != 1 {
			t.Errorf("owners of data.key: got %v; want the creating manager%s", o, managedFieldsString(mfs))
		}

		u := getObject(t, e, configMapsGVR, "default", "typed")
		u.Object["data"] = map[string]any{"key": "v", "more": "w"}
		upd, err := e.configMaps("default").Update(ctx, u, metav1.UpdateOptions{FieldManager: "updater"})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		mfs = upd.GetManagedFields()
		if o := owners(t, mfs, "data", "more"); !slices.Equal(o, []string{"updater/Update"}) {
			t.Errorf("owners of data.more: got %v; want [updater/Update]%s", o, managedFieldsString(mfs))
		}
		if len(mfs) != 2 {
			t.Errorf("managedFields after the update: got%s; want two Update entries", managedFieldsString(mfs))
		}
	})

	t.Run("kubectl create configmap", func(t *testing.T) {
		k := newKubectl(t, e)
		k.mustRun(t, "create", "configmap", "kc", "--from-literal=a=1")
		cm := getObject(t, e, configMapsGVR, "default", "kc")
		mfs := cm.GetManagedFields()
		if m := managedEntry(mfs, "kubectl-create", metav1.ManagedFieldsOperationUpdate); m == nil || len(mfs) != 1 {
			t.Fatalf("managedFields: got%s; want one Update entry of kubectl-create", managedFieldsString(mfs))
		}
		if o := owners(t, mfs, "data", "a"); !slices.Equal(o, []string{"kubectl-create/Update"}) {
			t.Errorf("owners of data.a: got %v; want [kubectl-create/Update]", o)
		}
	})
}
