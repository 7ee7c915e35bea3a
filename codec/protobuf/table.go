package protobuf

import (
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// special names the messages whose JSON form is not an object.
type special uint8

const (
	plain       special = iota
	timeMsg             // meta.v1.Time: RFC 3339 seconds string; empty message = zero = null
	microTime           // meta.v1.MicroTime: RFC 3339 with microseconds
	duration            // meta.v1.Duration: Go duration string
	fieldsV1            // meta.v1.FieldsV1: JSON value kept as JSON bytes
	rawExt              // runtime.RawExtension: JSON value kept as JSON bytes
	quantity            // resource.Quantity: string
	intOrString         // intstr.IntOrString: number or string
	stringList          // a named []string (ExtraValue, Verbs): an array of strings, repeated string items = 1

	// The unions: a JSON value of one of two types, each written as one of
	// the message's fields (apiextensions.k8s.io/v1's schema types).
	orArray   // JSONSchemaPropsOrArray: a schema (field 1) or an array of schemas (field 2)
	orBool    // JSONSchemaPropsOrBool: a bool (field 1) or a schema (field 2; field 1 true)
	orStrings // JSONSchemaPropsOrStringArray: a schema (field 1) or an array of strings (field 2)
)

// union reports whether s is one of the unions.
func (s special) union() bool { return s == orArray || s == orBool || s == orStrings }

const apiextV1 = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1."

var specials = map[protoreflect.FullName]special{
	metaV1 + "Time":      timeMsg,
	metaV1 + "MicroTime": microTime,
	metaV1 + "Duration":  duration,
	metaV1 + "FieldsV1":  fieldsV1,
	"k8s.io.apimachinery.pkg.runtime.RawExtension":    rawExt,
	"k8s.io.apimachinery.pkg.api.resource.Quantity":   quantity,
	"k8s.io.apimachinery.pkg.util.intstr.IntOrString": intOrString,
	// Go's named []string types, which gogo encodes as a message of one
	// repeated string (field 1, "items") and encoding/json as an array.
	"k8s.io.api.authentication.v1.ExtraValue":       stringList,
	"k8s.io.api.authentication.v1.AttestationValue": stringList,
	"k8s.io.api.authorization.v1.ExtraValue":        stringList,
	metaV1 + "Verbs":                                stringList, // APIResource.verbs
	"k8s.io.api.certificates.v1.ExtraValue":         stringList,
	// apiextensions' JSON holds any JSON value as its bytes, as RawExtension.
	apiextV1 + "JSON":                         rawExt,
	apiextV1 + "JSONSchemaPropsOrArray":       orArray,
	apiextV1 + "JSONSchemaPropsOrBool":        orBool,
	apiextV1 + "JSONSchemaPropsOrStringArray": orStrings,
}

// message is the precomputed table of one message descriptor: built once,
// on first use, and shared by every Marshal and Unmarshal of that message.
type message struct {
	once    sync.Once
	md      protoreflect.MessageDescriptor
	special special
	fields  []*field         // by field number, the order Marshal writes
	byNum   []*field         // index = field number, for numbers below 64
	bigNum  map[int32]*field // the rest
	// byName indexes fields by JSON key (nil when a field is inline,
	// whose keys are the parent's): Marshal looks up the keys an object
	// has rather than every field, when it has few (appendObject).
	byName map[string]int
}

// field is one field of a message table.
type field struct {
	name  string // JSON key: the json_name where the .proto gives one ("$ref"), else the proto field name
	num   protowire.Number
	kind  protoreflect.Kind
	wire  protowire.Type // wire type of one (unpacked) value
	list  bool
	isMap bool
	// encZero: Marshal writes a zero value the JSON has (proto3 optional,
	// proto2). decZero: Unmarshal writes a zero value it reads (proto3
	// optional only).
	encZero, decZero bool
	// nullable: a message field with explicit presence (a Go pointer); a
	// JSON null there is "absent", and a special message that reads as null
	// is left out.
	nullable bool
	packed   bool // repeated scalars: Marshal packs them
	// inline: a message field whose own fields are the parent's JSON keys,
	// as Go inlines an embedded struct (Volume.VolumeSource): its
	// json_name starts with [InlinePrefix].
	inline   bool
	msg      *message // message kinds and map values of message kind
	enum     protoreflect.EnumDescriptor
	key, val *field // map entries
}

// InlinePrefix starts the json_name of a message field whose fields are
// its parent's JSON keys, as Go's encoding/json inlines an embedded struct:
//
//	message Volume {
//	  optional string name = 1;
//	  VolumeSource volumeSource = 2 [json_name = "-inline-volumeSource"];
//	}
//
//	{"name": "data", "emptyDir": {}}  <->  0a 04 "data" 12 02 (field 2 {emptyDir (field 2) {}})
//
// Marshal writes the field (always, as Go's generated code does) from the
// parent's object; Unmarshal merges its fields into the parent's object.
const InlinePrefix = "-inline-"

var tables sync.Map // protoreflect.MessageDescriptor -> *message

// table returns the (possibly not yet built) table of md.
func table(md protoreflect.MessageDescriptor) *message {
	if m, ok := tables.Load(md); ok {
		return m.(*message)
	}
	m, _ := tables.LoadOrStore(md, &message{md: md, special: specials[md.FullName()]})
	return m.(*message)
}

// built returns m with its fields filled in. Tables of message-typed fields
// are only looked up here, so recursive messages build one level at a time.
func (m *message) built() *message {
	m.once.Do(m.build)
	return m
}

func (m *message) build() {
	fds := m.md.Fields()
	for i := range fds.Len() {
		f := newField(fds.Get(i))
		if f == nil {
			continue
		}
		m.fields = append(m.fields, f)
		if f.num < 64 {
			if int(f.num) >= len(m.byNum) {
				m.byNum = slices.Grow(m.byNum, int(f.num)+1-len(m.byNum))[:f.num+1]
			}
			m.byNum[f.num] = f
		} else {
			if m.bigNum == nil {
				m.bigNum = map[int32]*field{}
			}
			m.bigNum[int32(f.num)] = f
		}
	}
	slices.SortFunc(m.fields, func(a, b *field) int { return int(a.num) - int(b.num) })
	m.byName = make(map[string]int, len(m.fields))
	for i, f := range m.fields {
		if f.inline {
			m.byName = nil
			break
		}
		m.byName[f.name] = i
	}
}

func (m *message) field(num protowire.Number) *field {
	if num >= 0 && int(num) < len(m.byNum) {
		return m.byNum[num]
	}
	return m.bigNum[int32(num)]
}

// newField describes fd, or returns nil for fields kapi does not map to JSON
// (groups).
func newField(fd protoreflect.FieldDescriptor) *field {
	if fd.Kind() == protoreflect.GroupKind {
		return nil
	}
	name := string(fd.Name())
	if j := fd.JSONName(); fd.HasJSONName() && !strings.HasPrefix(j, InlinePrefix) {
		name = j
	}
	f := &field{
		name:  name,
		num:   fd.Number(),
		kind:  fd.Kind(),
		wire:  wireType(fd.Kind()),
		list:  fd.IsList(),
		isMap: fd.IsMap(),
	}
	proto2 := fd.Syntax() == protoreflect.Proto2
	f.decZero = !proto2 && fd.HasOptionalKeyword()
	f.encZero = proto2 || f.decZero
	f.nullable = fd.HasOptionalKeyword()
	f.packed = f.list && fd.IsPacked()
	f.inline = fd.Kind() == protoreflect.MessageKind && !f.list && !f.isMap && strings.HasPrefix(fd.JSONName(), InlinePrefix)
	switch fd.Kind() {
	case protoreflect.MessageKind:
		f.msg = table(fd.Message())
	case protoreflect.EnumKind:
		f.enum = fd.Enum()
	}
	if f.isMap {
		f.key = newField(fd.MapKey())
		f.val = newField(fd.MapValue())
		f.key.encZero, f.val.encZero = true, true
		f.key.decZero, f.val.decZero = true, true
	}
	return f
}

func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	}
	return protowire.VarintType
}
