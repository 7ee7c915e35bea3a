package storage

import (
	"sync"
	"sync/atomic"
)

// Memo holds values derived from one stored state — its encodings in each
// media type, a decoded form — so that each is computed once, however many
// readers, list pages and watchers see that state. A store gives every
// write a new Memo and hands the same pointer to every reader of the state
// it wrote (Get, List, the events of every watch), so work done for one
// reader is shared by all.
//
// Values in a Memo are shared and must be treated as read-only: a caller
// that wants to change one copies it first, as with an informer's cache.
//
// A nil *Memo is valid and remembers nothing: Do calls f every time. A
// backend that cannot keep a Memo per state simply leaves it nil.
//
// Worked example: a configmap written at revision 7 is watched by 1000
// clients asking for protobuf. Each watcher's writer calls
// m.Do(MemoKey{Rev: 7, What: protobufEvent}, encode); the first call
// encodes, the 999 others (concurrent or later) wait for it and get the
// same bytes.
type Memo struct {
	mu      sync.Mutex                   // serialises adding entries
	entries atomic.Pointer[[]*memoEntry] // a handful, one per format and view in use; copied on add, so lookups take no lock

	// The decoded form (Object.Map) of the first revision asked for,
	// usually the state's own: read on every Get, List item and watch
	// event, so it has its own slot, one pointer away and without an
	// entry. Set once under formMu; other revisions go to entries.
	formMu sync.Mutex
	form   atomic.Pointer[mapForm]
}

// mapForm is a decoded form and the revision it shows.
type mapForm struct {
	rev uint64
	m   map[string]any
}

// MemoKey names one value in a Memo. Rev is the revision the value shows:
// usually the state's own, but a watch event can show a state at a later
// revision (a DELETED event carries the last state at the delete's
// revision). What is the caller's name for the kind of value; callers that
// share a Memo agree on its values, and those with WhatReserved set are
// the storage package's own (Object.Map). A MemoKey is a plain value, so looking
// one up allocates nothing.
type MemoKey struct {
	Rev  uint64
	What uint64
}

type memoEntry struct {
	key  MemoKey
	once sync.Once
	done atomic.Bool // v and err are set
	v    any
	err  error
}

// Load returns the value remembered under key, if one was computed
// without error. It is Do's fast path: a caller that builds f only on a
// miss allocates nothing on a hit.
func (m *Memo) Load(key MemoKey) (any, bool) {
	if m == nil {
		return nil, false
	}
	e := m.find(key)
	if e == nil || !e.done.Load() || e.err != nil {
		return nil, false
	}
	return e.v, true
}

// Do returns the value remembered under key, computing it with f on first
// use. Concurrent callers with the same key wait for one f; its result,
// error included, is remembered. Callers with other keys do not wait for
// it.
func (m *Memo) Do(key MemoKey, f func() (any, error)) (any, error) {
	if m == nil {
		return f()
	}
	e := m.find(key)
	if e == nil {
		e = m.add(key)
	}
	e.once.Do(func() {
		e.v, e.err = f()
		e.done.Store(true)
	})
	return e.v, e.err
}

// find returns key's entry, or nil.
func (m *Memo) find(key MemoKey) *memoEntry {
	if es := m.entries.Load(); es != nil {
		for _, e := range *es {
			if e.key == key {
				return e
			}
		}
	}
	return nil
}

// add returns key's entry, adding it if no other caller has meanwhile.
func (m *Memo) add(key MemoKey) *memoEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.find(key); e != nil {
		return e
	}
	var es []*memoEntry
	if old := m.entries.Load(); old != nil {
		es = make([]*memoEntry, len(*old), len(*old)+1)
		copy(es, *old)
	}
	e := &memoEntry{key: key}
	es = append(es, e)
	m.entries.Store(&es)
	return e
}
