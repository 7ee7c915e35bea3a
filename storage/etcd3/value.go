package etcd3

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"

	"github.com/kapi-dev/kapi/storage"
)

// The value envelope. One etcd value holds everything a storage.Object
// keeps besides its key and revision (the etcd key and mod revision):
//
//	'k' 1 | uid | nlabels | (key value)* | nfields | (key value)* | Value
//
// where every count is a uvarint and every string a uvarint length then
// its bytes. Labels and fields are written in key order, so one object
// always encodes to the same bytes: GuaranteedUpdate compares encodings to
// skip no-op writes. Value is the rest of the etcd value, unframed, so
// decoding it is a sub-slice, not a copy.
//
// Worked example: UID "u", labels {app: web}, no fields, Value "{}" is
//
//	6b 01 | 01 75 | 01 | 03 61 70 70 03 77 65 62 | 00 | 7b 7d
const (
	envelopeMagic   = 'k'
	envelopeVersion = 1
)

var errCorrupt = errors.New("etcd3: value is not a kapi envelope")

// encode returns the envelope of o.
func encode(o storage.Object) []byte {
	n := 2 + binary.MaxVarintLen64*(3+2*(len(o.Labels)+len(o.Fields))) + len(o.UID) + len(o.Value)
	for k, v := range o.Labels {
		n += len(k) + len(v)
	}
	for k, v := range o.Fields {
		n += len(k) + len(v)
	}
	b := make([]byte, 0, n)
	b = append(b, envelopeMagic, envelopeVersion)
	b = appendString(b, o.UID)
	b = appendMap(b, o.Labels)
	b = appendMap(b, o.Fields)
	return append(b, o.Value...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendMap(b []byte, m map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	if len(m) == 0 {
		return b
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b = appendString(b, k)
		b = appendString(b, m[k])
	}
	return b
}

// decode fills o's UID, Labels, Fields and Value from an envelope. Value
// aliases b. Labels and Fields are nil when empty.
func decode(b []byte, o *storage.Object) error {
	if len(b) < 2 || b[0] != envelopeMagic || b[1] != envelopeVersion {
		return errCorrupt
	}
	d := decoder{b: b[2:]}
	o.UID = d.string()
	o.Labels = d.strMap()
	o.Fields = d.strMap()
	if d.bad {
		return errCorrupt
	}
	o.Value = d.b
	return nil
}

// decoder reads an envelope; after the first malformed field bad is set
// and every read returns zero values.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	if d.bad {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) strMap() map[string]string {
	n := d.uvarint()
	if d.bad || n == 0 {
		return nil
	}
	if n > uint64(len(d.b))/2 { // each entry takes two bytes at least
		d.bad = true
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := d.string()
		m[k] = d.string()
	}
	if d.bad {
		return nil
	}
	return m
}
