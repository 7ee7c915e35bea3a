package protobuf

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// obj parses JSON the way kapi holds objects (UseNumber).
func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testMessages builds a proto3 and a proto2 descriptor exercising every
// scalar kind and the special messages, importing kapi's files.
func testMessages(t testing.TB) (p3, p2 protoreflect.MessageDescriptor) {
	t.Helper()
	scalars := []struct {
		name string
		typ  descriptorpb.FieldDescriptorProto_Type
	}{
		{"i32", descriptorpb.FieldDescriptorProto_TYPE_INT32},
		{"i64", descriptorpb.FieldDescriptorProto_TYPE_INT64},
		{"u32", descriptorpb.FieldDescriptorProto_TYPE_UINT32},
		{"u64", descriptorpb.FieldDescriptorProto_TYPE_UINT64},
		{"s32", descriptorpb.FieldDescriptorProto_TYPE_SINT32},
		{"s64", descriptorpb.FieldDescriptorProto_TYPE_SINT64},
		{"f32", descriptorpb.FieldDescriptorProto_TYPE_FIXED32},
		{"f64", descriptorpb.FieldDescriptorProto_TYPE_FIXED64},
		{"sf32", descriptorpb.FieldDescriptorProto_TYPE_SFIXED32},
		{"sf64", descriptorpb.FieldDescriptorProto_TYPE_SFIXED64},
		{"flt", descriptorpb.FieldDescriptorProto_TYPE_FLOAT},
		{"dbl", descriptorpb.FieldDescriptorProto_TYPE_DOUBLE},
		{"b", descriptorpb.FieldDescriptorProto_TYPE_BOOL},
		{"s", descriptorpb.FieldDescriptorProto_TYPE_STRING},
		{"raw", descriptorpb.FieldDescriptorProto_TYPE_BYTES},
	}
	msgs := []struct{ name, typ string }{
		{"time", ".k8s.io.apimachinery.pkg.apis.meta.v1.Time"},
		{"micro", ".k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime"},
		{"dur", ".k8s.io.apimachinery.pkg.apis.meta.v1.Duration"},
		{"fields", ".k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1"},
		{"ext", ".k8s.io.apimachinery.pkg.runtime.RawExtension"},
		{"qty", ".k8s.io.apimachinery.pkg.api.resource.Quantity"},
		{"port", ".k8s.io.apimachinery.pkg.util.intstr.IntOrString"},
		{"optTime", ".k8s.io.apimachinery.pkg.apis.meta.v1.Time"},
		{"sel", ".k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector"},
	}
	build := func(syntax string) protoreflect.MessageDescriptor {
		opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED
		m := &descriptorpb.DescriptorProto{Name: ptr("All")}
		var oneofs []*descriptorpb.OneofDescriptorProto
		add := func(f *descriptorpb.FieldDescriptorProto, optional bool) {
			f.Number = ptr(int32(len(m.Field) + 1))
			if optional && syntax == "proto3" {
				f.Proto3Optional = ptr(true)
				f.OneofIndex = ptr(int32(len(oneofs)))
				oneofs = append(oneofs, &descriptorpb.OneofDescriptorProto{Name: ptr("_" + f.GetName())})
			}
			m.Field = append(m.Field, f)
		}
		for _, s := range scalars {
			add(&descriptorpb.FieldDescriptorProto{Name: ptr(s.name), Type: s.typ.Enum(), Label: opt.Enum()}, false)
			add(&descriptorpb.FieldDescriptorProto{Name: ptr("opt_" + s.name), Type: s.typ.Enum(), Label: opt.Enum()}, true)
			add(&descriptorpb.FieldDescriptorProto{Name: ptr("rep_" + s.name), Type: s.typ.Enum(), Label: rep.Enum()}, false)
		}
		for _, s := range msgs {
			add(&descriptorpb.FieldDescriptorProto{Name: ptr(s.name), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: ptr(s.typ), Label: opt.Enum()}, s.name == "optTime")
			add(&descriptorpb.FieldDescriptorProto{Name: ptr("rep_" + s.name), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: ptr(s.typ), Label: rep.Enum()}, false)
		}
		for _, mp := range []struct {
			name string
			key  descriptorpb.FieldDescriptorProto_Type
			val  descriptorpb.FieldDescriptorProto_Type
			typ  string
		}{
			{"intMap", descriptorpb.FieldDescriptorProto_TYPE_INT64, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""},
			{"boolMap", descriptorpb.FieldDescriptorProto_TYPE_BOOL, descriptorpb.FieldDescriptorProto_TYPE_INT32, ""},
			{"selMap", descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector"},
			{"timeMap", descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".k8s.io.apimachinery.pkg.apis.meta.v1.Time"},
		} {
			entry := &descriptorpb.DescriptorProto{
				Name:    ptr(strings.ToUpper(mp.name[:1]) + mp.name[1:] + "Entry"),
				Options: &descriptorpb.MessageOptions{MapEntry: ptr(true)},
				Field: []*descriptorpb.FieldDescriptorProto{
					{Name: ptr("key"), Number: ptr(int32(1)), Type: mp.key.Enum(), Label: opt.Enum()},
					{Name: ptr("value"), Number: ptr(int32(2)), Type: mp.val.Enum(), Label: opt.Enum()},
				},
			}
			if mp.typ != "" {
				entry.Field[1].TypeName = ptr(mp.typ)
			}
			m.NestedType = append(m.NestedType, entry)
			add(&descriptorpb.FieldDescriptorProto{Name: ptr(mp.name), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(),
				TypeName: ptr(".kapi.test." + syntax + ".All." + entry.GetName()), Label: rep.Enum()}, false)
		}
		m.OneofDecl = oneofs
		fd := &descriptorpb.FileDescriptorProto{
			Name:        ptr("test/" + syntax + ".proto"),
			Package:     ptr("kapi.test." + syntax),
			Syntax:      ptr(syntax),
			Dependency:  []string{"k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto", "k8s.io/apimachinery/pkg/runtime/generated.proto", "k8s.io/apimachinery/pkg/api/resource/generated.proto", "k8s.io/apimachinery/pkg/util/intstr/generated.proto"},
			MessageType: []*descriptorpb.DescriptorProto{m},
		}
		if syntax == "proto2" {
			fd.Syntax = nil
		}
		f, err := protodesc.NewFile(fd, Files)
		if err != nil {
			t.Fatal(err)
		}
		return f.Messages().Get(0)
	}
	return build("proto3"), build("proto2")
}

func ptr[T any](v T) *T { return &v }

func TestRoundTrip(t *testing.T) {
	p3, p2 := testMessages(t)
	tests := []struct {
		name string
		md   protoreflect.MessageDescriptor
		in   string
		want string // after Marshal then Unmarshal; "" means in
	}{
		{"configmap", ConfigMap, `{"metadata":{"name":"a","namespace":"ns","labels":{"x":"1"},"creationTimestamp":"2026-11-23T07:38:04Z"},"data":{"a":"b","":""},"binaryData":{"k":"AAEC"},"immutable":true}`, ""},
		{"configmap immutable false", ConfigMap, `{"metadata":{},"immutable":false}`, ""},
		{"configmap zero scalars dropped", ConfigMap, `{"metadata":{"name":"","generation":0,"labels":{},"finalizers":[]}}`, `{"metadata":{}}`},
		{"unknown keys dropped", ConfigMap, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","bogus":1}}`, `{"metadata":{"name":"a"}}`},
		{"namespace empty spec", Namespace, `{"metadata":{"name":"n"},"spec":{},"status":{"phase":"Active"}}`, ""},
		{"namespace conditions", Namespace, `{"status":{"conditions":[{"type":"T","status":"","lastTransitionTime":null},{"type":"U","status":"True","lastTransitionTime":"2020-01-02T03:04:05Z","reason":"r","message":"m"}]}}`, ""},
		{"creationTimestamp null", ConfigMap, `{"metadata":{"creationTimestamp":null}}`, ""},
		{"deletionTimestamp null is absent", ConfigMap, `{"metadata":{"deletionTimestamp":null}}`, `{"metadata":{}}`},
		{"epoch is not zero", ConfigMap, `{"metadata":{"creationTimestamp":"1970-01-01T00:00:00Z","deletionTimestamp":"1970-01-01T00:00:00Z"}}`, ""},
		{"time drops fraction, keeps UTC", ConfigMap, `{"metadata":{"creationTimestamp":"2026-11-23T09:38:04.5+02:00"}}`, `{"metadata":{"creationTimestamp":"2026-11-23T07:38:04Z"}}`},
		{"ownerReferences keep empty strings", ConfigMap, `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"","name":"o","uid":"","controller":false}]}}`, ""},
		{"managedFields", ConfigMap, `{"metadata":{"managedFields":[{"manager":"m","operation":"Apply","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]}}`, ""},
		{"deleteOptions", DeleteOptions, `{"gracePeriodSeconds":0,"preconditions":{"uid":"","resourceVersion":"5"},"orphanDependents":false,"propagationPolicy":"Foreground","dryRun":["All"]}`, ""},
		{"status", Status, `{"metadata":{},"status":"Failure","message":"m","reason":"NotFound","details":{"name":"x","kind":"configmaps","causes":[{"reason":"FieldValueInvalid","message":"bad","field":"data"}],"retryAfterSeconds":3},"code":404}`, ""},
		{"listmeta remainingItemCount 0", Files2(t, "k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta"), `{"resourceVersion":"1","continue":"c","remainingItemCount":0}`, ""},
		{"watch event", WatchEvent, `{"type":"ADDED","object":{"kind":"ConfigMap","n":1.5e3}}`, ""},
		{"partial", PartialObjectMetadata, `{"metadata":{"name":"p","annotations":{"a":"b"}}}`, ""},

		{"p3 scalars", p3, `{"i32":-1,"i64":-9223372036854775808,"u32":4294967295,"u64":18446744073709551615,"s32":-2147483648,"s64":9223372036854775807,"f32":7,"f64":8,"sf32":-9,"sf64":-10,"flt":1.5,"dbl":1e+300,"b":true,"s":"x","raw":"/w=="}`, ""},
		{"p3 zeros dropped", p3, `{"i32":0,"i64":0,"u32":0,"flt":0,"dbl":0,"b":false,"s":"","raw":""}`, `{}`},
		{"p3 optional zeros kept", p3, `{"opt_i32":0,"opt_i64":0,"opt_u64":0,"opt_s32":0,"opt_f32":0,"opt_sf64":0,"opt_flt":0,"opt_dbl":0,"opt_b":false,"opt_s":"","opt_raw":""}`, ""},
		{"p3 repeated packed", p3, `{"rep_i32":[0,-1,2],"rep_u64":[0,18446744073709551615],"rep_s64":[-1,1],"rep_sf32":[-3],"rep_dbl":[0.5,-0],"rep_b":[false,true],"rep_s":["","a"],"rep_raw":["","AA=="]}`, `{"rep_i32":[0,-1,2],"rep_u64":[0,18446744073709551615],"rep_s64":[-1,1],"rep_sf32":[-3],"rep_dbl":[0.5,-0],"rep_b":[false,true],"rep_s":["","a"],"rep_raw":["","AA=="]}`},
		{"p3 float formats like encoding/json", p3, `{"dbl":0.000001,"rep_dbl":[1e-7,1e21,123456789,0.1]}`, `{"dbl":0.000001,"rep_dbl":[1e-7,1e+21,123456789,0.1]}`},
		{"p3 specials", p3, `{"time":"2026-11-23T07:38:04Z","micro":"2026-11-23T07:38:04.123456Z","dur":"1h0m0.5s","fields":{"f:a":{}},"ext":[1,"two",{"three":null}],"qty":"100m","port":8080,"rep_port":["http",0,-1,""],"rep_qty":["1Gi"]}`, ""},
		{"p3 special zeros", p3, `{"time":null,"micro":null,"fields":null,"ext":null,"dur":"0s","qty":"0","port":0,"optTime":null}`, `{"time":null,"micro":null,"fields":null,"ext":null,"dur":"0s","qty":"0","port":0}`},
		{"p3 quantity from number", p3, `{"qty":1.5}`, `{"qty":"1.5"}`},
		{"p3 microtime truncates to micros", p3, `{"micro":"2026-11-23T07:38:04.123456789+01:00"}`, `{"micro":"2026-11-23T06:38:04.123456Z"}`},
		{"p3 repeated specials with nulls", p3, `{"rep_time":[null,"2026-11-23T07:38:04Z"],"rep_ext":[null,true]}`, ""},
		{"p3 label selector", p3, `{"sel":{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"In","values":["x","y"]}]}}`, ""},
		{"p3 maps", p3, `{"intMap":{"-1":"a","7":""},"boolMap":{"true":1,"false":0},"selMap":{"a":{"matchLabels":{"x":"y"}},"b":{}},"timeMap":{"t":"2026-11-23T07:38:04Z","z":null}}`, ""},
		{"p3 map null values", p3, `{"intMap":{"1":null},"selMap":{"a":null}}`, `{"intMap":{"1":""},"selMap":{"a":{}}}`},
		{"p3 null list elements", p3, `{"rep_i32":[null,1],"rep_s":[null],"rep_b":[null],"rep_dbl":[null],"sel":{"matchExpressions":[null]}}`, `{"rep_i32":[0,1],"rep_s":[""],"rep_b":[false],"rep_dbl":[0],"sel":{"matchExpressions":[{}]}}`},

		{"p2 zeros are absent", p2, `{"i32":0,"opt_i32":0,"s":"","b":false,"i64":5}`, `{"i64":5}`},
		{"p2 optional time null is absent", p2, `{"time":null,"optTime":null}`, `{}`},
		{"p2 specials", p2, `{"time":"2026-11-23T07:38:04Z","port":"http","rep_s":["a",""]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := obj(t, tt.in)
			b, err := Marshal(tt.md, in)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			got, err := Unmarshal(tt.md, b)
			if err != nil {
				t.Fatalf("Unmarshal(% x): %v", b, err)
			}
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if g, w := toJSON(t, got), toJSON(t, obj(t, want)); g != w {
				t.Errorf("got  %s\nwant %s", g, w)
			}
			// Marshal is deterministic: the decoded form encodes to the same bytes.
			b2, err := Marshal(tt.md, got)
			if err != nil {
				t.Fatalf("Marshal again: %v", err)
			}
			if !bytes.Equal(b, b2) && tt.want == "" {
				t.Errorf("re-encoding differs:\n% x\n% x", b, b2)
			}
		})
	}
}

// Files2 finds a message in Files.
func Files2(t testing.TB, name protoreflect.FullName) protoreflect.MessageDescriptor {
	t.Helper()
	d, err := Files.FindDescriptorByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return d.(protoreflect.MessageDescriptor)
}

func TestMarshalGoTypes(t *testing.T) {
	p3, _ := testMessages(t)
	in := map[string]any{
		"i32": 3, "i64": int64(-4), "u64": float64(5), "dbl": 2, "flt": float64(0.25),
		"rep_s": []string{"a", "b"}, "rep_raw": []string{"AA=="}, "u32": int64(7), "s64": uint64(9), "f64": 3, "sf32": float64(-2),
		"sel": map[string]any{"matchLabels": map[string]string{"k": "v"}},
	}
	b, err := Marshal(p3, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(p3, b)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"dbl":2,"f64":3,"flt":0.25,"i32":3,"i64":-4,"rep_raw":["AA=="],"rep_s":["a","b"],"s64":9,"sel":{"matchLabels":{"k":"v"}},"sf32":-2,"u32":7,"u64":5}`
	if g := toJSON(t, got); g != want {
		t.Errorf("got %s; want %s", g, want)
	}
	if _, err := Marshal(p3, map[string]any{"rep_i32": []string{"1"}}); err == nil || err.Error() != "rep_i32: expected int32, got string" {
		t.Errorf("[]string for repeated int32: %v", err)
	}
	if _, err := Marshal(p3, map[string]any{"s": struct{}{}}); err == nil || err.Error() != "s: expected string, got unsupported Go type" {
		t.Errorf("struct value: %v", err)
	}
}

func TestPresenceBytes(t *testing.T) {
	tests := []struct {
		name string
		md   protoreflect.MessageDescriptor
		in   string
		want []byte
	}{
		{"immutable false is written", ConfigMap, `{"immutable":false}`, []byte{0x20, 0x00}},
		{"absent immutable is not", ConfigMap, `{}`, nil},
		{"empty map is absent", ConfigMap, `{"data":{}}`, nil},
		{"empty object is present", ConfigMap, `{"metadata":{}}`, []byte{0x0a, 0x00}},
		{"zero generation is not written", ConfigMap, `{"metadata":{"generation":0}}`, []byte{0x0a, 0x00}},
		{"creationTimestamp null is an empty Time", ConfigMap, `{"metadata":{"creationTimestamp":null}}`, []byte{0x0a, 0x02, 0x42, 0x00}},
		{"map entry writes key and value", ConfigMap, `{"data":{"a":""}}`, []byte{0x12, 0x05, 0x0a, 0x01, 'a', 0x12, 0x00}},
		{"gracePeriodSeconds 0 is written", DeleteOptions, `{"gracePeriodSeconds":0}`, []byte{0x08, 0x00}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.md, obj(t, tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("got % x; want % x", got, tt.want)
			}
		})
	}
}

func TestUnmarshalGogoZeros(t *testing.T) {
	// Kubernetes' generated code writes every non-pointer field: zeros of
	// implicit fields read as absent, of optional fields as present.
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	var meta []byte
	for _, n := range []protowire.Number{1, 2, 3, 4, 5, 6} { // name .. resourceVersion
		meta = appendString(meta, n, "")
	}
	meta = protowire.AppendTag(meta, 7, protowire.VarintType) // generation 0
	meta = protowire.AppendVarint(meta, 0)
	meta = append(protowire.AppendTag(meta, 8, protowire.BytesType), 0) // creationTimestamp zero
	b = protowire.AppendBytes(b, meta)
	b = protowire.AppendTag(b, 4, protowire.VarintType) // immutable false
	b = protowire.AppendVarint(b, 0)
	got, err := Unmarshal(ConfigMap, b)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := toJSON(t, got), `{"immutable":false,"metadata":{"creationTimestamp":null}}`; g != w {
		t.Errorf("got %s; want %s", g, w)
	}
}

func TestUnmarshalUnpackedAndMerged(t *testing.T) {
	p3, _ := testMessages(t)
	fd := p3.Fields().ByName("rep_i64")
	sel := p3.Fields().ByName("sel").Number()
	var b []byte
	b = protowire.AppendTag(b, fd.Number(), protowire.VarintType) // unpacked
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, fd.Number(), protowire.BytesType) // packed
	b = protowire.AppendBytes(b, protowire.AppendVarint(protowire.AppendVarint(nil, 2), 3))
	b = protowire.AppendTag(b, sel, protowire.BytesType) // message seen twice: merged
	b = protowire.AppendBytes(b, mustMarshal(t, Files2(t, metaV1+"LabelSelector"), `{"matchLabels":{"a":"1"}}`))
	b = protowire.AppendTag(b, sel, protowire.BytesType)
	b = protowire.AppendBytes(b, mustMarshal(t, Files2(t, metaV1+"LabelSelector"), `{"matchLabels":{"b":"2"}}`))
	b = protowire.AppendTag(b, 999, protowire.Fixed32Type) // unknown field: skipped
	b = protowire.AppendFixed32(b, 7)
	got, err := Unmarshal(p3, b)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := toJSON(t, got), `{"rep_i64":[1,2,3],"sel":{"matchLabels":{"a":"1","b":"2"}}}`; g != w {
		t.Errorf("got %s; want %s", g, w)
	}
}

func mustMarshal(t testing.TB, md protoreflect.MessageDescriptor, s string) []byte {
	t.Helper()
	b, err := Marshal(md, obj(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMarshalErrors(t *testing.T) {
	p3, _ := testMessages(t)
	tests := []struct {
		name string
		md   protoreflect.MessageDescriptor
		in   string
		want string
	}{
		{"number in map<string,string>", ConfigMap, `{"data":{"a":1}}`, "data.a: expected string, got number"},
		{"string for a map", ConfigMap, `{"data":"x"}`, "data: expected object, got string"},
		{"bool for a message", ConfigMap, `{"metadata":true}`, "metadata: expected object, got boolean"},
		{"bad base64", ConfigMap, `{"binaryData":{"k":"!!"}}`, "binaryData.k: illegal base64 data"},
		{"string for int64", ConfigMap, `{"metadata":{"generation":"1"}}`, "metadata.generation: expected int64, got string"},
		{"fraction for int64", ConfigMap, `{"metadata":{"generation":1.5}}`, "metadata.generation: expected int64, got 1.5"},
		{"list element", ConfigMap, `{"metadata":{"finalizers":["a",2]}}`, "metadata.finalizers[1]: expected string, got number"},
		{"nested list element", ConfigMap, `{"metadata":{"ownerReferences":[{},{"controller":"yes"}]}}`, "metadata.ownerReferences[1].controller: expected boolean, got string"},
		{"bad time", ConfigMap, `{"metadata":{"creationTimestamp":"yesterday"}}`, `metadata.creationTimestamp: invalid time "yesterday"`},
		{"time as number", ConfigMap, `{"metadata":{"creationTimestamp":5}}`, "metadata.creationTimestamp: expected RFC 3339 time string, got number"},
		{"int32 overflow", Status, `{"code":2147483648}`, "code: 2147483648 out of range for int32"},
		{"integer written as a fraction", p3, `{"i64":3.0}`, "i64: expected int64, got 3.0"},
		{"negative uint", p3, `{"u32":-1}`, "u32: -1 out of range for uint32"},
		{"packed element", p3, `{"rep_i32":[1,"x"]}`, "rep_i32[1]: expected int32, got string"},
		{"bad duration", p3, `{"dur":"soon"}`, `dur: invalid duration "soon"`},
		{"intOrString bool", p3, `{"port":true}`, "port: expected integer or string, got boolean"},
		{"intOrString fraction", p3, `{"port":1.5}`, "port: expected int32, got 1.5"},
		{"bad int map key", p3, `{"intMap":{"x":"a"}}`, "intMap.x: expected int64, got x"},
		{"bad bool map key", p3, `{"boolMap":{"yes":1}}`, `boolMap.yes: expected a boolean map key, got "yes"`},
		{"map message value", p3, `{"selMap":{"a":[]}}`, "selMap.a: expected object, got array"},
		{"strings for ints", p3, `{"rep_i64":["1"]}`, "rep_i64[0]: expected int64, got string"},
		{"string for float", p3, `{"dbl":"1"}`, "dbl: expected number, got string"},
		{"bad float", p3, `{"flt":"x"}`, "flt: expected number, got string"},
		{"array for uint", p3, `{"u64":[]}`, "u64: expected uint64, got array"},
		{"array for a list of messages", ConfigMap, `{"metadata":{"ownerReferences":{}}}`, "metadata.ownerReferences: expected array, got object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Marshal(tt.md, obj(t, tt.in))
			if err == nil {
				t.Fatalf("got no error; want %q", tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got %q; want prefix %q", err, tt.want)
			}
		})
	}
}

func TestUnmarshalErrors(t *testing.T) {
	p3, _ := testMessages(t)
	tag := func(n protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, n, typ) }
	num := func(name protoreflect.Name) protowire.Number { return p3.Fields().ByName(name).Number() }
	tests := []struct {
		name string
		md   protoreflect.MessageDescriptor
		b    []byte
		want string
	}{
		{"truncated", ConfigMap, []byte{0x0a, 0x05, 0x0a}, "metadata: malformed protobuf"},
		{"bad tag", ConfigMap, []byte{0x00}, "malformed protobuf"},
		{"wrong wire type", ConfigMap, append(tag(4, protowire.BytesType), 0), "immutable: wrong wire type"},
		{"wrong wire type in map", ConfigMap, append(tag(2, protowire.VarintType), 0), "data: wrong wire type"},
		{"NaN", p3, append(tag(num("dbl"), protowire.Fixed64Type), 0, 0, 0, 0, 0, 0, 0xf8, 0x7f), "dbl: NaN has no JSON form"},
		{"raw not JSON", p3, append(tag(num("ext"), protowire.BytesType), 3, 0x0a, 1, '{'), "ext: raw is not JSON"},
		{"raw two values", p3, append(tag(num("ext"), protowire.BytesType), 5, 0x0a, 3, '1', ' ', '2'), "ext: raw is not JSON"},
		{"time out of range", p3, append(tag(num("time"), protowire.BytesType), 0x0a, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), "time: time"},
		{"list element path", p3, append(append(tag(num("rep_ext"), protowire.BytesType), 0), append(tag(num("rep_ext"), protowire.BytesType), 3, 0x0a, 1, '[')...), "rep_ext[1]: raw is not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Unmarshal(tt.md, tt.b)
			if err == nil {
				t.Fatalf("got no error; want %q", tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got %q; want prefix %q", err, tt.want)
			}
		})
	}
}

func TestEnvelope(t *testing.T) {
	tm := TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	raw := []byte{0x0a, 0x02, 0x0a, 0x00}
	got := AppendEnvelope([]byte("prefix"), tm, raw)
	want := append([]byte("prefixk8s\x00"), 0x0a, 0x0f, 0x0a, 0x02, 'v', '1', 0x12, 0x09)
	want = append(want, "ConfigMap"...)
	want = append(want, 0x12, 0x04, 0x0a, 0x02, 0x0a, 0x00, 0x1a, 0x00, 0x22, 0x00)
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendEnvelope:\ngot  % x\nwant % x", got, want)
	}
	gtm, graw, err := DecodeEnvelope(got[len("prefix"):])
	if err != nil || gtm != tm || !bytes.Equal(graw, raw) {
		t.Errorf("DecodeEnvelope = %v, % x, %v; want %v, % x, nil", gtm, graw, err, tm, raw)
	}
	if u := AppendUnknown(nil, tm, raw); !bytes.Equal(u, want[len("prefixk8s\x00"):]) {
		t.Errorf("AppendUnknown = % x", u)
	}
	if _, r, err := DecodeEnvelope(AppendEnvelope(nil, TypeMeta{}, nil)); err != nil || r != nil {
		t.Errorf("empty envelope: raw %v, err %v", r, err)
	}

	for _, tt := range []struct {
		name string
		b    []byte
		want error
	}{
		{"no magic", []byte(`{"kind":"ConfigMap"}`), ErrNoMagic},
		{"short", []byte("k8s"), ErrNoMagic},
		{"truncated", []byte("k8s\x00\x0a\x05"), ErrInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := DecodeEnvelope(tt.b)
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v; want %v", err, tt.want)
			}
		})
	}
}

func TestAppendList(t *testing.T) {
	items := [][]byte{
		mustMarshal(t, ConfigMap, `{"metadata":{"name":"a"},"data":{"k":"v"}}`),
		mustMarshal(t, ConfigMap, `{"metadata":{"name":"b"}}`),
	}
	zero := int64(0)
	tests := []struct {
		name string
		meta ListMeta
		want string
	}{
		{"full", ListMeta{ResourceVersion: "7", Continue: "c", RemainingItemCount: &zero}, `{"items":[{"data":{"k":"v"},"metadata":{"name":"a"}},{"metadata":{"name":"b"}}],"metadata":{"continue":"c","remainingItemCount":0,"resourceVersion":"7"}}`},
		{"empty meta", ListMeta{}, `{"items":[{"data":{"k":"v"},"metadata":{"name":"a"}},{"metadata":{"name":"b"}}],"metadata":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AppendList(nil, tt.meta, items)
			got, err := Unmarshal(ConfigMapList, b)
			if err != nil {
				t.Fatal(err)
			}
			if g := toJSON(t, got); g != tt.want {
				t.Errorf("got %s; want %s", g, tt.want)
			}
			// Marshal of the same JSON gives the same bytes.
			if b2 := mustMarshal(t, ConfigMapList, toJSON(t, got)); !bytes.Equal(b, b2) {
				t.Errorf("AppendList % x\nMarshal    % x", b, b2)
			}
		})
	}
	if got := AppendList(nil, ListMeta{}, nil); !bytes.Equal(got, []byte{0x0a, 0x00}) {
		t.Errorf("empty list = % x; want 0a 00", got)
	}
}

func TestWatchFrame(t *testing.T) {
	tm := TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	object := []byte{0x0a, 0x02, 0x0a, 0x00}
	got := AppendWatchFrame(nil, "ADDED", tm, object)
	// The worked example in AppendWatchFrame's doc comment.
	want := []byte{0x00, 0x00, 0x00, 0x2a, 0x0a, 0x05}
	want = append(want, "ADDED"...)
	want = append(want, 0x12, 0x21, 0x0a, 0x1f)
	want = append(want, "k8s\x00"...)
	want = append(want, 0x0a, 0x0f, 0x0a, 0x02, 'v', '1', 0x12, 0x09)
	want = append(want, "ConfigMap"...)
	want = append(want, 0x12, 0x04, 0x0a, 0x02, 0x0a, 0x00, 0x1a, 0x00, 0x22, 0x00)
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendWatchFrame:\ngot  % x\nwant % x", got, want)
	}
	// The same frame from the parts.
	parts := AppendFrame(nil, AppendWatchEvent(nil, "ADDED", AppendEnvelope(nil, tm, object)))
	if !bytes.Equal(parts, got) {
		t.Errorf("from parts:\ngot  % x\nwant % x", parts, got)
	}
	// The WatchEvent descriptor reads the event.
	ev, err := Unmarshal(WatchEvent, got[4:])
	if err == nil || !errors.Is(err, ErrInvalid) {
		t.Errorf("WatchEvent object is protobuf, not JSON: Unmarshal err = %v", err)
	}
	_ = ev

	stream := AppendWatchFrame(got, "DELETED", TypeMeta{APIVersion: "v1", Kind: "Namespace"}, nil)
	f1, rest, err := DecodeWatchFrame(stream)
	if err != nil || f1.Type != "ADDED" || f1.TypeMeta != tm || !bytes.Equal(f1.Object, object) {
		t.Fatalf("frame 1 = %+v, %v", f1, err)
	}
	f2, rest, err := DecodeWatchFrame(rest)
	if err != nil || f2.Type != "DELETED" || f2.TypeMeta.Kind != "Namespace" || len(f2.Object) != 0 || len(rest) != 0 {
		t.Fatalf("frame 2 = %+v, rest %d, %v", f2, len(rest), err)
	}
	for _, bad := range [][]byte{{0, 0}, {0, 0, 0, 9, 1}, {0, 0, 0, 2, 0x0a, 0x05}, AppendFrame(nil, AppendWatchEvent(nil, "ADDED", []byte("{}")))} {
		if _, _, err := DecodeWatchFrame(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("DecodeWatchFrame(% x) = %v; want ErrInvalid", bad, err)
		}
	}
}

func TestConcurrentTables(t *testing.T) {
	// Tables are built once, lazily; many goroutines may race to build them.
	p3, _ := testMessages(t)
	in := obj(t, `{"sel":{"matchExpressions":[{"key":"k"}]},"time":"2026-11-23T07:38:04Z"}`)
	done := make(chan error)
	for range 8 {
		go func() {
			b, err := Marshal(p3, in)
			if err == nil {
				_, err = Unmarshal(p3, b)
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestDescriptors(t *testing.T) {
	for _, md := range []protoreflect.MessageDescriptor{ObjectMeta, Status, DeleteOptions, PartialObjectMetadata, PartialObjectMetadataList, WatchEvent, Namespace, NamespaceList, ConfigMap, ConfigMapList,
		Role, RoleList, ClusterRole, ClusterRoleList, RoleBinding, RoleBindingList, ClusterRoleBinding, ClusterRoleBindingList,
		SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview, LocalSubjectAccessReview,
		SelfSubjectReview, TokenReview, TokenRequest} {
		if md == nil {
			t.Fatal("nil descriptor")
		}
	}
	if ConfigMap.FullName() != "k8s.io.api.core.v1.ConfigMap" {
		t.Errorf("ConfigMap = %s", ConfigMap.FullName())
	}
	if !reflect.DeepEqual(ConfigMap.Fields().ByName("immutable").HasOptionalKeyword(), true) {
		t.Error("ConfigMap.immutable is not optional")
	}
}

func TestLargeNested(t *testing.T) {
	// Items past 16 KiB take 3-byte length prefixes, written after the fact.
	big := benchConfigMap(100 << 10)
	list := map[string]any{"metadata": map[string]any{"resourceVersion": "1"}, "items": []any{big, map[string]any{"metadata": map[string]any{"name": "small"}}, big}}
	b, err := Marshal(ConfigMapList, list)
	if err != nil {
		t.Fatal(err)
	}
	item, err := Marshal(ConfigMap, big)
	if err != nil {
		t.Fatal(err)
	}
	small, _ := Marshal(ConfigMap, map[string]any{"metadata": map[string]any{"name": "small"}})
	rv := "1"
	if want := AppendList(nil, ListMeta{ResourceVersion: rv}, [][]byte{item, small, item}); !bytes.Equal(b, want) {
		t.Fatalf("Marshal of the list differs from AppendList of its items")
	}
	got, err := Unmarshal(ConfigMapList, b)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := toJSON(t, got), toJSON(t, list); g != w {
		t.Errorf("round trip differs (%d vs %d bytes of JSON)", len(g), len(w))
	}
}

// MarshalEnvelope's body is AppendEnvelope of Marshal's bytes, and its raw
// the message within it, for messages whose length takes one to three
// varint bytes.
func TestMarshalEnvelope(t *testing.T) {
	for _, size := range []int{0, 100, 1 << 10, 200 << 10} {
		cm := benchConfigMap(size)
		if size == 0 {
			cm = map[string]any{}
		}
		for _, tm := range []TypeMeta{{APIVersion: "v1", Kind: "ConfigMap"}, {APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, {}} {
			want, err := Marshal(ConfigMap, cm)
			if err != nil {
				t.Fatal(err)
			}
			body, raw, err := MarshalEnvelope(ConfigMap, tm, cm)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(raw, want) {
				t.Errorf("%d bytes, %v: raw is not Marshal's bytes", size, tm)
			}
			if wantBody := AppendEnvelope(nil, tm, want); !bytes.Equal(body, wantBody) {
				t.Errorf("%d bytes, %v: body\ngot  % x\nwant % x", size, tm, body[:min(len(body), 40)], wantBody[:min(len(wantBody), 40)])
			}
			if _, r, err := DecodeEnvelope(body); err != nil || len(r) != len(raw) || (len(r) > 0 && &r[0] != &raw[0]) || (raw == nil) != (want == nil) {
				t.Errorf("%d bytes, %v: raw is not the envelope's raw field", size, tm)
			}
		}
	}
	if _, _, err := MarshalEnvelope(ConfigMap, TypeMeta{}, map[string]any{"data": "x"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a bad object: got %v; want ErrInvalid", err)
	}
}

// Marshal visits an object's keys rather than its message's fields when
// the object has few (appendSparse): the same bytes and errors either way.
func TestMarshalSparseAsDense(t *testing.T) {
	for _, tt := range []struct {
		message, obj string
	}{
		{"k8s.io.api.core.v1.PodSpec", `{"containers":[{"name":"app","image":"nginx:1.27"}],"restartPolicy":"Always","unknown":1}`},
		{"k8s.io.api.core.v1.Container", `{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80,"protocol":"TCP"}]}`},
		{"k8s.io.api.core.v1.Container", `{"name":"app","image":3}`},
		{"k8s.io.api.core.v1.Container", `{"name":"app","image":"x","ports":[{"containerPort":"eighty"}]}`},
		{"k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", `{"name":"a","namespace":"b","labels":{"app":"web"},"generation":1}`},
		{"k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", `{}`},
		{"k8s.io.api.apps.v1.DeploymentSpec", `{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`},
	} {
		d, err := Files.FindDescriptorByName(protoreflect.FullName(tt.message))
		if err != nil {
			t.Fatal(err)
		}
		m := table(d.(protoreflect.MessageDescriptor)).built()
		if m.byName == nil {
			t.Fatalf("%s: no byName index", tt.message)
		}
		var obj map[string]any
		dec := json.NewDecoder(strings.NewReader(tt.obj))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil {
			t.Fatal(err)
		}
		dense, derr := m.appendDense(nil, obj, 0)
		sparse, serr := m.appendSparse(nil, obj, 0)
		if !bytes.Equal(dense, sparse) || (derr == nil) != (serr == nil) || (derr != nil && derr.Error() != serr.Error()) {
			t.Errorf("%s %s:\ndense  % x, %v\nsparse % x, %v", tt.message, tt.obj, dense, derr, sparse, serr)
		}
		if derr == nil && len(dense) == 0 && len(obj) > 0 {
			t.Errorf("%s %s: nothing written", tt.message, tt.obj)
		}
	}
	// A message with an inline field reads its keys in the parent's object:
	// it is never sparse.
	d, err := Files.FindDescriptorByName("k8s.io.api.core.v1.Volume")
	if err != nil {
		t.Fatal(err)
	}
	if table(d.(protoreflect.MessageDescriptor)).built().byName != nil {
		t.Errorf("Volume (inline volumeSource) has a byName index")
	}
}
