package protobuf

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// FuzzUnmarshal feeds random bytes to Unmarshal as a ConfigMap and as a
// Namespace: no panic, errors wrap ErrInvalid, and what decodes encodes again
// (Marshal) to bytes that decode to the same JSON form.
func FuzzUnmarshal(f *testing.F) {
	f.Add(false, mustMarshal(f, ConfigMap, `{"metadata":{"name":"a","labels":{"x":"y"},"creationTimestamp":null,"managedFields":[{"manager":"m","time":"2026-01-01T00:00:00Z","fieldsV1":{"f:data":{}}}]},"data":{"k":"v"},"binaryData":{"b":"AAE="},"immutable":false}`))
	f.Add(true, mustMarshal(f, Namespace, `{"metadata":{"name":"n","deletionTimestamp":"2026-01-01T00:00:00Z","ownerReferences":[{"uid":"","controller":true}]},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active","conditions":[{"type":"T","lastTransitionTime":null}]}}`))
	f.Add(false, []byte{0x0a, 0x02, 0x42, 0x00})
	f.Add(true, []byte{0x0a, 0x03, 0x72, 0x01, 0x61})
	for _, seed := range [][]byte{{}, {0x20, 0x01}, {0x12, 0x02, 0x0a, 0x00}, {0x0a, 0x80, 0x01}} {
		f.Add(false, seed)
	}
	f.Fuzz(func(t *testing.T, namespace bool, b []byte) {
		md := ConfigMap
		if namespace {
			md = Namespace
		}
		fuzzRoundTrip(t, md, b)
	})
}

// FuzzUnmarshalCRD is FuzzUnmarshal for a CustomResourceDefinition, whose
// schema holds the unions (JSONSchemaPropsOr*), json_name keys and raw
// JSON values.
func FuzzUnmarshalCRD(f *testing.F) {
	f.Add(mustMarshal(f, CustomResourceDefinition, `{"metadata":{"name":"w.example.com"},"spec":{"group":"example.com","names":{"plural":"w","kind":"W"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","$ref":"#/x","default":{"a":1},"enum":["a",null],"items":[{"type":"string"}],"properties":{"s":{"items":{"type":"integer"},"additionalProperties":false,"x-kubernetes-preserve-unknown-fields":true}},"additionalProperties":{"type":"string"},"dependencies":{"a":["b"],"c":{"required":["d"]}},"x-kubernetes-validations":[{"rule":"true"}]}}}]}}`))
	f.Add([]byte{0x12, 0x04, 0x3a, 0x02, 0x22, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) { fuzzRoundTrip(t, CustomResourceDefinition, b) })
}

// FuzzDecodeEnvelope: no panic, errors wrap ErrInvalid, and a decoded
// envelope written again decodes to the same type and raw bytes.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add(AppendEnvelope(nil, TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, []byte{0x0a, 0x00}))
	f.Add([]byte("k8s\x00"))
	f.Add([]byte(`{"kind":"ConfigMap"}`))
	f.Add(AppendWatchFrame(nil, "ADDED", TypeMeta{APIVersion: "v1", Kind: "Namespace"}, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ev, _, err := DecodeWatchFrame(b); err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("DecodeWatchFrame error %v does not wrap ErrInvalid", err)
			}
		} else {
			again, _, err := DecodeWatchFrame(AppendWatchFrame(nil, ev.Type, ev.TypeMeta, ev.Object))
			if err != nil || again.Type != ev.Type || again.TypeMeta != ev.TypeMeta || !bytes.Equal(again.Object, ev.Object) {
				t.Fatalf("watch frame round trip: %+v -> %+v, %v", ev, again, err)
			}
		}
		tm, raw, err := DecodeEnvelope(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		tm2, raw2, err := DecodeEnvelope(AppendEnvelope(nil, tm, raw))
		if err != nil || tm2 != tm || !bytes.Equal(raw, raw2) {
			t.Fatalf("round trip: %v % x -> %v % x, %v", tm, raw, tm2, raw2, err)
		}
	})
}

// FuzzUnmarshalKinds is FuzzUnmarshal over test messages with every scalar
// kind, maps and special message, in proto3 and proto2.
func FuzzUnmarshalKinds(f *testing.F) {
	p3, p2 := testMessages(f)
	f.Add(false, mustMarshal(f, p3, `{"i32":-1,"u64":5,"s32":-3,"flt":1.5,"dbl":-2,"b":true,"s":"x","raw":"AA==","opt_i64":0,"rep_i32":[0,1],"time":null,"micro":"2026-11-23T07:38:04.123456Z","dur":"1s","fields":{"a":1},"ext":[null],"qty":"1","port":"http","intMap":{"1":"a"},"boolMap":{"true":1},"selMap":{"a":{}},"timeMap":{"t":null}}`))
	f.Add(true, mustMarshal(f, p2, `{"i32":-1,"rep_s":["a"],"time":"2026-11-23T07:38:04Z","port":3}`))
	f.Fuzz(func(t *testing.T, proto2 bool, b []byte) {
		md := p3
		if proto2 {
			md = p2
		}
		obj, err := Unmarshal(md, b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		b2, err := Marshal(md, obj)
		if err != nil {
			t.Fatalf("Marshal of what Unmarshal returned: %v", err)
		}
		obj2, err := Unmarshal(md, b2)
		if err != nil {
			t.Fatalf("Unmarshal of Marshal's output: %v", err)
		}
		j1, _ := json.Marshal(obj)
		j2, _ := json.Marshal(obj2)
		if !bytes.Equal(j1, j2) {
			t.Fatalf("round trip changed the object:\n%s\n%s", j1, j2)
		}
	})
}

// fuzzRoundTrip checks what Unmarshal makes of b: an ErrInvalid, or an
// object that Marshal and Unmarshal keep as it is, byte for byte stable.
func fuzzRoundTrip(t *testing.T, md protoreflect.MessageDescriptor, b []byte) {
	t.Helper()
	obj, err := Unmarshal(md, b)
	if err != nil {
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
		return
	}
	b2, err := Marshal(md, obj)
	if err != nil {
		t.Fatalf("Marshal of what Unmarshal returned: %v", err)
	}
	obj2, err := Unmarshal(md, b2)
	if err != nil {
		t.Fatalf("Unmarshal of Marshal's output % x: %v", b2, err)
	}
	j1, _ := json.Marshal(obj)
	j2, _ := json.Marshal(obj2)
	if !bytes.Equal(j1, j2) {
		t.Fatalf("round trip changed the object:\n%s\n%s", j1, j2)
	}
	if b3, err := Marshal(md, obj2); err != nil || !bytes.Equal(b2, b3) {
		t.Fatalf("Marshal is not stable: % x\n% x (%v)", b2, b3, err)
	}
}
