package conformance

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubecbor "k8s.io/apimachinery/pkg/runtime/serializer/cbor"

	"github.com/kapi-dev/kapi/codec/cbor"
)

// The CBOR wire tests compare kapi's codec/cbor with apimachinery's CBOR
// serializer byte for byte. Both sides start from the same JSON text: kube
// reads it as an unstructured object (int64 / float64 numbers), kapi as its
// JSON form (json.Number).
//
// kube-apiserver itself serves CBOR through runtime.UseNondeterministicEncoding
// (responsewriters/writers.go, handlers/watch.go), which shuffles map keys on
// purpose; its bytes are a key-order permutation of the serializer's
// deterministic Encode, which is what kapi writes and what these tests
// compare. TestCBORWireNondeterministic checks that kapi decodes the shuffled
// form to the same value.

var cborWireObjects = map[string]string{
	"minimal": `{"kind":"Widget","apiVersion":"example.com/v1"}`,
	"configmap": `{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": {
			"name": "settings", "namespace": "default", "uid": "6b1f6c4e-3c57-4f4e-9f0b-0d1d5c2f7a10",
			"resourceVersion": "12345", "generation": 3, "creationTimestamp": "2024-05-01T10:00:00Z",
			"labels": {"app": "web", "app.kubernetes.io/name": "shop", "tier": "frontend", "": "empty key"},
			"annotations": {"example.com/owner": "team-a", "note": "größe ✓ 日本語 🚀", "long": "` + strings.Repeat("x", 300) + `"},
			"finalizers": ["example.com/cleanup"],
			"deletionTimestamp": null
		},
		"data": {"a.properties": "k=v\n", "empty": "", "escaped": "tab\tquote\"nul\u0000"},
		"spec": {
			"ints": [0, 1, 23, 24, 255, 256, 65535, 65536, 4294967295, 4294967296, -1, -24, -25, -256, -257,
				9223372036854775807, -9223372036854775808],
			"beyondInt64": [9223372036854775808, -9223372036854775809, 100000000000000000000000000000],
			"floats": [0.5, 1.0, -0.0, 0.1, 1.5, 65504.0, 65505.0, 100000.0, 3.4028234663852886e38, 1e300, 1e-7,
				5.960464477539063e-8, 6.103515625e-05, 1e3, 2.5E+2, 0.30000000000000004],
			"bools": [true, false], "nulls": [null, {"x": null}],
			"lists": [[], [[]], [{"a": [1, "two", 3.5, null, true]}]],
			"emptyMap": {},
			"nested": {"a": {"b": {"c": {"d": {"e": "deep"}}}}}
		}
	}`,
	"wide": wideObjectJSON(),
}

// wideObjectJSON has more than 23 keys and array elements (longer heads)
// and keys of equal length that sort bytewise.
func wideObjectJSON() string {
	var keys, items []string
	for i := 0; i < 300; i++ {
		keys = append(keys, fmt.Sprintf(`"k%c%d": %d`, 'z'-rune(i%26), i, i*1000))
		items = append(items, strconv.Itoa(i))
	}
	return `{"kind":"Wide","apiVersion":"v1","metadata":{"name":"w"},"m":{` + strings.Join(keys, ",") +
		`},"a":[` + strings.Join(items, ",") + `],"s":"` + strings.Repeat("ü", 40000) + `"}`
}

func cborJSONForm(t *testing.T, text string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("JSON form: %v", err)
	}
	return m
}

func cborKubeObject(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(text)); err != nil {
		t.Fatalf("kube unstructured: %v", err)
	}
	return u
}

// cborNormalize maps kapi's JSON form onto kube's unstructured types, the
// way kube's JSON decoding converts numbers.
func cborNormalize(t *testing.T, v any) any {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = cborNormalize(t, x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cborNormalize(t, x)
		}
		return out
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, err := v.Float64()
		if err != nil {
			t.Fatalf("number %q: %v", v, err)
		}
		return f
	}
	return v
}

func TestCBORWireObject(t *testing.T) {
	s := kubecbor.NewSerializer(runtime.NewScheme(), runtime.NewScheme())
	for name, text := range cborWireObjects {
		t.Run(name, func(t *testing.T) {
			var want bytes.Buffer
			if err := s.Encode(cborKubeObject(t, text), &want); err != nil {
				t.Fatal(err)
			}
			got, err := cbor.Marshal(cborJSONForm(t, text))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("Marshal:\ngot  %x\nwant %x", got, want.Bytes())
			}

			// kube's bytes, read by kapi, are the JSON form again.
			back, err := cbor.Unmarshal(want.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if g, w := cborNormalize(t, back), cborNormalize(t, cborJSONForm(t, text)); !reflect.DeepEqual(g, w) {
				t.Errorf("Unmarshal of kube's bytes: got %v; want %v", g, w)
			}
			// And kube reads kapi's bytes to the same unstructured object.
			u := &unstructured.Unstructured{}
			if _, _, err := s.Decode(got, nil, u); err != nil {
				t.Fatalf("kube decoding kapi's bytes: %v", err)
			}
			if !reflect.DeepEqual(u.Object, cborKubeObject(t, text).Object) {
				t.Errorf("kube decoding kapi's bytes: got %v", u.Object)
			}
		})
	}
}

