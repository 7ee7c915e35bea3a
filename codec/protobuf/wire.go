package protobuf

import (
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Magic starts every protobuf body Kubernetes sends or accepts
// ("application/vnd.kubernetes.protobuf"); a runtime.Unknown follows it.
const Magic = "k8s\x00"

var (
	// ErrInvalid: bytes that are not a well-formed message, envelope or
	// frame, or a JSON value that does not fit its field. Every error this
	// package returns wraps it.
	ErrInvalid = errors.New("protobuf: invalid")
	// ErrNoMagic: a body that does not start with [Magic]. It wraps
	// [ErrInvalid], so errors.Is(err, ErrInvalid) holds for it too.
	ErrNoMagic = fmt.Errorf("%w: body does not start with the protobuf magic %q", ErrInvalid, Magic)
)

// Error is a decode or encode error at a place in the object. Path is the
// JSON path of the field ("data.a", "metadata.ownerReferences[0].uid"),
// empty for the message itself; Msg says what is wrong. Both are written for
// the client. It unwraps to [ErrInvalid].
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Unwrap returns [ErrInvalid].
func (e *Error) Unwrap() error { return ErrInvalid }

// under puts seg (a field name, or "[i]") in front of the error's path.
func (e *Error) under(seg string) *Error {
	switch {
	case e.Path == "":
		e.Path = seg
	case e.Path[0] == '[':
		e.Path = seg + e.Path
	default:
		e.Path = seg + "." + e.Path
	}
	return e
}

func invalidf(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// TypeMeta is the apiVersion and kind an envelope names.
type TypeMeta struct {
	APIVersion, Kind string
}

// Field numbers of the envelope messages.
const (
	unknownTypeMeta        = 1 // runtime.Unknown
	unknownRaw             = 2
	unknownContentEncoding = 3
	unknownContentType     = 4
	typeMetaAPIVersion     = 1 // runtime.TypeMeta
	typeMetaKind           = 2
	listMetaRV             = 2 // meta.v1.ListMeta
	listMetaContinue       = 3
	listMetaRemaining      = 4
	eventType              = 1 // meta.v1.WatchEvent
	eventObject            = 2
	rawExtensionRaw        = 1 // runtime.RawExtension
)

// AppendEnvelope appends a protobuf body: [Magic], then the runtime.Unknown
// that [AppendUnknown] writes. raw is the object's message bytes.
func AppendEnvelope(dst []byte, tm TypeMeta, raw []byte) []byte {
	dst = grow(dst, len(Magic)+sizeUnknown(tm, raw))
	return AppendUnknown(append(dst, Magic...), tm, raw)
}

// AppendUnknown appends runtime.Unknown{typeMeta: tm, raw: raw} without the
// magic, byte for byte as apimachinery writes it: typeMeta's two strings and
// the two empty content fields are always present, raw when non-nil.
func AppendUnknown(dst []byte, tm TypeMeta, raw []byte) []byte {
	dst = grow(dst, sizeUnknown(tm, raw))
	dst = protowire.AppendTag(dst, unknownTypeMeta, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(sizeTypeMeta(tm)))
	dst = appendString(dst, typeMetaAPIVersion, tm.APIVersion)
	dst = appendString(dst, typeMetaKind, tm.Kind)
	if raw != nil {
		dst = appendBytes(dst, unknownRaw, raw)
	}
	dst = appendString(dst, unknownContentEncoding, "")
	return appendString(dst, unknownContentType, "")
}

func sizeTypeMeta(tm TypeMeta) int {
	return sizeString(len(tm.APIVersion)) + sizeString(len(tm.Kind))
}

func sizeUnknown(tm TypeMeta, raw []byte) int {
	n := sizeString(sizeTypeMeta(tm)) + 2*sizeString(0)
	if raw != nil {
		n += sizeString(len(raw))
	}
	return n
}

// sizeString is the size of a length-delimited field of n bytes with a
// one-byte tag (field numbers below 16).
func sizeString(n int) int { return 1 + protowire.SizeVarint(uint64(n)) + n }

func appendString(dst []byte, num protowire.Number, s string) []byte {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	return protowire.AppendString(dst, s)
}

func appendBytes(dst []byte, num protowire.Number, b []byte) []byte {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	return protowire.AppendBytes(dst, b)
}

func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		dst = append(dst[:len(dst):len(dst)], make([]byte, n)...)[:len(dst)]
	}
	return dst
}

