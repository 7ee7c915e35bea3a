package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeproto "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/kapi-dev/kapi/codec/protobuf"
)

// The protobuf wire tests prove codec/protobuf against k8s.io/api's generated
// (gogo) code in both directions: kube's Marshal -> kapi's Unmarshal equals
// the JSON encoding/json makes of the same object (after normalising, see
// pbwNormalize), and kapi's Marshal of that JSON -> kube's Unmarshal equals
// the original object. Envelopes, lists and watch frames are read by
// apimachinery's own serializers and by a client-go clientset.

// pbwMessage is a k8s.io/api type with gogo's generated methods.
type pbwMessage interface {
	runtime.Object
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// pbwCodec is codec/protobuf's Marshal and Unmarshal bound to one message
// descriptor (so this module needs no import of protoreflect).
type pbwCodec struct {
	marshal   func(map[string]any) ([]byte, error)
	unmarshal func([]byte) (map[string]any, error)
}

func pbwCodecOf[D any](md D, enc func(D, map[string]any) ([]byte, error), dec func(D, []byte) (map[string]any, error)) pbwCodec {
	return pbwCodec{
		marshal:   func(obj map[string]any) ([]byte, error) { return enc(md, obj) },
		unmarshal: func(b []byte) (map[string]any, error) { return dec(md, b) },
	}
}

var (
	pbwConfigMapCodec = pbwCodecOf(protobuf.ConfigMap, protobuf.Marshal, protobuf.Unmarshal)
	pbwStatusCodec    = pbwCodecOf(protobuf.Status, protobuf.Marshal, protobuf.Unmarshal)
)

func pbwTime(s int64) metav1.Time { return metav1.Unix(s, 0) }

func pbwMeta() metav1.ObjectMeta {
	del := pbwTime(1_800_000_100)
	grace := int64(0)
	yes, no := true, false
	mtime := pbwTime(1_800_000_050)
	return metav1.ObjectMeta{
		Name: "settings", GenerateName: "set-", Namespace: "default",
		UID: "6b1f6c4e-3c57-4f4e-9f0b-0d1d5c2f7a10", ResourceVersion: "12345", Generation: 3,
		CreationTimestamp:          pbwTime(1_800_000_000),
		DeletionTimestamp:          &del,
		DeletionGracePeriodSeconds: &grace,
		Labels:                     map[string]string{"app": "web", "": "empty key", "tier": ""},
		Annotations:                map[string]string{"note": "größe ✓ 日本語", "long": strings.Repeat("x", 300)},
		OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u1", Controller: &yes, BlockOwnerDeletion: &no},
			{APIVersion: "v1", Kind: "", Name: "bare", UID: ""},
		},
		Finalizers: []string{"example.com/cleanup", "kubernetes"},
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: &mtime,
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:a":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)},
			{Manager: "controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
		},
	}
}

func pbwConfigMap() *corev1.ConfigMap {
	no := false
	return &corev1.ConfigMap{
		ObjectMeta: pbwMeta(),
		Data:       map[string]string{"a.properties": "k=v\n", "empty": "", "nul": "tab\tnul\x00"},
		BinaryData: map[string][]byte{"bin": {0, 1, 2, 0xff}, "empty": {}},
		Immutable:  &no,
	}
}

func pbwNamespace() *corev1.Namespace {
	return &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"kubernetes.io/metadata.name": "team-a"}, CreationTimestamp: pbwTime(1_800_000_000)},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating, Conditions: []corev1.NamespaceCondition{
			{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue, LastTransitionTime: pbwTime(1_800_000_200), Reason: "ContentDeletionFailed", Message: "m"},
			{Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionFalse},
		}},
	}
}

func pbwStatus() *metav1.Status {
	return &metav1.Status{
		ListMeta: metav1.ListMeta{ResourceVersion: "9"},
		Status:   metav1.StatusFailure, Message: `configmaps "x" is invalid`, Reason: metav1.StatusReasonInvalid, Code: 422,
		Details: &metav1.StatusDetails{Name: "x", Kind: "configmaps", UID: "u", RetryAfterSeconds: 2, Causes: []metav1.StatusCause{
			{Type: metav1.CauseTypeFieldValueInvalid, Message: "bad", Field: "data.a"},
			{Type: metav1.CauseTypeFieldValueRequired},
		}},
	}
}

