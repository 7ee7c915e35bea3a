package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/kapi-dev/kapi/internal/jsontree"
	"github.com/kapi-dev/kapi/internal/jsonval"
)

// WhatReserved marks the MemoKey.What values the storage package uses for
// itself; callers name their own values below it.
const WhatReserved uint64 = 1 << 63

// whatMap is the MemoKey.What of Map's decoded form.
const whatMap = WhatReserved | 1

// Map returns the state o holds, decoded from its JSON Value, with
// metadata.resourceVersion set to o.Revision: the object as a Kubernetes
// client sees it, in the form of client-go's unstructured objects (objects
// are map[string]any, arrays []any, integers int64, other numbers
// float64).
//
// The map is decoded once per state and revision and shared, through
// o.Memo, by every caller that reads that state: a Get, every item of
// every List, the event of every watcher. It is read-only, as the objects
// in an informer's cache are: a caller that wants to change it deep-copies
// it first (client-go's runtime.DeepCopyJSON does). Changing it in place
// changes what every other reader sees.
//
// Worked example: 100 watchers of a collection each call Map on the event
// of a write at revision 42; the first call decodes Value, the 99 others
// (concurrent or later) get the same map. A DELETED event at revision 43
// carries the last state with Revision 43: it shares that state's Memo
// but is decoded again, since its resourceVersion differs.
//
// The decoded form stays in the Memo as long as the state does (while it
// is current or in the watch history): a state read through Map costs its
// decoded size in memory besides its encoded size, as the objects of
// kube's watch cache do; states nobody reads this way cost nothing more.
// Without a Memo (a backend that keeps none) every call decodes afresh.
func (o Object) Map() (map[string]any, error) {
	if m := o.Memo; m != nil {
		if f := m.form.Load(); f != nil && f.rev == o.Revision {
			return f.m, nil // the common case: one atomic load, no lookup
		}
	}
	return decodedMap(&o)
}

// decodedMap is Map's slow path: the first read of a state, or a read at
// another revision.
func decodedMap(o *Object) (map[string]any, error) {
	value, rev := o.Value, o.Revision
	m, err := o.Memo.mapForm(rev, func() (map[string]any, error) { return decodeMap(value, rev) })
	if err != nil {
		return nil, fmt.Errorf("storage: decoding %s: %w", o.Key, err)
	}
	return m, nil
}

// ShareMap records m as o's decoded form, the map Map returns to every
// reader of o's state at o.Revision, unless one is recorded already. A
// writer that holds the object it just stored uses it to spare readers the
// decode: m must be what Map would decode (metadata.resourceVersion
// included), and the caller gives it up — from now on it is read-only and
// shared. Without a Memo it does nothing.
func (o Object) ShareMap(m map[string]any) {
	if o.Memo == nil {
		return
	}
	_, _ = o.Memo.mapForm(o.Revision, func() (map[string]any, error) { return m, nil })
}

// mapForm returns the decoded form at rev, computing it with f once per
// Memo and revision. The first revision asked for takes m's own slot
// (concurrent callers wait for one f; an error is remembered in the
// entries, not in the slot); others are entries under whatMap.
func (m *Memo) mapForm(rev uint64, f func() (map[string]any, error)) (map[string]any, error) {
	if m == nil {
		return f()
	}
	key := MemoKey{Rev: rev, What: whatMap}
	m.formMu.Lock()
	cur := m.form.Load()
	if cur == nil && m.find(key) == nil { // the first revision asked for
		v, err := f()
		if err == nil {
			m.form.Store(&mapForm{rev: rev, m: v})
			m.formMu.Unlock()
			return v, nil
		}
		_, _ = m.Do(key, func() (any, error) { return nil, err }) // remembered, as Do remembers errors
		m.formMu.Unlock()
		return nil, err
	}
	m.formMu.Unlock()
	if cur != nil && cur.rev == rev {
		return cur.m, nil
	}
	v, err := m.Do(key, func() (any, error) { return f() })
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// MarshalMap encodes m, an object in the unstructured form Map returns,
// into the JSON an Object's Value holds: the bytes and errors of
// encoding/json.Marshal (keys sorted, HTML characters escaped), without
// its reflection, about twice as fast.
func MarshalMap(m map[string]any) ([]byte, error) { return jsonval.Marshal(m) }

var errNotObject = errors.New("the stored value is not one JSON object")

// decodeMap decodes value as a JSON object in unstructured form and sets
// its resourceVersion. jsontree's decoder gives the int64/float64 numbers
// directly; where it refuses value, decodeMapStd answers, with
// encoding/json's error (FuzzDecodeMap holds the two to the same answers).
func decodeMap(value []byte, rev uint64) (map[string]any, error) {
	v, _, err := jsontree.Decode(value, jsontree.Options{Numbers: jsontree.Native})
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		return decodeMapStd(value, rev)
	}
	setRV(m, rev)
	return m, nil
}

// decodeMapStd is decodeMap with encoding/json.
func decodeMapStd(value []byte, rev uint64) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(value))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errNotObject
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errNotObject // more after the object
	}
	jsonval.Convert(m, jsonval.Number) // numbers as client-go's unstructured objects have them
	setRV(m, rev)
	return m, nil
}

// setRV sets m's metadata.resourceVersion to rev.
func setRV(m map[string]any, rev uint64) {
	md, ok := m["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		m["metadata"] = md
	}
	md["resourceVersion"] = strconv.FormatUint(rev, 10)
}
