package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8scbor "k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	k8sjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	k8sprotobuf "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kapi-dev/kapi/codec/cbor"
	"github.com/kapi-dev/kapi/codec/protobuf"
)

// BenchmarkCodec encodes and decodes the same ConfigMaps (about 2 KiB and
// 100 KiB) with kapi's codecs and with k8s.io/apimachinery's serializers,
// side by side: kapi works on the JSON form (map[string]any, what its
// registry holds), apimachinery on the typed corev1.ConfigMap (JSON,
// protobuf) and on Unstructured (CBOR, which kube serves for custom
// resources). Names: Codec/<size>/<format>/<encode|decode>/<kapi|k8s>.
func BenchmarkCodec(b *testing.B) {
	for _, size := range []int{2 << 10, 100 << 10} {
		typed := benchTypedConfigMap(size)
		j, err := json.Marshal(typed)
		if err != nil {
			b.Fatal(err)
		}
		form := decodeJSONForm(b, j)
		kjson := k8sjson.NewSerializerWithOptions(k8sjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, k8sjson.SerializerOptions{})
		kproto := k8sprotobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
		kcbor := k8scbor.NewSerializer(unstructuredScheme{}, unstructuredScheme{})
		pb, err := runtime.Encode(kproto, typed)
		if err != nil {
			b.Fatal(err)
		}
		_, pbRaw, err := protobuf.DecodeEnvelope(pb)
		if err != nil {
			b.Fatal(err)
		}
		cb, err := cbor.Marshal(form)
		if err != nil {
			b.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(mustUnstructured(b, j))}
		name := fmt.Sprintf("%dKiB", size>>10)
		cases := []struct {
			path string
			n    int
			fn   func() error
		}{
			{"json/encode/kapi", len(j), func() error { _, err := json.Marshal(form); return err }},
			{"json/encode/k8s", len(j), func() error { return kjson.Encode(typed, &bytes.Buffer{}) }},
			{"json/decode/kapi", len(j), func() error { _, err := jsonForm(j); return err }},
			{"json/decode/k8s", len(j), func() error { _, _, err := kjson.Decode(j, nil, &corev1.ConfigMap{}); return err }},
			{"protobuf/encode/kapi", len(pb), func() error { _, err := protobuf.Marshal(protobuf.ConfigMap, form); return err }},
			{"protobuf/encode/k8s", len(pb), func() error { return kproto.Encode(typed, &bytes.Buffer{}) }},
			{"protobuf/decode/kapi", len(pb), func() error { _, err := protobuf.Unmarshal(protobuf.ConfigMap, pbRaw); return err }},
			{"protobuf/decode/k8s", len(pb), func() error { _, _, err := kproto.Decode(pb, nil, &corev1.ConfigMap{}); return err }},
			{"cbor/encode/kapi", len(cb), func() error { _, err := cbor.Marshal(form); return err }},
			{"cbor/encode/k8s", len(cb), func() error { return kcbor.Encode(u, &bytes.Buffer{}) }},
			{"cbor/decode/kapi", len(cb), func() error { _, err := cbor.Unmarshal(cb); return err }},
			{"cbor/decode/k8s", len(cb), func() error {
				_, _, err := kcbor.Decode(cb, nil, &unstructured.Unstructured{})
				return err
			}},
		}
		for _, c := range cases {
			b.Run(name+"/"+c.path, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(c.n))
				for b.Loop() {
					if err := c.fn(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchTypedConfigMap is a ConfigMap of about size bytes of JSON: typical
// metadata and 100-byte data entries.
func benchTypedConfigMap(size int) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "settings", Namespace: "default", UID: "6b1f6c4e-3c57-4f4e-9f0b-0d1d5c2f7a10",
			ResourceVersion: "12345", CreationTimestamp: metav1.Unix(1795333084, 0).Rfc3339Copy(),
			Labels:      map[string]string{"app": "web", "tier": "frontend"},
			Annotations: map[string]string{"example.com/owner": "team-a"},
		},
		Data: map[string]string{},
	}
	for i := 0; len(cm.Data)*128 < size-500; i++ {
		cm.Data[fmt.Sprintf("key-%05d.properties", i)] = strings.Repeat("v", 100)
	}
	return cm
}

// jsonForm decodes JSON as kapi's registry does: numbers as json.Number.
func jsonForm(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	return m, d.Decode(&m)
}

func decodeJSONForm(b *testing.B, j []byte) map[string]any {
	m, err := jsonForm(j)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func mustUnstructured(b *testing.B, j []byte) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		b.Fatal(err)
	}
	return m
}

// unstructuredScheme creates and types Unstructured objects, as kube's
// custom-resource handler does for its CBOR serializer.
type unstructuredScheme struct{}

func (unstructuredScheme) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

func (unstructuredScheme) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	return []schema.GroupVersionKind{obj.GetObjectKind().GroupVersionKind()}, false, nil
}

func (unstructuredScheme) Recognizes(schema.GroupVersionKind) bool { return true }