func pbwDeleteOptions() *metav1.DeleteOptions {
	grace, orphan := int64(0), false
	uid, rv := types.UID(""), "5"
	fg := metav1.DeletePropagationForeground
	opts := &metav1.DeleteOptions{
		GracePeriodSeconds: &grace, PropagationPolicy: &fg,
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
		DryRun:        []string{metav1.DryRunAll},
	}
	//lint:ignore SA1019 the field is deprecated, not gone from the wire: it is tested here
	opts.OrphanDependents = &orphan
	return opts
}

func pbwPartial() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: pbwMeta()}
}

func pbwPartialList() *metav1.PartialObjectMetadataList {
	rem := int64(0)
	return &metav1.PartialObjectMetadataList{
		ListMeta: metav1.ListMeta{ResourceVersion: "77", Continue: "token", RemainingItemCount: &rem},
		Items:    []metav1.PartialObjectMetadata{*pbwPartial(), {ObjectMeta: metav1.ObjectMeta{Name: "b"}}},
	}
}

// pbwNormalize turns a JSON value into a canonical form for comparison: keys
// whose value is null are dropped (kube's JSON writes null for a zero Time
// where kapi may leave the key out; both read as the zero value), as are the
// top-level apiVersion and kind (protobuf carries them in the envelope).
func pbwNormalize(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		t.Fatal(err)
	}
	if m, ok := x.(map[string]any); ok {
		delete(m, "apiVersion")
		delete(m, "kind")
	}
	out, _ := json.Marshal(pbwDropNulls(x))
	return string(out)
}

func pbwDropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = pbwDropNulls(e)
		}
	case []any:
		for i, e := range x {
			x[i] = pbwDropNulls(e)
		}
	}
	return v
}

// pbwJSONForm is obj as kapi holds it: encoding/json text read with UseNumber.
func pbwJSONForm(t *testing.T, obj any) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	delete(m, "apiVersion")
	delete(m, "kind")
	return m
}