// DecodeEnvelope reads a protobuf body: [Magic] and a runtime.Unknown. It
// returns the Unknown's TypeMeta and raw message bytes; raw aliases b. A body
// without the magic is [ErrNoMagic]; contentEncoding and contentType are
// ignored, as apimachinery does.
func DecodeEnvelope(b []byte) (TypeMeta, []byte, error) {
	if len(b) < len(Magic) || string(b[:len(Magic)]) != Magic {
		return TypeMeta{}, nil, ErrNoMagic
	}
	var tm TypeMeta
	var raw []byte
	err := walk(b[len(Magic):], func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case unknownTypeMeta:
			return walk(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
				switch {
				case typ != protowire.BytesType:
				case num == typeMetaAPIVersion:
					tm.APIVersion = string(v)
				case num == typeMetaKind:
					tm.Kind = string(v)
				}
				return nil
			})
		case unknownRaw:
			raw = v
		}
		return nil
	})
	if err != nil {
		return TypeMeta{}, nil, err
	}
	return tm, raw, nil
}

// walk calls fn for each field of the message b; v is the field's payload
// for length-delimited fields and nil otherwise.
func walk(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireError(n)
		}
		b = b[n:]
		var v []byte
		if typ == protowire.BytesType {
			v, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return wireError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v); err != nil {
			return err
		}
	}
	return nil
}

func wireError(n int) *Error {
	return &Error{Msg: "malformed protobuf: " + protowire.ParseError(n).Error()}
}

// ListMeta is the list metadata [AppendList] writes.
type ListMeta struct {
	ResourceVersion, Continue string
	RemainingItemCount        *int64
}

// AppendList appends a Kubernetes list message (ConfigMapList and the like):
// field 1 the ListMeta, always present, field 2 one entry per item. Each item
// is already-encoded message bytes without an envelope, copied as they are:
// a list response is assembled from per-item cached encodings with no
// re-encoding. Wrap the result with [AppendEnvelope] and the list's kind.
func AppendList(dst []byte, meta ListMeta, items [][]byte) []byte {
	mn := 0
	if meta.ResourceVersion != "" {
		mn += sizeString(len(meta.ResourceVersion))
	}
	if meta.Continue != "" {
		mn += sizeString(len(meta.Continue))
	}
	if meta.RemainingItemCount != nil {
		mn += 1 + protowire.SizeVarint(uint64(*meta.RemainingItemCount))
	}
	n := sizeString(mn)
	for _, it := range items {
		n += sizeString(len(it))
	}
	dst = grow(dst, n)
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(mn))
	if meta.ResourceVersion != "" {
		dst = appendString(dst, listMetaRV, meta.ResourceVersion)
	}
	if meta.Continue != "" {
		dst = appendString(dst, listMetaContinue, meta.Continue)
	}
	if meta.RemainingItemCount != nil {
		dst = protowire.AppendTag(dst, listMetaRemaining, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(*meta.RemainingItemCount))
	}
	for _, it := range items {
		dst = appendBytes(dst, 2, it)
	}
	return dst
}

// AppendWatchEvent appends meta.v1.WatchEvent{type: typ, object:
// RawExtension{raw: object}} as apimachinery writes it (type always present).
// For a protobuf watch stream, object is the object's full envelope (magic
// included); see [AppendWatchFrame].
func AppendWatchEvent(dst []byte, typ string, object []byte) []byte {
	dst = grow(dst, sizeWatchEvent(len(typ), len(object)))
	dst = appendString(dst, eventType, typ)
	dst = protowire.AppendTag(dst, eventObject, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(sizeString(len(object))))
	return appendBytes(dst, rawExtensionRaw, object)
}

func sizeWatchEvent(typ, object int) int {
	return sizeString(typ) + sizeString(sizeString(object))
}

