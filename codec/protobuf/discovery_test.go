package protobuf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// discoveryDocs are the discovery golden files in testdata/discovery: NAME.json
// and NAME.pb are the JSON and protobuf bytes Kubernetes' own code
// (k8s.io/apimachinery and k8s.io/api v0.37.2) makes of one document, written
// by testdata/kubediscovery (`go run .` there), which also checks that
// kube's code decodes kapi's bytes to the same Go value. Most are
// kube-apiserver's own documents (k8s.io/kubernetes api/discovery). A
// function: the descriptors are set by init, after package variables.
func discoveryDocs() []discoveryDoc {
	return []discoveryDoc{
		{"api", APIVersions, true},                                  // /api, with serverAddressByClientCIDRs
		{"apis", APIGroupList, true},                                // /apis
		{"apis_apps", APIGroup, true},                               // /apis/apps
		{"apis_autoscaling", APIGroup, true},                        // /apis/autoscaling: two versions
		{"apis_group_cidrs", APIGroup, true},                        // an APIGroup with serverAddressByClientCIDRs, one of them empty
		{"api_v1", APIResourceList, false},                          // /api/v1: namespaced true and false, shortNames, categories, storageVersionHash
		{"apis_apps_v1", APIResourceList, false},                    // /apis/apps/v1: subresources with group and version
		{"api_resources_edge", APIResourceList, false},              // verbs null and [""], empty singularName and kind
		{"aggregated_v2", APIGroupDiscoveryList, false},             // kube-apiserver's aggregated document
		{"aggregated_accepted_types", APIGroupDiscoveryList, false}, // acceptedTypes, Stale, a version without resources
	}
}

type discoveryDoc struct {
	name string
	md   protoreflect.MessageDescriptor
	// sameBytes: kapi's bytes are kube's byte for byte. Elsewhere kube
	// also writes the zero values of fields its JSON omits when empty
	// (APIResource.group, ObjectMeta's), which kapi leaves out; both read
	// back the same.
	sameBytes bool
}

func readDiscoveryDoc(t testing.TB, name string) (js map[string]any, pb []byte) {
	t.Helper()
	dir := filepath.Join("testdata", "discovery")
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if pb, err = os.ReadFile(filepath.Join(dir, name+".pb")); err != nil {
		t.Fatal(err)
	}
	js = obj(t, string(b))
	// TypeMeta travels in the envelope, not in the message.
	delete(js, "kind")
	delete(js, "apiVersion")
	return js, pb
}

// The discovery documents against Kubernetes' generated code: kapi reads
// kube's bytes as kube's JSON, writes kube's JSON as bytes that hold the
// same message as kube's (byte for byte where sameBytes), and JSON ->
// Marshal -> Unmarshal gives the JSON back.
func TestDiscoveryDocumentsAgainstKube(t *testing.T) {
	for _, tt := range discoveryDocs() {
		t.Run(tt.name, func(t *testing.T) {
			want, kube := readDiscoveryDoc(t, tt.name)
			wantJSON := toJSON(t, dropNulls(copyJSON(t, want)))

			got, err := Unmarshal(tt.md, kube)
			if err != nil {
				t.Fatalf("Unmarshal of kube's bytes: %v", err)
			}
			if g := toJSON(t, dropNulls(got)); g != wantJSON {
				t.Errorf("Unmarshal of kube's bytes:\ngot  %s\nwant %s", g, wantJSON)
			}

			b, err := Marshal(tt.md, want)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if tt.sameBytes && !bytes.Equal(b, kube) {
				t.Errorf("Marshal:\ngot  % x\nwant % x (kube's)", b, kube)
			}
			if mine, theirs := dynamicMessage(t, tt.md, b), dynamicMessage(t, tt.md, kube); !proto.Equal(mine, theirs) {
				t.Errorf("Marshal writes another message than kube's:\ngot  %v\nwant %v", mine, theirs)
			}

			back, err := Unmarshal(tt.md, b)
			if err != nil {
				t.Fatalf("Unmarshal of Marshal's bytes: %v", err)
			}
			if g := toJSON(t, dropNulls(back)); g != wantJSON {
				t.Errorf("round trip:\ngot  %s\nwant %s", g, wantJSON)
			}
		})
	}
}

// dynamicMessage parses b as md with the protobuf library itself, and
// clears the empty messages in fields that are Go values in kube's types
// (no optional keyword): kube's code writes those always (an empty
// creationTimestamp), and reads an empty one as it reads none. Two byte
// strings whose messages are then equal decode the same in kube's code,
// since md has kube's field numbers and marks kube's pointers optional.
func dynamicMessage(t *testing.T, md protoreflect.MessageDescriptor, b []byte) proto.Message {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatalf("proto.Unmarshal(% x): %v", b, err)
	}
	clearEmptyValues(m)
	return m
}

// clearEmptyValues clears, in m and the messages it holds, every message
// field without the optional keyword that holds an empty message, and
// reports whether m is empty then.
func clearEmptyValues(m protoreflect.Message) bool {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				clearEmptyValues(v.List().Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, e protoreflect.Value) bool {
				clearEmptyValues(e.Message())
				return true
			})
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			if clearEmptyValues(v.Message()) && !fd.HasOptionalKeyword() {
				m.Clear(fd)
			}
		}
		return true
	})
	empty := true
	m.Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool {
		empty = false
		return false
	})
	return empty
}