func TestProtobufWireMessages(t *testing.T) {
	tests := []pbwCase{
		{"ConfigMap", pbwCodecOf(protobuf.ConfigMap, protobuf.Marshal, protobuf.Unmarshal), pbwConfigMap(), func() pbwMessage { return &corev1.ConfigMap{} }},
		{"ConfigMap minimal", pbwCodecOf(protobuf.ConfigMap, protobuf.Marshal, protobuf.Unmarshal), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m"}}, func() pbwMessage { return &corev1.ConfigMap{} }},
		{"Namespace", pbwCodecOf(protobuf.Namespace, protobuf.Marshal, protobuf.Unmarshal), pbwNamespace(), func() pbwMessage { return &corev1.Namespace{} }},
		{"Namespace empty", pbwCodecOf(protobuf.Namespace, protobuf.Marshal, protobuf.Unmarshal), &corev1.Namespace{}, func() pbwMessage { return &corev1.Namespace{} }},
		{"Status", pbwCodecOf(protobuf.Status, protobuf.Marshal, protobuf.Unmarshal), pbwStatus(), func() pbwMessage { return &metav1.Status{} }},
		{"DeleteOptions", pbwCodecOf(protobuf.DeleteOptions, protobuf.Marshal, protobuf.Unmarshal), pbwDeleteOptions(), func() pbwMessage { return &metav1.DeleteOptions{} }},
		{"DeleteOptions empty", pbwCodecOf(protobuf.DeleteOptions, protobuf.Marshal, protobuf.Unmarshal), &metav1.DeleteOptions{}, func() pbwMessage { return &metav1.DeleteOptions{} }},
		{"PartialObjectMetadata", pbwCodecOf(protobuf.PartialObjectMetadata, protobuf.Marshal, protobuf.Unmarshal), pbwPartial(), func() pbwMessage { return &metav1.PartialObjectMetadata{} }},
		{"PartialObjectMetadataList", pbwCodecOf(protobuf.PartialObjectMetadataList, protobuf.Marshal, protobuf.Unmarshal), pbwPartialList(), func() pbwMessage { return &metav1.PartialObjectMetadataList{} }},
		{"WatchEvent", pbwCodecOf(protobuf.WatchEvent, protobuf.Marshal, protobuf.Unmarshal), &metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigMap","metadata":{"name":"x"}}`)}}, func() pbwMessage { return &metav1.WatchEvent{} }},
	}
	for _, tt := range tests {
		pbwBothWays(t, tt)
	}
}

// TestProtobufWirePresence pins the fields where presence matters: pointer
// zeros survive kapi's encoding, and kapi leaves nil pointers nil.
func TestProtobufWirePresence(t *testing.T) {
	b, err := protobuf.Marshal(protobuf.ConfigMap, map[string]any{"metadata": map[string]any{"name": "a", "creationTimestamp": nil, "deletionTimestamp": nil}, "immutable": false})
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := cm.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if cm.Immutable == nil || *cm.Immutable {
		t.Errorf("immutable = %v; want pointer to false", cm.Immutable)
	}
	if cm.DeletionTimestamp != nil || !cm.CreationTimestamp.IsZero() {
		t.Errorf("deletionTimestamp = %v, creationTimestamp = %v; want nil and zero", cm.DeletionTimestamp, cm.CreationTimestamp)
	}

	var opts metav1.DeleteOptions
	b, err = protobuf.Marshal(protobuf.DeleteOptions, map[string]any{"dryRun": []any{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := opts.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the field is deprecated, not gone from the wire: it is tested here
	if opts.GracePeriodSeconds != nil || opts.OrphanDependents != nil || opts.Preconditions != nil || len(opts.DryRun) != 1 {
		t.Errorf("DeleteOptions = %+v; want only dryRun", opts)
	}
}

func TestProtobufWireList(t *testing.T) {
	cms := []*corev1.ConfigMap{pbwConfigMap(), {ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"}}}
	var items [][]byte
	want := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "100", Continue: "next"}}
	for i, cm := range cms {
		var b []byte
		var err error
		if i == 0 { // one item encoded by kube, one by kapi
			b, err = cm.Marshal()
		} else {
			b, err = protobuf.Marshal(protobuf.ConfigMap, pbwJSONForm(t, cm))
		}
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, b)
		want.Items = append(want.Items, *cm)
	}
	rem := int64(0)
	for _, meta := range []protobuf.ListMeta{
		{ResourceVersion: "100", Continue: "next"},
		{ResourceVersion: "100", Continue: "next", RemainingItemCount: &rem},
	} {
		want.RemainingItemCount = meta.RemainingItemCount
		var got corev1.ConfigMapList
		if err := got.Unmarshal(protobuf.AppendList(nil, meta, items)); err != nil {
			t.Fatal(err)
		}
		if !apiequality.Semantic.DeepEqual(&got, want) {
			t.Errorf("list with %+v: got %+v", meta, got.ListMeta)
		}
	}
}

func TestProtobufWireEnvelope(t *testing.T) {
	ser := kubeproto.NewSerializer(scheme.Scheme, scheme.Scheme)
	cm := pbwConfigMap()
	body, err := protobuf.Marshal(protobuf.ConfigMap, pbwJSONForm(t, cm))
	if err != nil {
		t.Fatal(err)
	}
	env := protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, body)
	obj, gvk, err := ser.Decode(env, nil, nil)
	if err != nil {
		t.Fatalf("apimachinery decode of kapi's envelope: %v", err)
	}
	got, ok := obj.(*corev1.ConfigMap)
	if !ok || gvk.Kind != "ConfigMap" || gvk.Version != "v1" {
		t.Fatalf("decoded %T as %v", obj, gvk)
	}
	got.TypeMeta = metav1.TypeMeta{}
	if !apiequality.Semantic.DeepEqual(got, cm) {
		t.Errorf("decoded ConfigMap differs")
	}

	// kube's serializer writes exactly kapi's envelope around its bytes.
	ns := pbwNamespace()
	ns.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}
	var buf bytes.Buffer
	if err := ser.Encode(ns, &buf); err != nil {
		t.Fatal(err)
	}
	raw, err := ns.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if want := protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, raw); !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("kube's envelope\n% x\nkapi's\n% x", buf.Bytes(), want)
	}
	tm, inner, err := protobuf.DecodeEnvelope(buf.Bytes())
	if err != nil || tm != (protobuf.TypeMeta{APIVersion: "v1", Kind: "Namespace"}) || !bytes.Equal(inner, raw) {
		t.Errorf("DecodeEnvelope(kube's) = %v, %v", tm, err)
	}
}

