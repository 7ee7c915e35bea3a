package etcd3

import (
	"sync"

	"github.com/kapi-dev/kapi/storage"
)

// memoRing is how many of a Store's latest writes keep their Memo.
const memoRing = 1024

// memos remembers the Memo of each of the latest states a Store wrote or
// saw in a watch event, so that such a state shares one Memo between the
// write's result, the events of every watch and reads of it: an encoding
// or decoded form computed for one of them (the write's response, say)
// serves all. Whichever of the write and the watch events comes first
// makes the Memo (etcd may send the event before the write's response
// arrives). Reads only look up: a state older than the last memoRing
// gets a fresh Memo per read, as an etcd read cannot find another read's.
//
// Worked example: a create at revision 42 returns its object with Memo M
// and records (key, 42) → M. Three watches each decode the PUT event at
// mod revision 42 and find M, as does a Get of the key; 1024 states
// later (key, 42) is evicted, and a Get then gets a new Memo.
type memos struct {
	mu   sync.Mutex
	byID map[memoID]*storage.Memo
	ring [memoRing]memoID // the ids in byID, oldest at next
	next int
}

type memoID struct {
	key string
	rev uint64
}

// remember returns the Memo of the state at (key, rev), making and
// remembering one if there is none.
func (m *memos) remember(key string, rev uint64) *storage.Memo {
	id := memoID{key, rev}
	m.mu.Lock()
	defer m.mu.Unlock()
	if memo := m.byID[id]; memo != nil {
		return memo
	}
	if m.byID == nil {
		m.byID = make(map[memoID]*storage.Memo, memoRing)
	}
	memo := new(storage.Memo)
	delete(m.byID, m.ring[m.next])
	m.ring[m.next] = id
	m.next = (m.next + 1) % memoRing
	m.byID[id] = memo
	return memo
}

// get returns the Memo of the state at (key, rev) if it is remembered,
// or a new one.
func (m *memos) get(key string, rev uint64) *storage.Memo {
	m.mu.Lock()
	memo := m.byID[memoID{key, rev}]
	m.mu.Unlock()
	if memo == nil {
		memo = new(storage.Memo)
	}
	return memo
}
