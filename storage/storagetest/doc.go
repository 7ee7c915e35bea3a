// Package storagetest is the conformance suite every storage backend must
// pass: Run exercises each behaviour documented on storage.Interface
// (create, get, list with snapshots and pagination, resource version
// matching, compaction, guaranteed updates, deletes, and watches with
// replay, selector transitions and slow watchers) against fresh stores,
// and checks with porcupine that concurrent clients see a linearizable
// store (CheckLinearizable).
//
// A backend runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Interface {
//			s := memory.New(memory.Options{Wait: 100 * time.Millisecond})
//			t.Cleanup(s.Close)
//			return s
//		})
//	}
package storagetest
