package etcd3

import (
	"bytes"
	"maps"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

func TestEnvelope(t *testing.T) {
	tests := []struct {
		name string
		in   storage.Object
	}{
		{"empty", storage.Object{}},
		{"value only", storage.Object{Value: []byte(`{"a":1}`)}},
		{"binary value", storage.Object{Value: []byte{0, 'k', 1, 0xff, '\n'}}},
		{"all", storage.Object{UID: "u-1", Value: []byte("v"),
			Labels: map[string]string{"app": "web", "tier": "", "": "x"},
			Fields: map[string]string{"metadata.name": "a", "metadata.namespace": "ns"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := encode(tt.in)
			var got storage.Object
			if err := decode(b, &got); err != nil {
				t.Fatalf("decode(encode(%+v)): %v", tt.in, err)
			}
			if got.UID != tt.in.UID || !bytes.Equal(got.Value, tt.in.Value) ||
				!maps.Equal(got.Labels, tt.in.Labels) || !maps.Equal(got.Fields, tt.in.Fields) {
				t.Fatalf("got %+v; want %+v", got, tt.in)
			}
			for range 10 { // map order must not change the bytes
				if again := encode(tt.in); !bytes.Equal(again, b) {
					t.Fatalf("encode is not deterministic: %q then %q", b, again)
				}
			}
		})
	}
}

func TestEnvelopeExample(t *testing.T) {
	// The worked example of value.go.
	got := encode(storage.Object{UID: "u", Labels: map[string]string{"app": "web"}, Value: []byte("{}")})
	want := []byte{0x6b, 0x01, 0x01, 0x75, 0x01, 0x03, 'a', 'p', 'p', 0x03, 'w', 'e', 'b', 0x00, '{', '}'}
	if !bytes.Equal(got, want) {
		t.Fatalf("encode = % x; want % x", got, want)
	}
}

func TestDecodeCorrupt(t *testing.T) {
	for _, b := range [][]byte{
		nil, {'k'}, {'x', 1, 0, 0, 0}, {'k', 2, 0, 0, 0},
		{'k', 1, 5, 'a'},            // uid longer than the value
		{'k', 1, 0, 0xff},           // unterminated uvarint
		{'k', 1, 0, 100, 1, 'a', 0}, // more labels than bytes
		{'k', 1, 0, 1, 1, 'a', 9},   // label value cut short
	} {
		var o storage.Object
		if err := decode(b, &o); err != errCorrupt {
			t.Errorf("decode(% x) = %v; want errCorrupt", b, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encode(storage.Object{UID: "u", Labels: map[string]string{"a": "b"}, Value: []byte("v")}))
	f.Add([]byte{'k', 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var o storage.Object
		if decode(b, &o) != nil {
			return
		}
		// What decodes re-encodes to the same bytes.
		if again := encode(o); !bytes.Equal(again, b) && len(o.Labels)+len(o.Fields) == 0 {
			t.Fatalf("encode(decode(% x)) = % x", b, again)
		}
	})
}
