// Package durable is a storage backend that keeps its data on disk, in
// one process: every write it acknowledges survives a crash, without
// etcd. Reads and watches are the memory store's (storage/memory), fed
// from a revisioned log kept in a bbolt file; the file holds what a
// restart needs.
//
// It lives in a module of its own, so that the core module does not pull
// in bbolt.
//
// Invariants:
//
//   - Memory follows the disk. A write is checked against the current
//     state in memory (existence, preconditions, compare-and-swap), given
//     the next revision, and queued; one committer goroutine writes
//     everything queued in one bbolt transaction, synced (fsync) before
//     Commit returns, and only then applies the writes to the memory
//     store, in revision order, and answers their writers. Readers never
//     see a write the disk does not hold, and a write is acknowledged
//     only once it is on stable storage.
//   - Group commit: writers queue while the previous transaction syncs,
//     so N concurrent writers share one fsync rather than paying N (the
//     committer waits up to a millisecond for the writers the last
//     commit answered, so that busy writers do not split into two
//     alternating halves; see commitLoop). This
//     is bbolt's DB.Batch idea, with the order kept: DB.Batch may commit
//     its calls in any order and retries them one by one on failure,
//     while revisions must reach the log, and memory, in the order they
//     were handed out.
//   - One write per key at a time: a write to a key whose previous write
//     is still queued waits for that one to be applied, then checks again
//     against the new state. So every check is made against a committed
//     state, and a failed commit fails only its own writes: writes
//     queued behind it touch other keys, and are failed too only because
//     their revisions came after it (nothing is half-applied: the
//     revisions are handed out again).
//   - Revisions continue across restarts. The file holds the state at a
//     base revision B and the log of every change after B; Open loads the
//     state into a memory store started at B (memory.Options.Revision and
//     Objects) and replays the log through it, which rebuilds the same
//     revisions, the same history for watches and Exact reads, and the
//     same current state. (Changes beyond the history's bound on count,
//     MaxEvents, go straight into the loaded state: the memory store
//     would drop them at once.) Compact(C) and the history bounds (Options.History
//     by age, MaxEvents by count, as the memory store's) fold the log up
//     to the memory store's oldest revision into the state and delete it
//     (at most 2048 changes a transaction, in key order); a read or watch
//     before it is then ErrExpired (410), across restarts too, as etcd
//     answers.
//   - Faults are loud. A commit the disk refuses (full, I/O error) fails
//     its writes with storage.ErrUnavailable (503, nothing changed) and
//     the store goes on; should the failed commit have reached the file
//     anyway (its meta page written), writes stop until the store is
//     reopened, as memory and disk may then disagree. Open refuses a
//     directory it cannot write (ErrNotWritable), a file another store has
//     open (ErrLocked) and a damaged file (ErrCorrupt: truncated,
//     overwritten, empty, not kapi's), and never
//     re-initializes or half-reads one: a new file is created beside its
//     name and renamed into place, so an empty file is damage.
//   - Backup is a bbolt read transaction copied out while the store
//     serves (as `etcdctl snapshot save`); Restore checks it and installs
//     it in an empty directory.
//
// Worked example (revisions as the memory store's: an empty store is at 1):
//
//	Create a=1       r2: log {2: put a=1}, synced; memory a@2; answered
//	Create b, c      two writers at once: r3, r4 queued while nothing syncs,
//	                 one transaction, one fsync: log {…, 3: put b, 4: put c}
//	Update a=2       r5: log {…, 5: put a=2}
//	Compact 3        state {a@2, b@3}, base 3; log {4: put c, 5: put a=2}
//	(crash, Open)    memory at 3 with {a@2, b@3}; replays r4, r5:
//	                 a=2@5, b@3, c@4; Get a at Exact 4 is a=1; watch from 3
//	                 replays ADDED c@4, MODIFIED a@5; from 2: ErrExpired
//	Create d         r6
//
// The file (FileName in the data directory) is described in disk.go, its
// records in record.go.
//
// Why bbolt (go.etcd.io/bbolt), not an LSM such as cockroachdb/pebble:
// the disk here is written, and read only at start-up: gets, lists and
// watches never reach it. What counts is a cheap durable commit of a
// batch of appends, crash safety without a recovery step, and a small,
// proven dependency. bbolt is etcd's own backend for this very shape of
// data (a revision-keyed log plus compaction); its copy-on-write B+tree
// commits by syncing the data pages then one meta page, so a crash
// leaves the previous or the new transaction, never a mix, and opening
// replays nothing; it is pure Go with one dependency (x/sys). pebble's
// strengths (write throughput on random keys through its WAL and
// memtable, compression, large data sets) matter little when group
// commit already turns many writes into one sequential append and the
// data set fits in memory by design, and it brings dozens of modules,
// background compactions and their tuning. pebble was not measured (it
// is not in this build's module cache); BENCHMARKS.md measures bbolt
// against etcd.
package durable
