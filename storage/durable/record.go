package durable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/kapi-dev/kapi/storage"
)

// The bytes kept in bbolt. Every value is a sequence of uvarint-prefixed
// fields, so a record is read without a schema:
//
//	object:  key, uid, value, #labels, (k, v)…, #fields, (k, v)…
//	state:   revision, object      (bucket "state", under the object's key)
//	change:  op (1 put, 2 delete), then the object put, or the key deleted
//	         (bucket "log", under the change's revision, 8 bytes big-endian:
//	         the revision is the log's key, not in the record)
//
// Maps are written in key order, so one state always encodes to the
// same bytes.

const (
	opPut    = 1
	opDelete = 2
)

// errRecord is the error of a record that does not decode.
var errRecord = errors.New("bad record")

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendMap(b []byte, m map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b = appendString(b, k)
		b = appendString(b, m[k])
	}
	return b
}

// appendObject encodes o but its revision.
func appendObject(b []byte, o storage.Object) []byte {
	b = appendString(b, o.Key)
	b = appendString(b, o.UID)
	b = binary.AppendUvarint(b, uint64(len(o.Value)))
	b = append(b, o.Value...)
	b = appendMap(b, o.Labels)
	return appendMap(b, o.Fields)
}

// encodeChange encodes the change a write makes: o stored, or key deleted.
func encodeChange(op byte, o storage.Object) []byte {
	if op == opDelete {
		return appendString([]byte{opDelete}, o.Key)
	}
	b := make([]byte, 1, 64+len(o.Key)+len(o.UID)+len(o.Value))
	b[0] = opPut
	return appendObject(b, o)
}

// decoder reads fields off a record; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: truncated number", errRecord)
		return 0
	}
	if n != len(binary.AppendUvarint(nil, v)) {
		d.err = fmt.Errorf("%w: number not in its shortest form", errRecord)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes returns the next length-prefixed field, copied: bbolt's bytes
// live only as long as the transaction.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("%w: field of %d bytes in %d", errRecord, n, len(d.b))
		return nil
	}
	v := slices.Clone(d.b[:n])
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("%w: field of %d bytes in %d", errRecord, n, len(d.b))
		return ""
	}
	v := string(d.b[:n])
	d.b = d.b[n:]
	return v
}

func (d *decoder) stringMap() map[string]string {
	n := d.uvarint()
	if d.err != nil || n == 0 {
		return nil
	}
	if n > uint64(len(d.b))/2 { // each entry takes two bytes at least
		d.err = fmt.Errorf("%w: %d map entries in %d bytes", errRecord, n, len(d.b))
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := d.string()
		m[k] = d.string()
	}
	if d.err == nil && len(m) != int(n) {
		d.err = fmt.Errorf("%w: repeated map key", errRecord)
	}
	return m
}

func (d *decoder) object() storage.Object {
	var o storage.Object
	o.Key = d.string()
	o.UID = d.string()
	o.Value = d.bytes()
	o.Labels = d.stringMap()
	o.Fields = d.stringMap()
	return o
}

// stateRecord is the record of o in the state bucket, from the body of
// its change record (rec[1:]).
func stateRecord(rev uint64, body []byte) []byte {
	b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(body)), rev)
	return append(b, body...)
}

// decodeState decodes a whole state record.
func decodeState(b []byte) (storage.Object, error) {
	d := decoder{b: b}
	rev := d.uvarint()
	o := d.object()
	o.Revision = rev
	return o, d.end()
}

// decodeChange decodes a whole change record.
func decodeChange(b []byte) (op byte, o storage.Object, err error) {
	if len(b) == 0 {
		return 0, o, fmt.Errorf("%w: empty change", errRecord)
	}
	d := decoder{b: b[1:]}
	switch op = b[0]; op {
	case opPut:
		o = d.object()
	case opDelete:
		o.Key = d.string()
	default:
		return 0, o, fmt.Errorf("%w: unknown operation %d", errRecord, b[0])
	}
	return op, o, d.end()
}

func (d *decoder) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errRecord, len(d.b))
	}
	return d.err
}
