// Package cache is a watch cache in front of any storage backend: a
// storage.Interface that sends writes to the backend and serves reads and
// watches from memory, fed by one watch of the backend, with the
// backend's resourceVersion guarantees (STORE-4).
//
// Invariants:
//
//   - The cache's state is the backend's state at the cache's revision:
//     it is built from one list of the backend and every event of a watch
//     from the list's revision, applied in order by one goroutine, and
//     the backend's bookmarks advance the revision without a change.
//   - A consistent read (rv.MostRecent) asks the backend for its current
//     revision R (one cheap call: Revision) and is served once the cache
//     has reached R, so it sees every write that completed before it
//     started; if the cache does not get there within Options.Wait
//     (kube's 3 s) the backend serves it. While a read waits, the cache
//     asks the backend's watch for progress bookmarks, as kube's cacher
//     asks etcd for progress notifications.
//   - A read at N (NotOlderThan, Exact) waits for the cache to reach N;
//     past Options.Wait it fails with ErrTooLarge if the backend has not
//     reached N either, and is the backend's otherwise. Exact reads older
//     than the cache's revision undo the cache's history; older than the
//     history, the backend serves them (or answers ErrExpired).
//   - Writes are the backend's, and return its answer as soon as it
//     gives it, as with kube's watch cache: a read at rv.Any right after
//     a write may not show it yet. Options.ReadYourWrites makes a write
//     return only once the cache has applied it (bounded by
//     Options.Wait), at the cost of a round through the feeder per write.
//     A write refused with ErrConflict (its precondition named a stale
//     revision, most likely read from the cache) returns once the cache
//     has caught up with the backend, within Options.Wait, so that a
//     get-modify-update retry loop reads a newer state each time round.
//   - The cache keeps its own window of history (Options.History and
//     MaxEvents, as the memory store's). Compact through the cache
//     compacts the backend and the window alike; a compaction made
//     elsewhere (another replica) leaves the window as it is, whose
//     states stay correct.
//   - Continue tokens are the backend's (Options.Tokens holds its
//     keys): a page after which more follow names the revision it was
//     read at, and every continuation is served from a copy-on-write
//     snapshot of the tree at that revision (cached, or rebuilt from the
//     history), never from a later state. A token the cache cannot serve
//     (older than its history, at revision 0, or any while the cache
//     re-lists) goes to the backend unchanged, which serves it or answers
//     ErrExpired as for its own; a token the backend issued is served by
//     the cache alike. Without Options.Tokens, pages are the backend's.
//   - Watches read the cache's log (a watch.Broadcaster) as the memory
//     store's do: no lock is held while sending, a slow watcher never
//     blocks the feeder or other watchers, and one that falls behind the
//     retained history ends with watch.ErrTooSlow. A watch from a
//     revision older than the history fails with ErrExpired (410).
//   - Objects keep their storage.Memo from the backend (or get one when
//     the backend keeps none), shared by every read and watch event of
//     that state, so each encoding is computed once.
//   - When the backend's watch ends, the cache resumes it from its own
//     revision; when the backend no longer has that revision, it
//     re-lists and starts a new history: its watchers end, and their
//     clients, re-watching from their last revision, get ErrExpired and
//     re-list, as with any store. Reads are the backend's meanwhile.
//
// Worked example, a cache over a memory store at revision 10:
//
//	Create a           backend r11, returned; the feeder applies ADDED a@11
//	Get a (MostRecent) backend.Revision()=11: waits until the cache is at 11,
//	                   then served from memory (after Wait: by the backend)
//	Get a (Any)        served from memory at once, at 10 or 11
//	Watch / from 10    replays ADDED a@11 from the log, then live events
//	Get a (Exact 10)   undoes r11 from the log: ErrNotFound at 10
//	Create b, c        backend r12, r13, applied by the feeder
//	List / (limit 2)   a, b from the tree @13, its clone kept: token {13, "c", 2}
//	Delete c           backend r14; the snapshot @13 still holds c
//	List / (token)     c@13 from the snapshot @13 (evicted: rebuilt by undoing r14)
//	Compact 11         the backend's and the cache's history: Watch from 10 is ErrExpired
package cache