// pbwWatchStream is a protobuf watch stream as kapi writes it.
func pbwWatchStream(t *testing.T) ([]byte, []watch.Event) {
	t.Helper()
	cm := pbwConfigMap()
	mod := pbwConfigMap()
	mod.Data = map[string]string{"changed": "yes"}
	bookmark := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "200", Annotations: map[string]string{"k8s.io/initial-events-end": "true"}}}
	status := pbwStatus()
	events := []struct {
		typ watch.EventType
		c   pbwCodec
		tm  protobuf.TypeMeta
		obj runtime.Object
	}{
		{watch.Added, pbwConfigMapCodec, protobuf.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, cm},
		{watch.Modified, pbwConfigMapCodec, protobuf.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, mod},
		{watch.Bookmark, pbwConfigMapCodec, protobuf.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, bookmark},
		{watch.Deleted, pbwConfigMapCodec, protobuf.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, mod},
		{watch.Error, pbwStatusCodec, protobuf.TypeMeta{APIVersion: "v1", Kind: "Status"}, status},
	}
	var stream []byte
	var want []watch.Event
	for _, e := range events {
		b, err := e.c.marshal(pbwJSONForm(t, e.obj))
		if err != nil {
			t.Fatal(err)
		}
		stream = protobuf.AppendWatchFrame(stream, string(e.typ), e.tm, b)
		want = append(want, watch.Event{Type: e.typ, Object: e.obj})
	}
	return stream, want
}

func pbwSameEvent(t *testing.T, i int, got, want watch.Event) {
	t.Helper()
	obj := got.Object.DeepCopyObject()
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		o.TypeMeta = metav1.TypeMeta{}
	case *metav1.Status:
		o.TypeMeta = metav1.TypeMeta{}
	}
	if got.Type != want.Type || !apiequality.Semantic.DeepEqual(obj, want.Object) {
		gj, _ := json.Marshal(got.Object)
		wj, _ := json.Marshal(want.Object)
		t.Errorf("event %d: got %s %s\nwant %s %s", i, got.Type, gj, want.Type, wj)
	}
}

func TestProtobufWireWatchDecoder(t *testing.T) {
	stream, want := pbwWatchStream(t)
	// What client-go's REST client does for a protobuf watch
	// (client-go rest/request.go Watch, rest/watch/decoder.go).
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.WithoutConversion().SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok || info.StreamSerializer == nil {
		t.Fatal("no protobuf stream serializer")
	}
	frames := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream)))
	dec := restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), info.Serializer)
	for i, w := range want {
		typ, obj, err := dec.Decode()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		pbwSameEvent(t, i, watch.Event{Type: typ, Object: obj}, w)
	}
	if _, _, err := dec.Decode(); err != io.EOF {
		t.Errorf("after the last event: %v; want EOF", err)
	}

	// kube's own encoder chain (the raw serializer for the event, the
	// protobuf serializer for the object, the length-delimited framer)
	// writes exactly the frame kapi writes around the same object bytes.
	for i, w := range want {
		o := w.Object.DeepCopyObject()
		gvks, _, err := scheme.Scheme.ObjectKinds(o)
		if err != nil {
			t.Fatal(err)
		}
		o.GetObjectKind().SetGroupVersionKind(gvks[0])
		var obj, ev, frame bytes.Buffer
		if err := info.Serializer.Encode(o, &obj); err != nil {
			t.Fatal(err)
		}
		if err := info.StreamSerializer.Serializer.Encode(&metav1.WatchEvent{Type: string(w.Type), Object: runtime.RawExtension{Raw: obj.Bytes()}}, &ev); err != nil {
			t.Fatal(err)
		}
		if _, err := info.StreamSerializer.Framer.NewFrameWriter(&frame).Write(ev.Bytes()); err != nil {
			t.Fatal(err)
		}
		raw, err := o.(pbwMessage).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		tm := protobuf.TypeMeta{APIVersion: gvks[0].GroupVersion().String(), Kind: gvks[0].Kind}
		if kapi := protobuf.AppendWatchFrame(nil, string(w.Type), tm, raw); !bytes.Equal(frame.Bytes(), kapi) {
			t.Errorf("event %d: kube's frame\n% x\nkapi's\n% x", i, frame.Bytes(), kapi)
		}
		got, rest, err := protobuf.DecodeWatchFrame(frame.Bytes())
		if err != nil || got.Type != string(w.Type) || got.TypeMeta != tm || !bytes.Equal(got.Object, raw) || len(rest) != 0 {
			t.Errorf("event %d: DecodeWatchFrame(kube's frame) = %+v, %v", i, got.TypeMeta, err)
		}
	}
}

