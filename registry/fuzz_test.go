package registry_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/codec/cbor"
	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/memory"
)

// FuzzWriteBodies sends arbitrary bodies to create, update and both patch
// types: the answer is never a 5xx, always JSON, and a success returns an
// object that reads back as stored.
func FuzzWriteBodies(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"a"},"spec":{"color":"red"}}`,
		`{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"n":1e400}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","finalizers":["x/y"]}}`,
		`[{"op":"add","path":"/spec/x","value":{"a":[1,2]}}]`,
		`{"metadata":{"name":"a","annotations":{"k":"v"}},"status":null}`,
		`{"metadata":{"name":"b","labels":{"x":1},"nope":2},"data":{"k":[]},"binaryData":{"b":"%%%"},"extra":1}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}`,
		`{"metadata":"x"}`, `null`, `{`, `"str"`, `{"a":1}{"b":2}`,
	} {
		f.Add([]byte(seed))
	}
	for _, seed := range []string{
		"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a\nspec:\n  ports:\n  - {port: 80, protocol: TCP}\n",
		`{"spec":{"ports":[{"port":80,"protocol":"TCP","name":"x"},{"$patch":"delete","port":81,"protocol":"TCP"}],"$setElementOrder/ports":[{"port":80,"protocol":"TCP"}]}}`,
		`{"metadata":{"managedFields":[{}]}}`, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["x"]}}`,
		"apiVersion: autoscaling/v1\nkind: Scale\nmetadata: {name: a}\nspec: {replicas: 3}\n",
		`{"spec":{"replicas":"x"}}`, `{"spec":{"replicas":-1}}`, `{"metadata":{"labels":{"a":1}}}`, `{"apiVersion":"example.com/v2"}`,
		`[{"op":"test","path":"/spec/replicas","value":9}]`, `[{"op":"frobnicate"}]`,
	} {
		f.Add([]byte(seed))
	}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		f.Fatal(err)
	}
	typed := widgets()
	typed.Plural, typed.Group = "swidgets", "example.com"
	typed.Schema, err = schema.Parse([]byte(widgetSchemaYAML))
	if err != nil {
		f.Fatal(err)
	}
	custom := widgets() // a custom resource's wire behaviour (kube's for CRDs)
	custom.Plural, custom.Custom = "cwidgets", true
	builtin := protoConfigMaps() // a built-in kind: its body checked against Go types (gojson)
	builtin.Schema = schema.ConfigMap()
	for _, res := range []*registry.Resource{widgets(), typed, custom, builtin} {
		if err := reg.Register(res); err != nil {
			f.Fatal(err)
		}
	}
	typedPath := "/apis/example.com/v1/namespaces/default/swidgets"
	builtinPath := "/apis/proto.example.com/v1/namespaces/default/pconfigmaps"
	reg.ServeHTTP(httptest.NewRecorder(), request("POST", builtinPath, "application/json", []byte(`{"metadata":{"name":"a"}}`)))
	reg.ServeHTTP(httptest.NewRecorder(), request("POST", widgetsPath, "application/json", []byte(`{"metadata":{"name":"a"}}`)))
	reg.ServeHTTP(httptest.NewRecorder(), request("POST", typedPath, "application/json", []byte(`{"metadata":{"name":"a"},"spec":{"ports":[{"port":80,"protocol":"TCP"}]}}`)))
	customPath := "/apis/example.com/v1/namespaces/default/cwidgets"
	reg.ServeHTTP(httptest.NewRecorder(), request("POST", customPath, "application/json", []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"replicas":1}}`)))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, rq := range []*http.Request{
			request("POST", widgetsPath, "application/json", body),
			request("PUT", widgetsPath+"/a", "application/json", body),
			request("PATCH", widgetsPath+"/a", "application/merge-patch+json", body),
			request("PATCH", widgetsPath+"/a", "application/json-patch+json", body),
			request("PATCH", widgetsPath+"/a?fieldManager=fuzz", "application/apply-patch+yaml", body),
			request("PATCH", typedPath+"/a", "application/strategic-merge-patch+json", body),
			request("PATCH", typedPath+"/a?fieldManager=fuzz&force=true", "application/apply-patch+yaml", body),
			request("PATCH", customPath+"/a", "application/merge-patch+json", body),
			request("PATCH", customPath+"/a", "application/json-patch+json", body),
			request("PATCH", customPath+"/a/status", "application/merge-patch+json", body),
			request("PATCH", customPath+"/a/scale", "application/merge-patch+json", body),
			request("PATCH", customPath+"/a/scale", "application/json-patch+json", body),
			request("PATCH", customPath+"/a/scale?fieldManager=fuzz", "application/apply-patch+yaml", body),
			request("PATCH", widgetsPath+"/a/scale?fieldManager=fuzz&force=true", "application/apply-patch+yaml", body),
			request("PUT", customPath+"/a/scale", "application/json", body),
			request("POST", builtinPath+"?fieldValidation=Strict", "application/json", body),
			request("PUT", builtinPath+"/a", "application/yaml", body),
		} {
			w := httptest.NewRecorder()
			reg.ServeHTTP(w, rq)
			if w.Code >= 500 {
				t.Fatalf("%s %s: got %d: %s", rq.Method, rq.URL, w.Code, w.Body)
			}
			var out map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
				t.Fatalf("%s %s: answer is not JSON: %v: %s", rq.Method, rq.URL, err, w.Body)
			}
			if w.Code < 300 {
				name := str(out, "metadata.name")
				back := strings.TrimSuffix(rq.URL.Path, "/a") + "/" + name
				if sub := strings.TrimPrefix(rq.URL.Path, customPath+"/a"); sub != rq.URL.Path && sub != "" {
					back = rq.URL.Path // a subresource reads back as itself
				} else if strings.HasSuffix(rq.URL.Path, "/scale") {
					back = rq.URL.Path
				}
				g := httptest.NewRecorder()
				reg.ServeHTTP(g, request("GET", back, "", nil))
				if g.Code != 200 || !bytes.Equal(g.Body.Bytes(), w.Body.Bytes()) {
					t.Fatalf("read back %s: got %d %s; want %s", name, g.Code, g.Body, w.Body)
				}
			}
		}
	})
}