// dropNulls removes every key whose value is null from the objects in v:
// the documents' lists, Verbs and creationTimestamp are Go slices and a
// Time, which a JSON decoder reads the same from null as from nothing.
// kube's JSON says null where protobuf has nothing to say (a nil verbs),
// and leaves out what kapi reads as null (kube v1.37 omits a zero
// creationTimestamp, omitzero).
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				dropNulls(e)
			}
		}
	case []any:
		for _, e := range x {
			dropNulls(e)
		}
	}
	return v
}

func copyJSON(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	return obj(t, toJSON(t, v))
}

// APIResource.verbs is an optional Verbs message (Go's named []string)
// holding repeated items = 1, written as kube's code writes it: null is
// absent, [] an empty message; both read back as absent (Go's nil).
func TestDiscoveryVerbs(t *testing.T) {
	resource := mustDescriptor(t, "k8s.io.apimachinery.pkg.apis.meta.v1.APIResource")
	tests := []struct {
		in, want string // want: after Marshal then Unmarshal
		bytes    []byte
	}{
		// name (1) "a", verbs (4) {items "get", items "list"}
		{`{"name":"a","verbs":["get","list"]}`, `{"name":"a","verbs":["get","list"]}`, []byte{0x0a, 0x01, 'a', 0x22, 0x0b, 0x0a, 0x03, 'g', 'e', 't', 0x0a, 0x04, 'l', 'i', 's', 't'}},
		{`{"name":"a","verbs":null}`, `{"name":"a"}`, []byte{0x0a, 0x01, 'a'}},
		{`{"name":"a","verbs":[]}`, `{"name":"a"}`, []byte{0x0a, 0x01, 'a', 0x22, 0x00}},
		{`{"verbs":[""]}`, `{"verbs":[""]}`, []byte{0x22, 0x02, 0x0a, 0x00}},
		// namespaced is written when false (no omitempty in kube's JSON)
		{`{"namespaced":false,"group":"","storageVersionHash":""}`, `{"namespaced":false}`, []byte{0x10, 0x00}},
	}
	for _, tt := range tests {
		b, err := Marshal(resource, obj(t, tt.in))
		if err != nil {
			t.Fatalf("Marshal(%s): %v", tt.in, err)
		}
		if !bytes.Equal(b, tt.bytes) {
			t.Errorf("Marshal(%s): got % x; want % x", tt.in, b, tt.bytes)
		}
		got, err := Unmarshal(resource, b)
		if err != nil {
			t.Fatalf("Unmarshal(% x): %v", b, err)
		}
		if g := toJSON(t, got); g != tt.want {
			t.Errorf("Unmarshal(Marshal(%s)): got %s; want %s", tt.in, g, tt.want)
		}
	}
	if _, err := Marshal(resource, obj(t, `{"verbs":"get"}`)); err == nil {
		t.Error(`Marshal of "verbs": "get": got no error`)
	}
}

// Lists kube's JSON writes as null when empty ("versions", "groups",
// "resources", the aggregated "verbs") are absent in protobuf, for kube's
// code as for kapi's: they read back as absent, which a JSON decoder
// takes for the same nil slice.
func TestDiscoveryEmptyLists(t *testing.T) {
	tests := []struct {
		md       protoreflect.MessageDescriptor
		in, want string
	}{
		{APIVersions, `{"versions":null,"serverAddressByClientCIDRs":null}`, `{}`},
		{APIGroupList, `{"groups":[]}`, `{}`},
		{APIResourceList, `{"groupVersion":"v1","resources":null}`, `{"groupVersion":"v1"}`},
		{APIGroupDiscoveryList, `{"metadata":{},"items":[{"metadata":{"name":"g"},"versions":[{"version":"v1","resources":[{"resource":"r","scope":"Cluster","singularResource":"","verbs":null}]}]}]}`,
			`{"metadata":{},"items":[{"metadata":{"name":"g"},"versions":[{"version":"v1","resources":[{"resource":"r","scope":"Cluster","singularResource":""}]}]}]}`},
	}
	for _, tt := range tests {
		b, err := Marshal(tt.md, obj(t, tt.in))
		if err != nil {
			t.Fatalf("Marshal(%s): %v", tt.in, err)
		}
		got, err := Unmarshal(tt.md, b)
		if err != nil {
			t.Fatalf("Unmarshal(% x): %v", b, err)
		}
		if g, w := toJSON(t, got), toJSON(t, obj(t, tt.want)); g != w {
			t.Errorf("%s %s: got %s; want %s", tt.md.Name(), tt.in, g, w)
		}
	}
}

// FuzzUnmarshalDiscovery is FuzzUnmarshal for the discovery documents
// (kind picks the message), seeded with kube's own bytes.
func FuzzUnmarshalDiscovery(f *testing.F) {
	kinds := []protoreflect.MessageDescriptor{APIVersions, APIGroupList, APIGroup, APIResourceList, APIGroupDiscoveryList}
	for _, d := range discoveryDocs() {
		if d.name == "aggregated_v2" || d.name == "api_v1" || d.name == "apis" {
			continue // large: the smaller documents hold the same messages
		}
		_, pb := readDiscoveryDoc(f, d.name)
		for i, k := range kinds {
			if k == d.md {
				f.Add(uint8(i), pb)
			}
		}
	}
	f.Add(uint8(3), []byte{0x12, 0x04, 0x22, 0x02, 0x08, 0x01}) // verbs' items as a varint
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		fuzzRoundTrip(t, kinds[int(kind)%len(kinds)], b)
	})
}