// TestProtobufWireClientGo serves kapi-built protobuf bodies to a client-go
// clientset that asks for protobuf: get, list and watch.
func TestProtobufWireClientGo(t *testing.T) {
	cm := pbwConfigMap()
	cmBytes, err := protobuf.Marshal(protobuf.ConfigMap, pbwJSONForm(t, cm))
	if err != nil {
		t.Fatal(err)
	}
	stream, want := pbwWatchStream(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "application/vnd.kubernetes.protobuf") {
			http.Error(w, "test server speaks protobuf only; Accept: "+r.Header.Get("Accept"), http.StatusNotAcceptable)
			return
		}
		switch {
		case r.URL.Path == "/api/v1/namespaces/default/configmaps/settings":
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
			_, _ = w.Write(protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, cmBytes))
		case r.URL.Path == "/api/v1/namespaces/default/configmaps" && r.URL.Query().Get("watch") == "true":
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
			_, _ = w.Write(stream)
		case r.URL.Path == "/api/v1/namespaces/default/configmaps":
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
			list := protobuf.AppendList(nil, protobuf.ListMeta{ResourceVersion: "300"}, [][]byte{cmBytes, cmBytes})
			_, _ = w.Write(protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}, list))
		case r.URL.Path == "/api/v1/namespaces/missing":
			st := pbwStatus()
			st.Code, st.Reason, st.Details = http.StatusNotFound, metav1.StatusReasonNotFound, nil
			b, err := protobuf.Marshal(protobuf.Status, pbwJSONForm(t, st))
			if err != nil {
				t.Error(err)
			}
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write(protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "v1", Kind: "Status"}, b))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{
		ContentType:        runtime.ContentTypeProtobuf,
		AcceptContentTypes: runtime.ContentTypeProtobuf,
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	got.TypeMeta = metav1.TypeMeta{}
	if !apiequality.Semantic.DeepEqual(got, cm) {
		t.Errorf("get: ConfigMap differs")
	}

	list, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if list.ResourceVersion != "300" || len(list.Items) != 2 || !apiequality.Semantic.DeepEqual(&list.Items[1], cm) {
		t.Errorf("list: rv %q, %d items", list.ResourceVersion, len(list.Items))
	}

	_, err = cs.CoreV1().Namespaces().Get(ctx, "missing", metav1.GetOptions{})
	if st, ok := err.(interface{ Status() metav1.Status }); !ok || st.Status().Reason != metav1.StatusReasonNotFound || st.Status().Message != pbwStatus().Message {
		t.Errorf("get missing: %v; want the NotFound Status kapi sent", err)
	}

	wi, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer wi.Stop()
	for i, w := range want {
		select {
		case ev, ok := <-wi.ResultChan():
			if !ok {
				t.Fatalf("watch closed before event %d", i)
			}
			if w.Type == watch.Error {
				// client-go hands ERROR events' Status over as is.
				st, ok := ev.Object.(*metav1.Status)
				if ev.Type != watch.Error || !ok || st.Message != pbwStatus().Message {
					t.Errorf("event %d: got %s %T; want ERROR with the Status", i, ev.Type, ev.Object)
				}
				continue
			}
			pbwSameEvent(t, i, ev, w)
		case <-ctx.Done():
			t.Fatalf("event %d: %v", i, ctx.Err())
		}
	}
}

// pbwCase is one message of the wire tests: kube's Go value, and kapi's
// codec of its descriptor.
type pbwCase struct {
	name  string
	codec pbwCodec
	obj   pbwMessage
	empty func() pbwMessage
}

// pbwBothWays checks that kapi reads kube's bytes for tt.obj as kube's
// JSON form, and that kube reads kapi's bytes as tt.obj.
func pbwBothWays(t *testing.T, tt pbwCase) {
	t.Helper()
	t.Run(tt.name+"/kube to kapi", func(t *testing.T) {
		b, err := tt.obj.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got, err := tt.codec.unmarshal(b)
		if err != nil {
			t.Fatalf("kapi Unmarshal: %v", err)
		}
		if g, w := pbwNormalize(t, got), pbwNormalize(t, tt.obj); g != w {
			t.Errorf("kapi read kube's bytes as\n%s\nkube's JSON is\n%s", g, w)
		}
	})
	t.Run(tt.name+"/kapi to kube", func(t *testing.T) {
		b, err := tt.codec.marshal(pbwJSONForm(t, tt.obj))
		if err != nil {
			t.Fatalf("kapi Marshal: %v", err)
		}
		got := tt.empty()
		if err := got.Unmarshal(b); err != nil {
			t.Fatalf("kube Unmarshal: %v", err)
		}
		if !apiequality.Semantic.DeepEqual(got, tt.obj) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.obj)
			t.Errorf("kube read kapi's bytes as\n%s\nwant\n%s", gj, wj)
		}
	})
}
