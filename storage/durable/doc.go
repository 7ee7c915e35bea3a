// Package durable is a storage backend that keeps its data on disk, in
// one process: every write it acknowledges survives a crash, without
// etcd. Reads and watches are the memory store's (storage/memory), fed
// from a revisioned log kept in a pebble database
// (github.com/cockroachdb/pebble); the database holds what a restart
// needs.
//
// It lives in a module of its own, so that the core module does not pull
// in pebble.
//
// Invariants:
//
//   - Memory follows the disk. A write is checked against the current
//     state in memory (existence, preconditions, compare-and-swap), given
//     the next revision, and queued; one committer goroutine writes
//     everything queued in one pebble batch, synced (one fdatasync of
//     pebble's log) before the commit returns, and only then applies the
//     writes to the memory store, in revision order, and answers their
//     writers. Readers never
//     see a write the disk does not hold, and a write is acknowledged
//     only once it is on stable storage.
//   - Group commit: writers queue while the previous batch syncs, so N
//     concurrent writers share one sync rather than paying N (the
//     committer waits up to a millisecond for the writers the last
//     commit answered, so that busy writers do not split into two
//     alternating halves; see commitLoop). Revisions reach the log, and
//     memory, in the order they were handed out.
//   - One write per key at a time: a write to a key whose previous write
//     is still queued waits for that one to be applied, then checks again
//     against the new state. So every check is made against a committed
//     state, and a failed commit fails only its own writes: writes
//     queued behind it touch other keys, and are failed too only because
//     their revisions came after it (nothing is half-applied: the
//     revisions are handed out again).
//   - Revisions continue across restarts. The database holds the state at a
//     base revision B and the log of every change after B; Open loads the
//     state into a memory store started at B (memory.Options.Revision and
//     Objects) and replays the log through it, which rebuilds the same
//     revisions, the same history for watches and Exact reads, and the
//     same current state. (Changes beyond the history's bound on count,
//     MaxEvents, go straight into the loaded state: the memory store
//     would drop them at once.) Compact(C) and the history bounds (Options.History
//     by age, MaxEvents by count, as the memory store's) fold the log up
//     to the memory store's oldest revision into the state and delete it
//     (at most 2048 changes a batch, in key order); a read or watch
//     before it is then ErrExpired (410), across restarts too, as etcd
//     answers.
//   - Faults are loud. A commit the disk refuses (full, I/O error) fails
//     its writes with storage.ErrUnavailable (503, nothing changed) and
//     the store goes on. pebble takes a failed log write or sync as
//     fatal (its commit pipeline is then unusable, and it would stop the
//     process): the store's logger turns that into a panic the commit
//     recovers, and the database is reopened before the next commit.
//     Should the failed commit have reached the log anyway (found on
//     reopening), or the database not reopen, writes stop until the
//     store is reopened, as memory and disk may then disagree. (A full
//     disk met first by pebble's background flush of its memtable, not
//     by a commit, is retried by pebble and stalls commits once its
//     memtables are full, until there is room: a known limit.) Open refuses a directory it cannot write
//     (ErrNotWritable), a directory another store has open (ErrLocked)
//     and damage (ErrCorrupt: a table truncated, overwritten or lost, a
//     database missing, emptied or not kapi's, a log or MANIFEST cut
//     short below the marker), and never re-initializes or half-reads
//     one: it reads the database opened read-only first, so a damaged
//     directory is left as it was, and a new database is made beside its
//     name and renamed into place.
//   - The marker tells damage from a crash. pebble's log (and its
//     MANIFEST) read a torn tail as the end, as etcd's WAL does: that is
//     what a crash mid-append leaves, but a log cut short by damage reads
//     the same, a shorter log. A marker file beside the database holds a
//     revision known synced; it follows the commits every 100 ms, off the
//     write path, and is set at Close, and Open refuses a database below
//     it. Only damage confined to the writes of the last 100 ms before a
//     crash can pass for the crash itself (bbolt's meta page, which the
//     first version used, tells any truncation, at the price of a second
//     sync per commit: see below).
//   - Backup is a pebble checkpoint (tables hard-linked, log copied)
//     written as a tar stream while the store serves (as `etcdctl
//     snapshot save`), ending with an entry that tells a whole backup
//     from one cut short; Restore checks it and installs it in an empty
//     directory.

// Worked example (revisions as the memory store's: an empty store is at 1):
//
//	Create a=1       r2: log {2: put a=1}, synced; memory a@2; answered
//	Create b, c      two writers at once: r3, r4 queued while nothing syncs,
//	                 one batch, one sync: log {…, 3: put b, 4: put c}
//	Update a=2       r5: log {…, 5: put a=2}
//	Compact 3        state {a@2, b@3}, base 3; log {4: put c, 5: put a=2}
//	(crash, Open)    memory at 3 with {a@2, b@3}; replays r4, r5:
//	                 a=2@5, b@3, c@4; Get a at Exact 4 is a=1; watch from 3
//	                 replays ADDED c@4, MODIFIED a@5; from 2: ErrExpired
//	Create d         r6
//
// The data directory (DirName, MarkerName) is described in disk.go, the
// records in record.go.
//
// Why pebble, not bbolt (measured; BENCHMARKS.md has the commands): the
// disk is written on every write and read only at start-up (gets, lists
// and watches never reach it), so what counts is the cost of a durable
// group commit. bbolt, etcd's backend and this store's first engine,
// commits a transaction by syncing its data pages, then its meta page:
// two syncs. pebble appends a batch to its log and syncs once. On this
// machine's disk (BenchmarkCommit: the engines side by side, each round
// committing the same group on each in turn; three runs): a pebble
// commit cost about the bare fdatasync of the same bytes, and bbolt's
// time over pebble's in the same round had a median of 1.5–2.3 for 16
// changes and 2.0–2.5 for 64. In the store (BenchmarkWriters), at 16
// writers, a commit's disk time went from 2.7 ms (bbolt) to 0.5 ms
// (pebble); beside k8s.io/apiserver's etcd3 store on an embedded etcd
// (bench/compare BenchmarkDurable), creates at 16 writers went from
// 1.2–1.8× etcd to 3.05–7.3× (the issue asks ≥ 3×). No bbolt setting
// removes its second sync (NoFreelistSync, measured, saves nothing) and
// larger groups need more writers. What pebble costs: start-up reads
// compressed tables (100k objects of 2 KiB opened in 1.6–2.2× bbolt's
// time, measured alternately); a larger dependency; and a torn log tail
// that reads as the end (the marker above narrows what that can hide).
// What it gives besides: compressed tables (the disk holds 0.22–0.25×
// the encoded objects, where bbolt's 4 KiB pages held 1.95×).
package durable
