package conformance

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// rawDo sends one request, with header given as name, value pairs, and
// returns the response (its body read and closed) and the body.
func rawDo(t *testing.T, c *http.Client, method, url string, body []byte, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return resp, b
}

// protobufMagic starts every kube protobuf body (CODEC-3).
var protobufMagic = []byte("k8s\x00")

// pbEnvelope checks that body starts with the protobuf magic and returns
// the runtime.Unknown envelope after it.
func pbEnvelope(t *testing.T, body []byte) runtime.Unknown {
	t.Helper()
	if !bytes.HasPrefix(body, protobufMagic) {
		t.Fatalf("protobuf body: got prefix % x; want % x (k8s\\x00)", body[:min(len(body), 4)], protobufMagic)
	}
	var u runtime.Unknown
	if err := u.Unmarshal(body[len(protobufMagic):]); err != nil {
		t.Fatalf("protobuf envelope: %v", err)
	}
	return u
}

// clearKinds clears the TypeMeta of obj and, for a list, of its items.
func clearKinds(t *testing.T, obj runtime.Object) {
	t.Helper()
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if !meta.IsListType(obj) {
		return
	}
	err := meta.EachListItem(obj, func(o runtime.Object) error {
		o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The example server answered over plain HTTP in every representation it
// serves (CODEC-1..8).
func TestRepresentationsHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	base := e.srv.URL
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(hc.CloseIdleConnections)

	cm := configMap("default", "wire", map[string]string{"app": "wire"})
	cm.SetAnnotations(map[string]string{"note": "ünïcode"})
	cm.Object["binaryData"] = map[string]any{"bin": "AAEC/w=="}
	e.create(t, configMapsGVR, cm)
	w := e.create(t, widgetsGVR, widget("default", "wire", "red", 2, map[string]string{"app": "wire"}))
	w.Object["status"] = map[string]any{"readyReplicas": int64(1)}
	if _, err := e.widgets("default").UpdateStatus(ctx, w, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}
	const (
		cmPath     = "/api/v1/namespaces/default/configmaps"
		widgetPath = "/apis/example.com/v1/namespaces/default/widgets"
	)

	// CODEC-3: the bytes decode with k8s.io/api's generated protobuf code to
	// what the JSON answer decodes to.
	t.Run("protobuf", func(t *testing.T) {
		tests := []struct {
			name string
			path string
			kind string
			into func() runtime.Object
		}{
			{"configmap", cmPath + "/wire", "ConfigMap", func() runtime.Object { return &corev1.ConfigMap{} }},
			{"configmap list", cmPath, "ConfigMapList", func() runtime.Object { return &corev1.ConfigMapList{} }},
			{"namespace", "/api/v1/namespaces/default", "Namespace", func() runtime.Object { return &corev1.Namespace{} }},
			{"namespace list", "/api/v1/namespaces", "NamespaceList", func() runtime.Object { return &corev1.NamespaceList{} }},
		}
		pb := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp, body := rawDo(t, hc, http.MethodGet, base+tt.path, nil, "Accept", ctProtobuf)
				if resp.StatusCode != http.StatusOK || !sameMediaType(resp.Header.Get("Content-Type"), ctProtobuf) {
					t.Fatalf("GET %s Accept protobuf: got %d %q; want 200 %s\n%q", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), ctProtobuf, body)
				}
				env := pbEnvelope(t, body)
				if env.APIVersion != "v1" || env.Kind != tt.kind || env.ContentEncoding != "" || env.ContentType != "" {
					t.Errorf("envelope: got apiVersion %q kind %q contentEncoding %q contentType %q; want v1 %s and no encodings", env.APIVersion, env.Kind, env.ContentEncoding, env.ContentType, tt.kind)
				}
				got, gvk, err := pb.Decode(body, nil, tt.into())
				if err != nil {
					t.Fatalf("decoding with k8s.io/api: %v", err)
				}
				if want := (schema.GroupVersionKind{Version: "v1", Kind: tt.kind}); *gvk != want {
					t.Errorf("decoded kind: got %v; want %v", gvk, want)
				}
				resp, jsonBody := rawDo(t, hc, http.MethodGet, base+tt.path, nil, "Accept", ctJSON)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s Accept JSON: got %d %s", tt.path, resp.StatusCode, jsonBody)
				}
				want := tt.into()
				if err := json.Unmarshal(jsonBody, want); err != nil {
					t.Fatalf("decoding the JSON answer: %v", err)
				}
				// Protobuf carries no kind in the object or its items; kapi's
				// JSON has both (as for custom resources). A list's
				// resourceVersion is the store's revision when it was read,
				// which other tests' writes move between the two reads on a
				// shared etcd.
				for _, o := range []runtime.Object{got, want} {
					clearKinds(t, o)
					if l, err := meta.ListAccessor(o); err == nil {
						l.SetResourceVersion("")
					}
				}
				if !apiequality.Semantic.DeepEqual(got, want) {
					t.Errorf("protobuf answer decoded: got\n%+v\nwant (the JSON answer)\n%+v", got, want)
				}
			})
		}
	})

	// CODEC-4: CBOR with the self-described tag, decoding (with
	// apimachinery's CBOR serializer) to what the JSON answer holds.
	t.Run("cbor", func(t *testing.T) {
		tests := []struct{ name, path string }{
			{"widget", widgetPath + "/wire"},
			{"configmap", cmPath + "/wire"},
		}
		cb := cbor.NewSerializer(runtime.NewScheme(), runtime.NewScheme())
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp, body := rawDo(t, hc, http.MethodGet, base+tt.path, nil, "Accept", ctCBOR)
				if resp.StatusCode != http.StatusOK || !sameMediaType(resp.Header.Get("Content-Type"), ctCBOR) {
					t.Fatalf("GET %s Accept cbor: got %d %q; want 200 %s\n%q", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), ctCBOR, body)
				}
				if !bytes.HasPrefix(body, []byte{0xd9, 0xd9, 0xf7}) {
					t.Fatalf("CBOR body: got prefix % x; want d9 d9 f7", body[:min(len(body), 3)])
				}
				got := &unstructured.Unstructured{}
				if _, _, err := cb.Decode(body, nil, got); err != nil {
					t.Fatalf("decoding CBOR: %v", err)
				}
				_, jsonBody := rawDo(t, hc, http.MethodGet, base+tt.path, nil, "Accept", ctJSON)
				want := &unstructured.Unstructured{}
				if err := want.UnmarshalJSON(jsonBody); err != nil {
					t.Fatalf("decoding JSON: %v", err)
				}
				if !reflect.DeepEqual(got.Object, want.Object) {
					t.Errorf("CBOR answer decoded: got\n%#v\nwant (the JSON answer)\n%#v", got.Object, want.Object)
				}
			})
		}
	})

	// CODEC-6: lists over 128 KiB are gzipped for clients that accept it.
	t.Run("gzip", func(t *testing.T) {
		ns := e.namespace(t, "big")
		blob := strings.Repeat("0123456789abcdef", 100<<10/16)
		for _, name := range []string{"b1", "b2", "b3"} {
			u := configMap(ns, name, nil)
			u.Object["data"] = map[string]any{"blob": blob}
			e.create(t, configMapsGVR, u)
		}
		list := "/api/v1/namespaces/" + ns + "/configmaps"
		tests := []struct {
			name, path, accept, encoding string
			gzipped                      bool
		}{
			{"json list", list, ctJSON, "gzip", true},
			{"protobuf list", list, ctProtobuf, "gzip", true},
			{"json list, gzip among others", list, ctJSON, "deflate, gzip", true},
			{"json list, no Accept-Encoding", list, ctJSON, "", false},
			{"json list, gzip refused", list, ctJSON, "gzip;q=0", false},
			{"object under 128 KiB", list + "/b1", ctJSON, "gzip", false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				header := []string{"Accept", tt.accept}
				if tt.encoding != "" {
					header = append(header, "Accept-Encoding", tt.encoding)
				}
				resp, body := rawDo(t, hc, http.MethodGet, base+tt.path, nil, header...)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: got %d %s", tt.path, resp.StatusCode, body)
				}
				if got := resp.Header.Get("Content-Encoding"); (got == "gzip") != tt.gzipped {
					t.Fatalf("Content-Encoding: got %q; want gzip %v (body %d bytes)", got, tt.gzipped, len(body))
				}
				if tt.gzipped {
					zr, err := gzip.NewReader(bytes.NewReader(body))
					if err != nil {
						t.Fatalf("gunzip: %v", err)
					}
					if body, err = io.ReadAll(zr); err != nil {
						t.Fatalf("gunzip: %v", err)
					}
				}
				var items []corev1.ConfigMap
				switch {
				case strings.HasSuffix(tt.path, "/b1"):
					var cm corev1.ConfigMap
					if err := json.Unmarshal(body, &cm); err != nil {
						t.Fatalf("decoding: %v", err)
					}
					items = []corev1.ConfigMap{cm}
				case tt.accept == ctProtobuf:
					var l corev1.ConfigMapList
					if err := l.Unmarshal(pbEnvelope(t, body).Raw); err != nil {
						t.Fatalf("decoding protobuf: %v", err)
					}
					items = l.Items
				default:
					var l corev1.ConfigMapList
					if err := json.Unmarshal(body, &l); err != nil {
						t.Fatalf("decoding: %v", err)
					}
					items = l.Items
				}
				for _, it := range items {
					if it.Data["blob"] != blob {
						t.Errorf("item %s: got %d bytes of data.blob; want %d", it.Name, len(it.Data["blob"]), len(blob))
					}
				}
				if want := 3; len(items) != want && !strings.HasSuffix(tt.path, "/b1") {
					t.Errorf("items: got %d; want %d", len(items), want)
				}
			})
		}
	})

	// CODEC-2: YAML in and out.
	t.Run("yaml round trip", func(t *testing.T) {
		const sent = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: yml
  namespace: default
  labels:
    app: yaml
spec:
  color: teal
  replicas: 4
  ports:
  - name: http
    port: 80
    protocol: TCP
`
		resp, body := rawDo(t, hc, http.MethodPost, base+widgetPath, []byte(sent), "Content-Type", ctYAML, "Accept", ctYAML)
		if resp.StatusCode != http.StatusCreated || !sameMediaType(resp.Header.Get("Content-Type"), ctYAML) {
			t.Fatalf("POST YAML: got %d %q; want 201 %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), ctYAML, body)
		}
		var created, got, in map[string]any
		if err := yaml.Unmarshal(body, &created); err != nil {
			t.Fatalf("POST answer is not YAML: %v\n%s", err, body)
		}
		resp, body = rawDo(t, hc, http.MethodGet, base+widgetPath+"/yml", nil, "Accept", ctYAML)
		if resp.StatusCode != http.StatusOK || !sameMediaType(resp.Header.Get("Content-Type"), ctYAML) {
			t.Fatalf("GET YAML: got %d %q; want 200 %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), ctYAML, body)
		}
		if err := yaml.Unmarshal(body, &got); err != nil {
			t.Fatalf("GET answer is not YAML: %v\n%s", err, body)
		}
		if !reflect.DeepEqual(got, created) {
			t.Errorf("GET YAML: got\n%v\nwant (the POST answer)\n%v", got, created)
		}
		if err := yaml.Unmarshal([]byte(sent), &in); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got["spec"], in["spec"]) {
			t.Errorf("spec: got %v; want what was sent, %v", got["spec"], in["spec"])
		}
		md, _ := got["metadata"].(map[string]any)
		if md["uid"] == nil || md["resourceVersion"] == nil || !reflect.DeepEqual(md["labels"], map[string]any{"app": "yaml"}) {
			t.Errorf("metadata: got %v; want uid, resourceVersion and labels app=yaml", md)
		}
		resp, body = rawDo(t, hc, http.MethodGet, base+widgetPath+"?labelSelector=app%3Dyaml", nil, "Accept", ctYAML)
		var l map[string]any
		if err := yaml.Unmarshal(body, &l); resp.StatusCode != http.StatusOK || err != nil || l["kind"] != "WidgetList" {
			t.Fatalf("list in YAML: got %d %v kind %v; want 200 WidgetList\n%s", resp.StatusCode, err, l["kind"], body)
		}
		if items, _ := l["items"].([]any); len(items) != 1 {
			t.Errorf("list in YAML: got %d items; want 1", len(items))
		}
	})

	// CODEC-3, CODEC-5: what cannot be served is refused, with a Status.
	t.Run("refusals", func(t *testing.T) {
		envelope := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, Raw: []byte{0x0a, 0x00}}
		pbWidget, err := envelope.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		pbWidget = append(slices.Clone(protobufMagic), pbWidget...)
		tests := []struct {
			name, method, path string
			body               []byte
			header             []string
			want               int
		}{
			{"protobuf Accept on widgets", http.MethodGet, widgetPath, nil, []string{"Accept", ctProtobuf}, http.StatusNotAcceptable},
			{"protobuf Accept on a widget", http.MethodGet, widgetPath + "/wire", nil, []string{"Accept", ctProtobuf}, http.StatusNotAcceptable},
			{"YAML Accept on a widget watch", http.MethodGet, widgetPath + "?watch=true&timeoutSeconds=2", nil, []string{"Accept", ctYAML}, http.StatusNotAcceptable},
			{"YAML Accept on a configmap watch", http.MethodGet, cmPath + "?watch=true&timeoutSeconds=2", nil, []string{"Accept", ctYAML}, http.StatusNotAcceptable},
			{"unknown Accept", http.MethodGet, cmPath, nil, []string{"Accept", "text/html"}, http.StatusNotAcceptable},
			{"protobuf body to widgets", http.MethodPost, widgetPath, pbWidget, []string{"Content-Type", ctProtobuf}, http.StatusUnsupportedMediaType},
			{"unknown body type", http.MethodPost, widgetPath, []byte("name: x"), []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
			{"protobuf body without the magic", http.MethodPost, cmPath, []byte(`{"metadata":{"name":"nomagic"}}`), []string{"Content-Type", ctProtobuf}, http.StatusBadRequest},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp, body := rawDo(t, hc, tt.method, base+tt.path, tt.body, tt.header...)
				if resp.StatusCode != tt.want {
					t.Fatalf("%s %s %v: got %d %q %q; want %d", tt.method, tt.path, tt.header, resp.StatusCode, resp.Header.Get("Content-Type"), body, tt.want)
				}
				if sameMediaType(resp.Header.Get("Content-Type"), ctJSON) {
					var st metav1.Status
					if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" || int(st.Code) != tt.want || st.Message == "" {
						t.Errorf("error body: got %s (%v); want a Status with code %d and a message", body, err, tt.want)
					}
				}
			})
		}
		if _, err := e.configMaps("default").Get(ctx, "nomagic", metav1.GetOptions{}); err == nil {
			t.Errorf("configmap nomagic exists; want nothing written by a refused request")
		}
	})

	// CODEC-7: Tables with the resource's columns.
	t.Run("table", func(t *testing.T) {
		const accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
		tests := []struct {
			name, path string
			columns    []string
			priorities []int32
			row        []any // leading cells of the first row (Age is left out)
		}{
			{"widgets", widgetPath + "?labelSelector=app%3Dwire", []string{"Name", "Color", "Replicas", "Ready", "Age"}, []int32{0, 0, 0, 1, 0}, []any{"wire", "red", float64(2), float64(1)}},
			{"widget", widgetPath + "/wire", []string{"Name", "Color", "Replicas", "Ready", "Age"}, []int32{0, 0, 0, 1, 0}, []any{"wire", "red", float64(2), float64(1)}},
			{"configmaps", cmPath + "?labelSelector=app%3Dwire", []string{"Name", "Data", "Age"}, []int32{0, 0, 0}, []any{"wire", float64(2)}},
			{"namespace", "/api/v1/namespaces/default", []string{"Name", "Status", "Age"}, []int32{0, 0, 0}, []any{"default", "Active"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp, body := rawDo(t, hc, http.MethodGet, base+tt.path, nil, "Accept", accept)
				if resp.StatusCode != http.StatusOK || !sameMediaType(resp.Header.Get("Content-Type"), ctJSON) {
					t.Fatalf("GET %s as Table: got %d %q; want 200 JSON\n%s", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
				}
				var tab metav1.Table
				if err := json.Unmarshal(body, &tab); err != nil {
					t.Fatalf("decoding the Table: %v\n%s", err, body)
				}
				if tab.Kind != "Table" || tab.APIVersion != "meta.k8s.io/v1" {
					t.Errorf("got %s %s; want meta.k8s.io/v1 Table", tab.APIVersion, tab.Kind)
				}
				var cols []string
				var prios []int32
				for _, c := range tab.ColumnDefinitions {
					cols = append(cols, c.Name)
					prios = append(prios, c.Priority)
				}
				if !slices.Equal(cols, tt.columns) || !slices.Equal(prios, tt.priorities) {
					t.Errorf("columnDefinitions: got %v priorities %v; want %v priorities %v", cols, prios, tt.columns, tt.priorities)
				}
				if len(tab.Rows) != 1 {
					t.Fatalf("rows: got %d; want 1\n%s", len(tab.Rows), body)
				}
				if cells := tab.Rows[0].Cells; len(cells) != len(tt.columns) || !reflect.DeepEqual(cells[:len(tt.row)], tt.row) {
					t.Errorf("cells: got %v; want %d cells starting %v", cells, len(tt.columns), tt.row)
				}
				var obj metav1.PartialObjectMetadata
				if err := json.Unmarshal(tab.Rows[0].Object.Raw, &obj); err != nil || obj.Kind != "PartialObjectMetadata" || obj.Name != tt.row[0] {
					t.Errorf("row object: got %s (%v); want the PartialObjectMetadata of %v (includeObject=Metadata by default)", tab.Rows[0].Object.Raw, err, tt.row[0])
				}
			})
		}
	})

	// CODEC-8: PartialObjectMetadataList in JSON holds only metadata.
	t.Run("partial object metadata", func(t *testing.T) {
		resp, body := rawDo(t, hc, http.MethodGet, base+widgetPath, nil, "Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET: got %d %s", resp.StatusCode, body)
		}
		var l struct {
			metav1.TypeMeta
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatalf("decoding: %v\n%s", err, body)
		}
		if l.Kind != "PartialObjectMetadataList" || l.APIVersion != "meta.k8s.io/v1" || len(l.Items) == 0 {
			t.Fatalf("got %s %s with %d items; want meta.k8s.io/v1 PartialObjectMetadataList with items", l.APIVersion, l.Kind, len(l.Items))
		}
		for _, it := range l.Items {
			if _, ok := it["spec"]; ok || it["metadata"] == nil || it["kind"] != "PartialObjectMetadata" {
				t.Errorf("item: got %v; want kind PartialObjectMetadata, metadata and no spec", it)
			}
		}
	})
}
