package durable

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

func TestRecordRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		op   byte
		obj  storage.Object
	}{
		{"put", opPut, storage.Object{Key: "/g/r/ns/a", UID: "u", Value: []byte(`{"a":1}`),
			Labels: map[string]string{"b": "2", "a": "1"}, Fields: map[string]string{"metadata.name": "a"}}},
		{"put, no attributes", opPut, storage.Object{Key: "/a", Value: []byte{}}},
		{"delete", opDelete, storage.Object{Key: "/g/r/ns/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := encodeChange(tt.op, tt.obj)
			op, got, err := decodeChange(rec)
			if err != nil || op != tt.op {
				t.Fatalf("decodeChange: op %d, %v; want op %d", op, err, tt.op)
			}
			if !reflect.DeepEqual(got, tt.obj) {
				t.Fatalf("got %+v; want %+v", got, tt.obj)
			}
			if tt.op != opPut {
				return
			}
			st, err := decodeState(stateRecord(42, rec[1:]))
			want := tt.obj
			want.Revision = 42
			if err != nil || !reflect.DeepEqual(st, want) {
				t.Fatalf("decodeState: %+v, %v; want %+v", st, err, want)
			}
		})
	}
}

func TestRecordErrors(t *testing.T) {
	good := encodeChange(opPut, storage.Object{Key: "/a", Value: []byte("v"), Labels: map[string]string{"k": "v"}})
	tests := []struct {
		name string
		rec  []byte
	}{
		{"empty", nil},
		{"unknown op", []byte{9, 0}},
		{"truncated", good[:len(good)-3]},
		{"trailing bytes", append(good[:len(good):len(good)], 0)},
		{"length past the end", []byte{opDelete, 0x7f, 'a'}},
		{"huge map", append(encodeChange(opPut, storage.Object{Key: "/a"})[:4], 0xff, 0xff, 0xff, 0xff, 0x0f)},
		{"repeated label", []byte{opPut, 2, '/', 'a', 0, 0, 2, 1, 'k', 1, 'v', 1, 'k', 1, 'w', 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := decodeChange(tt.rec); !errors.Is(err, errRecord) {
				t.Fatalf("decodeChange(%x): %v; want errRecord", tt.rec, err)
			}
		})
	}
}

// FuzzDecodeChange: any bytes decode to an error or to a change that
// encodes back to the same bytes (one encoding per change).
func FuzzDecodeChange(f *testing.F) {
	f.Add(encodeChange(opPut, storage.Object{Key: "/a", UID: "u", Value: []byte("v"), Labels: map[string]string{"k": "v"}, Fields: map[string]string{"f": "1"}}))
	f.Add(encodeChange(opDelete, storage.Object{Key: "/a"}))
	f.Add([]byte{opPut})
	f.Fuzz(func(t *testing.T, b []byte) {
		op, o, err := decodeChange(b)
		if err != nil {
			if !errors.Is(err, errRecord) {
				t.Fatalf("error %v does not wrap errRecord", err)
			}
			return
		}
		if again := encodeChange(op, o); string(again) != string(b) {
			t.Fatalf("decoded %+v, which encodes to %x; want %x", o, again, b)
		}
		// Decoded twice through one interner, the second time with its
		// maps shared: the same change.
		in := newInterner()
		for range 2 {
			op2, o2, err := decodeChangeIn(b, in)
			if err != nil || op2 != op || string(encodeChange(op2, o2)) != string(b) {
				t.Fatalf("decoded through an interner: %+v, %v; want %+v", o2, err, o)
			}
		}
		if _, err := decodeState(stateRecord(7, b[1:])); op == opPut && err != nil {
			t.Fatalf("decodeState of a good body: %v", err)
		}
	})
}

// TestInterner: objects decoded through one interner share a map whose
// encoding they share, and only then.
func TestInterner(t *testing.T) {
	in := newInterner()
	labels := map[string]string{"app": "web", "tier": "front"}
	decode := func(key string, l map[string]string) storage.Object {
		t.Helper()
		_, o, err := decodeChangeIn(encodeChange(opPut, storage.Object{Key: key, Value: []byte("{}"), Labels: l, Fields: map[string]string{"metadata.name": key}}), in)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(o.Labels, l) || o.Fields["metadata.name"] != key || o.Key != key {
			t.Fatalf("decoded %+v; want key %s, labels %v", o, key, l)
		}
		return o
	}
	a := decode("/a", labels)
	b := decode("/b", map[string]string{"tier": "front", "app": "web"}) // the same labels
	c := decode("/c", map[string]string{"app": "db"})
	same := func(x, y map[string]string) bool {
		return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	}
	if !same(a.Labels, b.Labels) {
		t.Error("the same labels decoded into two maps; want one shared")
	}
	if same(a.Labels, c.Labels) || same(a.Fields, b.Fields) {
		t.Error("different maps shared")
	}
	if d := decode("/d", nil); d.Labels != nil {
		t.Errorf("no labels decoded as %v; want nil", d.Labels)
	}
}
