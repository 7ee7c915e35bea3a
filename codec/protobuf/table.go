package protobuf

import (
	"slices"
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
	stringList          // a named []string (ExtraValue): an array of strings, repeated string items = 1
)

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
}

// inlined are the message fields whose JSON form is inlined in their
// parent's object: Go structs embedded with `json:",inline"` that gogo
// writes as a field of their own (always, even empty).
var inlined = map[protoreflect.FullName]bool{
	"k8s.io.api.admissionregistration.v1.RuleWithOperations.rule": true,
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
}

// field is one field of a message table.
type field struct {
	name  string // JSON key: the proto field name
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
	packed   bool     // repeated scalars: Marshal packs them
	inline   bool     // a message whose fields are its parent's JSON keys (inlined)
	msg      *message // message kinds and map values of message kind
	enum     protoreflect.EnumDescriptor
	key, val *field // map entries
}

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
	f := &field{
		name:  string(fd.Name()),
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
	f.inline = fd.Kind() == protoreflect.MessageKind && !f.list && inlined[fd.FullName()]
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
