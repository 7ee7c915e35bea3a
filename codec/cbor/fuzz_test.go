package cbor

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzUnmarshal: no body panics the decoder; a body it accepts encodes
// again to exactly what kube's encoder writes for the same value, and that
// encoding decodes to the same JSON form. Seeds live in
// testdata/fuzz/FuzzUnmarshal.
func FuzzUnmarshal(f *testing.F) {
	if b, err := Marshal(configMap(1 << 10)); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := Unmarshal(body)
		if err != nil {
			return
		}
		b, err := Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of a decoded body: %v", err)
		}
		if want, err := kubeEncode(v); err != nil {
			t.Fatalf("kube encoder: %v", err)
		} else if !bytes.Equal(b, want) {
			t.Fatalf("Marshal: got %x; kube writes %x", b, want)
		}
		again, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("Unmarshal(Marshal(v)): %v", err)
		}
		if !reflect.DeepEqual(again, v) {
			t.Fatalf("round trip: got %#v; want %#v", again, v)
		}
	})
}