// AppendFrame appends one frame of a length-delimited stream: the length of
// frame as a 4-byte big-endian integer, then frame.
func AppendFrame(dst []byte, frame []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(frame)))
	return append(dst, frame...)
}

// AppendWatchFrame appends one whole event of an
// "application/vnd.kubernetes.protobuf;stream=watch" response, in one pass:
// object is the object's message bytes (no envelope) and tm its type.
//
// The layout is what kube-apiserver writes (k8s.io/apiserver
// pkg/endpoints/handlers/response.go watchEncoder.doEncode, with the encoders
// chosen in handlers/watch.go serveWatchHandler and apimachinery's
// serializer/codec_factory.go): the embedded encoder is the protobuf
// Serializer (magic + Unknown); the event encoder is the stream serializer,
// protobuf.RawSerializer, which writes the WatchEvent message with no Unknown
// and no magic; the framer is the 4-byte big-endian length prefix
// (apimachinery util/framer). So a frame is
//
//	uint32 BE length of the rest
//	WatchEvent {
//	  1: type   "ADDED"
//	  2: object RawExtension {
//	       1: raw  "k8s\x00" + Unknown {
//	                 1: typeMeta {1: apiVersion "v1", 2: kind "ConfigMap"}
//	                 2: raw <ConfigMap message bytes>
//	                 3: contentEncoding ""
//	                 4: contentType ""
//	               }
//	     }
//	}
//
// For a ConfigMap whose message bytes are the 4 bytes 0a 02 0a 00
// (metadata {name: ""}), "ADDED" and TypeMeta{"v1", "ConfigMap"}:
//
//	00 00 00 2a                                     length 42
//	0a 05 "ADDED"                                   type
//	12 21 0a 1f                                     object, raw (31 bytes)
//	  "k8s\x00"                                     magic
//	  0a 0f 0a 02 "v1" 12 09 "ConfigMap"            typeMeta
//	  12 04 0a 02 0a 00                             raw
//	  1a 00 22 00                                   contentEncoding, contentType
//
// client-go reads it with the length-delimited frame reader, decodes the
// WatchEvent with the raw serializer, then object.raw with the protobuf
// serializer (client-go rest/watch/decoder.go).
func AppendWatchFrame(dst []byte, typ string, tm TypeMeta, object []byte) []byte {
	env := len(Magic) + sizeUnknown(tm, object)
	n := sizeWatchEvent(len(typ), env)
	dst = grow(dst, 4+n)
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = appendString(dst, eventType, typ)
	dst = protowire.AppendTag(dst, eventObject, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(sizeString(env)))
	dst = protowire.AppendTag(dst, rawExtensionRaw, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(env))
	return AppendEnvelope(dst, tm, object)
}

// WatchFrame is one decoded event of a protobuf watch stream.
type WatchFrame struct {
	Type     string   // "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
	TypeMeta TypeMeta // the object's type, from its envelope
	Object   []byte   // the object's message bytes; aliases the input
}

// DecodeWatchFrame reads the first frame of b as [AppendWatchFrame] writes
// it and returns the event and the bytes after the frame.
func DecodeWatchFrame(b []byte) (WatchFrame, []byte, error) {
	if len(b) < 4 {
		return WatchFrame{}, nil, &Error{Msg: "watch frame: short length prefix"}
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return WatchFrame{}, nil, &Error{Msg: fmt.Sprintf("watch frame: length %d exceeds the %d bytes left", n, len(b)-4)}
	}
	frame, rest := b[4:4+n], b[4+n:]
	var ev WatchFrame
	var env []byte
	err := walk(frame, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case eventType:
			ev.Type = string(v)
		case eventObject:
			return walk(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
				if num == rawExtensionRaw && typ == protowire.BytesType {
					env = v
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return WatchFrame{}, nil, err
	}
	tm, raw, err := DecodeEnvelope(env)
	if err != nil {
		return WatchFrame{}, nil, fmt.Errorf("watch frame object: %w", err)
	}
	ev.TypeMeta, ev.Object = tm, raw
	return ev, rest, nil
}
