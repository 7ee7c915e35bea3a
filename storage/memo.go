package storage

import "sync"

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
// m.Do(key{7, protobuf}, encode); the first call encodes, the 999 others
// (concurrent or later) wait for it and get the same bytes.
type Memo struct {
	mu      sync.Mutex
	entries []*memoEntry // a handful: one per format and view in use
}

type memoEntry struct {
	key  any
	once sync.Once
	v    any
	err  error
}

// Do returns the value remembered under key, computing it with f on first
// use. Concurrent callers with the same key wait for one f; its result,
// error included, is remembered. Callers with other keys do not wait for
// it. Keys must be comparable; use a type of your own package to avoid
// collisions, as with context keys.
func (m *Memo) Do(key any, f func() (any, error)) (any, error) {
	if m == nil {
		return f()
	}
	m.mu.Lock()
	var e *memoEntry
	for _, x := range m.entries {
		if x.key == key {
			e = x
			break
		}
	}
	if e == nil {
		e = &memoEntry{key: key}
		m.entries = append(m.entries, e)
	}
	m.mu.Unlock()
	e.once.Do(func() { e.v, e.err = f() })
	return e.v, e.err
}
