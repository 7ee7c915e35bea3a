package etcd3

import (
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// stateRing is how many keys keep their last known state.
const stateRing = 1024

// states remembers the last state this Store wrote or read of each of
// its latest stateRing keys: its mod revision and envelope. An update or
// a delete tries its transaction on that state without reading the key
// first (one round trip instead of two), as kube-apiserver's etcd3 store
// does with the watch cache's copy (cachedExistingObject): the
// transaction is guarded on the mod revision, so a stale state costs one
// retry on the current state (which the failed transaction returns),
// never a wrong write. Anything the caller sees (a failed precondition,
// an error of the update function, a no-op) is decided on a state etcd
// has just confirmed.
//
// Worked example: a Get of /a returns mod revision 7, remembered as
// (/a → 7, envelope). An update of /a calls its function on that state
// and commits "if mod revision of /a = 7 then put": one round trip. Had
// another replica written /a at 9 meanwhile, the transaction fails and
// returns the state at 9, and the function runs again on it.
type states struct {
	mu    sync.Mutex
	byKey map[string]*mvccpb.KeyValue
	ring  [stateRing]string // the keys in byKey, oldest at next
	next  int
}

// put remembers kv (an etcd key-value read or written, under its etcd
// key) unless a newer state of the key is remembered. kv must not change
// afterwards.
func (s *states) put(kv *mvccpb.KeyValue) {
	key := string(kv.Key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byKey[key]; ok {
		if kv.ModRevision > old.ModRevision {
			s.byKey[key] = kv
		}
		return
	}
	if s.byKey == nil {
		s.byKey = make(map[string]*mvccpb.KeyValue, stateRing)
	}
	delete(s.byKey, s.ring[s.next])
	s.ring[s.next] = key
	s.next = (s.next + 1) % stateRing
	s.byKey[key] = kv
}

// get returns the remembered state of etcd key k, or nil.
func (s *states) get(k string) *mvccpb.KeyValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byKey[k]
}

// forget drops the state of etcd key k if it is not newer than rev (the
// key was deleted at rev).
func (s *states) forget(k string, rev int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byKey[k]; ok && old.ModRevision <= rev {
		delete(s.byKey, k) // its ring slot evicts nothing or a later entry of k: harmless
	}
}
