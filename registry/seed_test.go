package registry

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// A protobuf create's response, encoded from the object as written
// (seedEnveloped), is byte for byte the encoding of the stored bytes
// decoded, and a get of the state answers it too; an object whose
// strings JSON cannot carry (invalid UTF-8, stored as U+FFFD) is answered
// from the stored bytes, as every later read sees it.
func TestCreateResponseAsStored(t *testing.T) {
	reg, err := New(Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	cms := &Resource{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true, Protobuf: protobuf.ConfigMap}
	if err := reg.Register(cms); err != nil {
		t.Fatal(err)
	}
	tm := protobuf.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	for _, tt := range []struct {
		name   string
		obj    map[string]any
		seeded bool
	}{
		{"plain", map[string]any{"metadata": map[string]any{"name": "a", "labels": map[string]any{"app": "web"}}, "data": map[string]any{"k": "v"}}, true},
		{"managedFields and binary data", map[string]any{"metadata": map[string]any{"name": "b", "annotations": map[string]any{"x": "<&>"}},
			"data": map[string]any{"k": "v\u2028", "k<&>\u2029": "w"}, "binaryData": map[string]any{"b": "AAEC"}}, true},
		{"invalid UTF-8", map[string]any{"metadata": map[string]any{"name": "c"}, "data": map[string]any{"k": "v\xff"}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := protobuf.Marshal(protobuf.ConfigMap, tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			serve := func(method, path string, body []byte) []byte {
				req := httptest.NewRequestWithContext(context.Background(), method, path, bytes.NewReader(body))
				req.Header.Set("Accept", negotiate.MediaProtobuf)
				if body != nil {
					req.Header.Set("Content-Type", negotiate.MediaProtobuf)
				}
				w := httptest.NewRecorder()
				reg.ServeHTTP(w, req)
				if w.Code >= 300 {
					t.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
				}
				return w.Body.Bytes()
			}
			created := serve(http.MethodPost, "/api/v1/namespaces/default/configmaps?fieldManager=m", protobuf.AppendEnvelope(nil, tm, raw))
			name := tt.obj["metadata"].(map[string]any)["name"].(string)
			o, err := reg.storeFor(cms).Get(context.Background(), cms.objectKey("default", name), storage.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			stored, err := decodeStored(o.Value, o.Revision)
			if err != nil {
				t.Fatal(err)
			}
			want, err := reg.encodeEnveloped(cms, o.Key, stored, negotiate.Target{Format: negotiate.Protobuf})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(created, want.body) {
				t.Errorf("the create's response is not the stored object's encoding:\ngot  %q\nwant %q", created, want.body)
			}
			if got := serve(http.MethodGet, "/api/v1/namespaces/default/configmaps/"+name, nil); !bytes.Equal(got, want.body) {
				t.Errorf("get:\ngot  %q\nwant %q", got, want.body)
			}
			if _, ok := stored.Meta()["managedFields"]; !ok {
				t.Errorf("no managedFields stored: the case does not test their encoding")
			}
			// The stored bytes are the stored object's encoding, its
			// fieldsV1 tries included; invalid UTF-8 reads back as a
			// valid U+FFFD, which encodes as itself.
			if again, err := jsonobj.Encode(stored); tt.seeded && (err != nil || !bytes.Equal(again, o.Value)) {
				t.Errorf("stored:\n%s\nits object encodes as\n%s (%v)", o.Value, again, err)
			}

			// The same object created through the pipeline: seeded (in the
			// Memo before any read) exactly when its strings are valid.
			obj := Object(deepCopy(tt.obj).(map[string]any))
			obj.Meta()["name"] = name + "-direct"
			out, written, err := reg.createWritten(context.Background(), cms, "default", obj, writeOptions{manager: "m"})
			if err != nil || (written != nil) != tt.seeded {
				t.Fatalf("createWritten: %v, written %v", err, written)
			}
			target := negotiate.Target{Format: negotiate.Protobuf}
			reg.seedEnveloped(cms, target, out, written)
			v, seeded := out.Memo.Load(memoKey(out.Revision, itemMemo, target, ""))
			if seeded != tt.seeded {
				t.Fatalf("seeded = %v; want %v", seeded, tt.seeded)
			}
			if seeded {
				stored, err := decodeStored(out.Value, out.Revision)
				if err != nil {
					t.Fatal(err)
				}
				want, err := reg.encodeEnveloped(cms, out.Key, stored, target)
				if err != nil {
					t.Fatal(err)
				}
				if got := v.(envelopedItem); !bytes.Equal(got.body, want.body) || !bytes.Equal(got.raw, want.raw) {
					t.Errorf("seeded:\ngot  %q\nwant %q", got.body, want.body)
				}
			}
		})
	}
}

// numberData is a mutating hook that writes a number where a ConfigMap's
// message has a string.
type numberData struct{}

func (numberData) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Resource == "configmaps" {
		a.Object["data"] = map[string]any{"k": int64(5)}
	}
	return nil
}

// allow is a validating hook that allows every write.
type allow struct{}

func (allow) Validate(context.Context, *admission.Attributes) error { return nil }

// A protobuf body needs no checkRepresentable (its message carried it),
// but an object mutating admission changed does: kube's 400, not a stored
// object no protobuf client can read.
func TestProtobufCreateRepresentable(t *testing.T) {
	for _, tt := range []struct {
		name  string
		chain admission.Chain
		code  int
	}{
		{"no admission", admission.Chain{}, http.StatusCreated},
		{"validating admission", admission.Chain{Validating: []admission.Validator{allow{}}}, http.StatusCreated},
		{"a hook writes a number into data", admission.Chain{Mutating: []admission.Mutator{numberData{}}}, http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := New(Options{Storage: memory.New(memory.Options{}), Admission: tt.chain})
			if err != nil {
				t.Fatal(err)
			}
			defer reg.Close()
			cms := &Resource{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true, Protobuf: protobuf.ConfigMap}
			if err := reg.Register(cms); err != nil {
				t.Fatal(err)
			}
			raw, err := protobuf.Marshal(protobuf.ConfigMap, map[string]any{"metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "v"}})
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/api/v1/namespaces/default/configmaps",
				bytes.NewReader(protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, raw)))
			req.Header.Set("Content-Type", negotiate.MediaProtobuf)
			w := httptest.NewRecorder()
			reg.ServeHTTP(w, req)
			if w.Code != tt.code {
				t.Fatalf("got %d %s; want %d", w.Code, w.Body, tt.code)
			}
			if tt.code == http.StatusBadRequest && !strings.Contains(w.Body.String(), "cannot be handled as a ConfigMap") {
				t.Errorf("got %s; want kube's cannot be handled", w.Body)
			}
		})
	}
}
