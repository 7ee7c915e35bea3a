package durable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/storage"
)

// The bytes kept in pebble. Every value is a sequence of uvarint-prefixed
// fields, so a record is read without a schema:
//
//	object:  key, uid, value, #labels, (k, v)…, #fields, (k, v)…
//	state:   revision, object      (key space "s", under the object's key)
//	change:  op (1 put, 2 delete), then the object put, or the key deleted
//	         (key space "l", under the change's revision, 8 bytes big-endian:
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
	in  *interner // nil: no map shared
}

// uvarintLen is the length of v's shortest encoding.
func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: truncated number", errRecord)
		return 0
	}
	if n != uvarintLen(v) {
		d.err = fmt.Errorf("%w: number not in its shortest form", errRecord)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// field returns the next length-prefixed field, in the record (not
// copied).
func (d *decoder) field() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("%w: field of %d bytes in %d", errRecord, n, len(d.b))
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// mapBytes checks the next map's encoding and returns its entries'
// count and the bytes of its keys and values.
func (d *decoder) mapBytes() (entries, size int) {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b))/2 { // each entry takes two bytes at least
		d.err = fmt.Errorf("%w: %d map entries in %d bytes", errRecord, n, len(d.b))
	}
	for range n {
		if d.err != nil {
			return 0, 0
		}
		size += len(d.field())
		size += len(d.field())
	}
	return int(n), size
}

// stringMap reads the next map, already checked by mapBytes, its
// strings cut out of s from *at on. A repeated key is an error.
func (d *decoder) stringMap(entries int, s string, at *int) map[string]string {
	d.uvarint()
	if entries == 0 {
		return nil
	}
	m := make(map[string]string, entries)
	for range entries {
		k, v := d.field(), d.field()
		i := *at
		m[s[i:i+len(k)]] = s[i+len(k) : i+len(k)+len(v)]
		*at = i + len(k) + len(v)
	}
	if len(m) != entries {
		d.err = fmt.Errorf("%w: repeated map key", errRecord)
	}
	return m
}

// object decodes an object in two allocations besides its maps: its
// value, and one string holding its key, uid and the keys and values of
// its labels and fields, which are cut out of it (a restart decodes
// every object: each allocation counts, in its time and the
// collector's). For example, key "/a", uid "u", labels {app: web}: the
// string "/auappweb", Key s[0:2], UID s[2:3], Labels {s[3:6]: s[6:9]}.
// A map the decoder's interner already holds (the same encoded bytes)
// is shared, its strings left out of s.
func (d *decoder) object() storage.Object {
	key, uid, value := d.field(), d.field(), d.field()
	maps := *d
	labels, lsize := d.mapBytes()
	mid := len(d.b)
	fields, fsize := d.mapBytes()
	if d.err != nil {
		return storage.Object{}
	}
	lenc := maps.b[:len(maps.b)-mid]
	fenc := maps.b[len(maps.b)-mid : len(maps.b)-len(d.b)]
	lshared, fshared := d.in.get(lenc), d.in.get(fenc)
	size := len(key) + len(uid)
	if lshared == nil {
		size += lsize
	}
	if fshared == nil {
		size += fsize
	}
	var sb strings.Builder
	sb.Grow(size)
	sb.Write(key)
	sb.Write(uid)
	m := maps
	for _, shared := range []map[string]string{lshared, fshared} {
		for range 2 * m.uvarint() { // the keys and values, in order
			if f := m.field(); shared == nil {
				sb.Write(f)
			}
		}
	}
	s := sb.String()
	o := storage.Object{Key: s[:len(key)], UID: s[len(key) : len(key)+len(uid)]}
	o.Value = make([]byte, len(value))
	copy(o.Value, value)
	at := len(key) + len(uid)
	o.Labels = maps.sharedMap(lshared, labels, lenc, s, &at)
	o.Fields = maps.sharedMap(fshared, fields, fenc, s, &at)
	d.err = maps.err
	return o
}

// sharedMap reads the next map (encoded as enc): shared if the
// interner had it, else decoded from s and given to the interner.
func (d *decoder) sharedMap(shared map[string]string, entries int, enc []byte, s string, at *int) map[string]string {
	if shared != nil {
		d.mapBytes() // skip it
		return shared
	}
	m := d.stringMap(entries, s, at)
	if d.err == nil {
		d.in.add(enc, m)
	}
	return m
}

// interner shares the maps of objects whose labels (or fields) encode
// to the same bytes, among the objects one start-up decodes: objects
// are immutable once stored (storage.Object), and many share their
// labels (a Deployment's Pods). It holds at most internMax maps; a nil
// interner shares nothing. Not safe for concurrent use.
type interner struct {
	maps map[string]map[string]string
}

const internMax = 4096

func newInterner() *interner { return &interner{maps: map[string]map[string]string{}} }

func (in *interner) get(enc []byte) map[string]string {
	if in == nil || len(enc) <= 1 { // nil, or an empty map
		return nil
	}
	return in.maps[string(enc)]
}

func (in *interner) add(enc []byte, m map[string]string) {
	if in != nil && len(m) > 0 && len(in.maps) < internMax {
		in.maps[string(enc)] = m
	}
}

// stateRecord is the record of o in the state bucket, from the body of
// its change record (rec[1:]).
func stateRecord(rev uint64, body []byte) []byte {
	b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(body)), rev)
	return append(b, body...)
}

// decodeState decodes a whole state record.
func decodeState(b []byte) (storage.Object, error) { return decodeStateIn(b, nil) }

// decodeStateIn is decodeState sharing maps through in.
func decodeStateIn(b []byte, in *interner) (storage.Object, error) {
	d := decoder{b: b, in: in}
	rev := d.uvarint()
	o := d.object()
	o.Revision = rev
	return o, d.end()
}

// decodeChange decodes a whole change record.
func decodeChange(b []byte) (op byte, o storage.Object, err error) {
	return decodeChangeIn(b, nil)
}

// decodeChangeIn is decodeChange sharing maps through in.
func decodeChangeIn(b []byte, in *interner) (op byte, o storage.Object, err error) {
	if len(b) == 0 {
		return 0, o, fmt.Errorf("%w: empty change", errRecord)
	}
	d := decoder{b: b[1:], in: in}
	switch op = b[0]; op {
	case opPut:
		o = d.object()
	case opDelete:
		o.Key = string(d.field())
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
