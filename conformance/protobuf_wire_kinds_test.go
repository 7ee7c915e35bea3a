package conformance

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"sigs.k8s.io/randfill"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/codec/protobuf"
)

// Every built-in kind's protobuf message against k8s.io/api's generated
// code, both ways, on objects filled at random by apimachinery's
// round-trip fuzzer (every field, inline ones such as Volume.VolumeSource
// and Probe.ProbeHandler included): kapi reads kube's bytes as kube's
// JSON, and kube reads kapi's bytes as the object.
func TestProtobufWireBuiltinKindsFuzzed(t *testing.T) {
	resources, err := builtin.Resources(builtin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, pbwKindFuncs), rand.NewSource(20), serializer.NewCodecFactory(scheme.Scheme)).
		NilChance(0.2).NumElements(0, 2).MaxDepth(12)
	const perKind = 8
	for _, res := range resources {
		gvk := schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind}
		obj, err := scheme.Scheme.New(gvk)
		if err != nil {
			t.Fatalf("%v: %v", gvk, err)
		}
		empty := func() pbwMessage { return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(pbwMessage) }
		for i := range perKind {
			o := empty()
			f.Fill(o)
			name := fmt.Sprintf("%s.%s/%d", res.Plural, res.Version, i)
			t.Run(name, func(t *testing.T) {
				b, err := o.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				// Protobuf cannot tell [] from null, nor "" from a nil
				// []byte: kube's own reading of its bytes is the reference.
				want := empty()
				if err := want.Unmarshal(b); err != nil {
					t.Fatal(err)
				}
				got, err := protobuf.Unmarshal(res.Protobuf, b)
				if err != nil {
					t.Fatalf("kapi Unmarshal: %v", err)
				}
				if g, w := pbwNormalize(t, got), pbwNormalize(t, want); g != w {
					t.Errorf("kapi read kube's bytes as\n%s\nkube read them as\n%s", g, w)
				}
				mine, err := protobuf.Marshal(res.Protobuf, pbwJSONForm(t, o))
				if err != nil {
					t.Fatalf("kapi Marshal: %v", err)
				}
				back := empty()
				if err := back.Unmarshal(mine); err != nil {
					t.Fatalf("kube Unmarshal: %v", err)
				}
				if !apiequality.Semantic.DeepEqual(back, want) {
					t.Errorf("kube read kapi's bytes as\n%s\nwant\n%s", pbwNormalize(t, back), pbwNormalize(t, want))
				}
			})
		}
	}
}

// pbwKindFuncs keep the fuzzed values to what JSON can carry: quantities
// in canonical form, raw extensions as JSON, times as their JSON precision.
var pbwKindFuncs = func(runtimeserializer serializer.CodecFactory) []any {
	return []any{
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1000), resource.DecimalSI)
		},
		func(r *runtime.RawExtension, c randfill.Continue) {
			r.Raw = []byte(fmt.Sprintf(`{"n":%d}`, c.Int63n(100)))
		},
		func(m *metav1.MicroTime, c randfill.Continue) {
			*m = metav1.NewMicroTime(metav1.Unix(c.Int63n(2_000_000_000), c.Int63n(1_000_000)*1000).Time)
		},
	}
}