func TestCBORWireNondeterministic(t *testing.T) {
	s := kubecbor.NewSerializer(runtime.NewScheme(), runtime.NewScheme())
	text := cborWireObjects["configmap"]
	want := cborNormalize(t, cborJSONForm(t, text))
	for i := 0; i < 5; i++ {
		var b bytes.Buffer
		if err := s.EncodeNondeterministic(cborKubeObject(t, text), &b); err != nil {
			t.Fatal(err)
		}
		got, err := cbor.Unmarshal(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cborNormalize(t, got), want) {
			t.Fatalf("got %v; want %v", got, want)
		}
	}
}

func TestCBORWireList(t *testing.T) {
	s := kubecbor.NewSerializer(runtime.NewScheme(), runtime.NewScheme())
	for name, n := range map[string]int{"empty": 0, "one": 1, "thirty": 30} {
		t.Run(name, func(t *testing.T) {
			metadata := `{"resourceVersion":"77","continue":"tok","remainingItemCount":5}`
			var itemTexts []string
			for i := 0; i < n; i++ {
				itemTexts = append(itemTexts, strings.Replace(cborWireObjects["configmap"], `"settings"`, fmt.Sprintf(`"cm-%d"`, i), 1))
			}
			text := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":` + metadata + `,"items":[` + strings.Join(itemTexts, ",") + `]}`
			list := &unstructured.UnstructuredList{}
			if err := list.UnmarshalJSON([]byte(text)); err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := s.Encode(list, &want); err != nil {
				t.Fatal(err)
			}

			var items [][]byte
			for _, it := range itemTexts {
				b, err := cbor.AppendValue(nil, cborJSONForm(t, it))
				if err != nil {
					t.Fatal(err)
				}
				items = append(items, b)
			}
			got, err := cbor.AppendList(nil, "ConfigMapList", "v1", cborJSONForm(t, metadata), items)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("AppendList:\ngot  %x\nwant %x", got, want.Bytes())
			}
		})
	}
}

// TestCBORWireWatchEvent builds watch events as kube-apiserver's watch
// handler does (handlers/response.go, watchEncoder.doEncode): the object
// through the CBOR serializer, then a metav1.WatchEvent carrying those bytes
// in a RawExtension through the stream serializer of a codec factory, both
// behind versioning encoders as the handler sets them up.
func TestCBORWireWatchEvent(t *testing.T) {
	scheme := runtime.NewScheme()
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	metav1.AddToGroupVersion(scheme, gv)
	factory := serializer.NewCodecFactory(scheme, serializer.WithSerializer(kubecbor.NewSerializerInfo))
	info, ok := runtime.SerializerInfoForMediaType(factory.SupportedMediaTypes(), runtime.ContentTypeCBOR)
	if !ok || info.StreamSerializer == nil {
		t.Fatal("no CBOR stream serializer")
	}
	eventEncoder := factory.EncoderForVersion(info.StreamSerializer.Serializer, gv)
	objectEncoder := info.Serializer // the CRD handler's unstructured encoder writes the object as is

	for _, typ := range []string{"ADDED", "MODIFIED", "DELETED", "BOOKMARK"} {
		for name, text := range cborWireObjects {
			t.Run(typ+"/"+name, func(t *testing.T) {
				var raw bytes.Buffer
				if err := objectEncoder.Encode(cborKubeObject(t, text), &raw); err != nil {
					t.Fatal(err)
				}
				var want bytes.Buffer
				event := &metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: raw.Bytes()}}
				if err := eventEncoder.Encode(event, info.StreamSerializer.Framer.NewFrameWriter(&want)); err != nil {
					t.Fatal(err)
				}

				object, err := cbor.Marshal(cborJSONForm(t, text))
				if err != nil {
					t.Fatal(err)
				}
				got, err := cbor.AppendWatchEvent(nil, typ, object)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want.Bytes()) {
					t.Errorf("AppendWatchEvent:\ngot  %x\nwant %x", got, want.Bytes())
				}
				// The untagged encoding of the object makes the same item.
				bare, err := cbor.AppendValue(nil, cborJSONForm(t, text))
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := cbor.AppendWatchEvent(nil, typ, bare); !bytes.Equal(got, want.Bytes()) {
					t.Errorf("AppendWatchEvent of an untagged object:\ngot  %x\nwant %x", got, want.Bytes())
				}
			})
		}
	}
}