// widgetSchemaYAML is the widgets' schema, with spec.ports a list-map.
const widgetSchemaYAML = `type: object
properties:
  apiVersion: {type: string}
  kind: {type: string}
  metadata: {type: object}
  spec:
    type: object
    properties:
      color: {type: string}
      replicas: {type: integer}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [port, protocol]
        items:
          type: object
          required: [port, protocol]
          properties:
            name: {type: string}
            port: {type: integer}
            protocol: {type: string}
  status:
    type: object
    x-kubernetes-preserve-unknown-fields: true
`

func request(method, path, contentType string, body []byte) *http.Request {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

// FuzzBodyFormats sends arbitrary YAML, CBOR and protobuf bodies to create,
// update and delete, on a resource with a protobuf message and one
// without: the answer is never a 5xx, and an object that was stored reads
// back in every format without one either.
func FuzzBodyFormats(f *testing.F) {
	cm := map[string]any{"apiVersion": "proto.example.com/v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}}, "data": map[string]any{"k": "v"}, "binaryData": map[string]any{"b": "AAE="}}
	raw, err := protobuf.Marshal(protobuf.ConfigMap, cm)
	if err != nil {
		f.Fatal(err)
	}
	cb, err := cbor.Marshal(widget("a", map[string]string{"x": "y"}, map[string]any{"n": 1.5, "m": int64(-3), "l": []any{true, nil}}))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{
		protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "proto.example.com/v1", Kind: "ConfigMap"}, raw),
		cb,
		[]byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a\nspec:\n  n: 1.0\n  s: &x [1, 2]\n  t: *x\n"),
		[]byte("k8s\x00"), {0xd9, 0xd9, 0xf7, 0xa0}, []byte("{a: [}"),
	} {
		f.Add(seed)
	}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		f.Fatal(err)
	}
	for _, res := range []*registry.Resource{widgets(), protoConfigMaps()} {
		if err := reg.Register(res); err != nil {
			f.Fatal(err)
		}
	}
	pcm := "/apis/proto.example.com/v1/namespaces/default/pconfigmaps"
	accepts := []string{"application/json", "application/yaml", "application/cbor", acceptProtobuf + ", application/json", acceptTable, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, base := range []string{widgetsPath, pcm} {
			for _, ct := range []string{"application/yaml", "application/cbor", acceptProtobuf} {
				for _, rq := range []*http.Request{
					request("POST", base, ct, body),
					request("PUT", base+"/a", ct, body),
					request("DELETE", base+"/a?dryRun=All", ct, body),
				} {
					w := httptest.NewRecorder()
					reg.ServeHTTP(w, rq)
					if w.Code >= 500 {
						t.Fatalf("%s %s (%s): got %d: %s", rq.Method, rq.URL, ct, w.Code, w.Body)
					}
					if w.Code >= 300 || rq.Method == "DELETE" {
						continue
					}
					for _, accept := range accepts {
						g := request("GET", base, "", nil)
						g.Header.Set("Accept", accept)
						rec := httptest.NewRecorder()
						reg.ServeHTTP(rec, g)
						if rec.Code != 200 {
							t.Fatalf("list as %s after %s %s: got %d: %s", accept, rq.Method, ct, rec.Code, rec.Body)
						}
					}
				}
			}
		}
	})
}