// TestCBORWireWatchStream reads a stream of kapi's items with kube's CBOR
// framer and decoder, as client-go's watch decoder does.
func TestCBORWireWatchStream(t *testing.T) {
	scheme := runtime.NewScheme()
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	metav1.AddToGroupVersion(scheme, gv)
	// The stream serializer does not transcode RawExtension to JSON.
	s := kubecbor.NewSerializer(scheme, scheme, kubecbor.Transcode(false))

	var stream []byte
	var wantTypes []string
	for _, typ := range []string{"ADDED", "MODIFIED", "DELETED"} {
		object, err := cbor.Marshal(cborJSONForm(t, cborWireObjects["configmap"]))
		if err != nil {
			t.Fatal(err)
		}
		if stream, err = cbor.AppendWatchEvent(stream, typ, object); err != nil {
			t.Fatal(err)
		}
		wantTypes = append(wantTypes, typ)
	}
	r := kubecbor.NewFramer().NewFrameReader(nopCloser{bytes.NewReader(stream)})
	buf := make([]byte, len(stream))
	for _, typ := range wantTypes {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		var event metav1.WatchEvent
		if _, _, err := s.Decode(buf[:n], nil, &event); err != nil {
			t.Fatal(err)
		}
		if event.Type != typ {
			t.Errorf("got type %q; want %q", event.Type, typ)
		}
		u := &unstructured.Unstructured{}
		if _, _, err := s.Decode(event.Object.Raw, nil, u); err != nil {
			t.Fatalf("object: %v", err)
		}
		if u.GetName() != "settings" {
			t.Errorf("got object %v", u.Object)
		}
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// TestCBORWireDecodeAgreement: kapi's Unmarshal accepts exactly the bodies
// kube's serializer decodes into an Unstructured, and reads them the same.
func TestCBORWireDecodeAgreement(t *testing.T) {
	s := kubecbor.NewSerializer(runtime.NewScheme(), runtime.NewScheme())
	// A map of kind, apiVersion and "v" (or "v" twice), then the value.
	const head = "d9d9f7 a3 446b696e64 414b 4a61706956657273696f6e 427631 4176"
	tests := map[string]string{
		"int":                  head + "1903e8",
		"negative int":         head + "3903e7",
		"max int64":            head + "1b7fffffffffffffff",
		"uint beyond int64":    head + "1bffffffffffffffff",
		"neg beyond int64":     head + "3b8000000000000000",
		"float16":              head + "f93e00",
		"float32":              head + "fa47c35000",
		"float64":              head + "fb3fb999999999999a",
		"NaN":                  head + "f97e00",
		"Inf":                  head + "fb7ff0000000000000",
		"text string":          head + "6178",
		"byte string":          head + "42fffe",
		"invalid UTF-8 text":   head + "62fffe",
		"indefinite array":     head + "9f0102ff",
		"indefinite string":    head + "5f41614162ff",
		"indefinite map":       "d9d9f7 bf 446b696e64 414b 4a61706956657273696f6e 427631 ff",
		"untagged":             "a2 446b696e64 414b 4a61706956657273696f6e 427631",
		"duplicate key":        "d9d9f7 a3 446b696e64 414b 4a61706956657273696f6e 427631 446b696e64 414b",
		"duplicate text/bytes": "d9d9f7 a3 446b696e64 414b 4a61706956657273696f6e 427631 646b696e64 414b",
		"integer key":          "d9d9f7 a3 446b696e64 414b 4a61706956657273696f6e 427631 01 01",
		"bignum":               head + "c24101",
		"undefined":            head + "f7",
		"simple value 16":      head + "f0",
		"time tag":             head + "c0 74323032342d30352d30315431303a30303a30305a",
		"epoch tag":            head + "c1 1a663212a0",
		"base64 tag":           head + "d6 43010203",
		"unknown tag":          head + "d86e 01",
		"trailing data":        head + "01 00",
		"truncated":            head,
		"nested null map":      head + "a1 4161 f6",
	}
	for name, h := range tests {
		t.Run(name, func(t *testing.T) {
			body, err := hex.DecodeString(strings.ReplaceAll(h, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			_, _, kubeErr := s.Decode(body, nil, u)
			got, err := cbor.Unmarshal(body)
			if (err == nil) != (kubeErr == nil) {
				t.Fatalf("kapi: %v; kube: %v", err, kubeErr)
			}
			if err != nil {
				if !errors.Is(err, cbor.ErrInvalid) {
					t.Errorf("got %v; want it to wrap ErrInvalid", err)
				}
				return
			}
			if g := cborNormalize(t, got); !reflect.DeepEqual(g, u.Object) {
				t.Errorf("got %#v; kube reads %#v", g, u.Object)
			}
		})
	}
}
