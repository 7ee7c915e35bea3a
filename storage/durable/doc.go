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
//     committer waits up to a commit's time, at most a millisecond, for
//     the writers the last commit answered, so that busy writers do not
//     split into two alternating halves; see commitLoop). Revisions reach
//     the log, and memory, in the order they were handed out. At N
//     writers a sync carries at most N writes, so a disk whose sync takes
//     d gives at most N/d writes a second, whatever the store does
//     (Stats counts writes a commit and the disk's time).
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
//     memtables are full, until there is room: a known limit.) Open
//     refuses a directory it cannot write (ErrNotWritable), a directory
//     another store has open (ErrLocked) and damage (ErrCorrupt: a table
//     truncated, overwritten or lost, a database missing, emptied or not
//     kapi's, a log or MANIFEST cut short below the marker, a database
//     without its marker), and never re-initializes or half-reads one: it
//     reads the database opened read-only first, so a damaged directory
//     is left as it was, and a new database is made beside its name and
//     renamed into place.
//   - The marker tells damage from a crash. pebble's last log (and its
//     MANIFEST) read a torn tail as the end, as etcd's WAL does: that is
//     what a crash mid-append leaves, but a log cut short by damage reads
//     the same, a shorter log. A marker file beside the database
//     (marker.go) holds a revision known synced in the log: each commit,
//     once its sync has returned and before its writers are answered,
//     writes its last revision into the marker in place (one pwrite, into
//     one of two checksummed slots, alternately; no sync of its own), and
//     the marker is synced every 100 ms and at Close. Open refuses
//     (ErrCorrupt) a database below the marker. The order is the point:
//     after the sync, the marker never says more than the log holds on
//     stable storage (the kernel may write the marker's page out at any
//     moment after the pwrite, and by then the log's sync has returned),
//     so it never refuses a whole log, even after a power loss; before
//     the answer, every acknowledged write is at or below the marker in
//     the page cache, which a crash of the process (SIGKILL, a panic, the
//     OOM killer) leaves to the next Open, so a log cut below any
//     acknowledged write is refused. After a power loss (or the kernel's
//     crash) the marker on disk is the one last synced or a later one
//     the kernel wrote out, at most 100 ms behind: a weaker check, never
//     a false alarm (a write torn in one slot leaves the other, the
//     revision before it).
//     What Open tells, exactly (fault_test.go): refused (ErrCorrupt): a
//     table cut, overwritten or lost; the MANIFEST cut or emptied; a log
//     before the last cut or damaged (pebble reads those strictly, its
//     strict WAL tail: "invalid chunk"); a log lost between others (the
//     revisions then have a gap); the last log cut or lost below the
//     marker's revision (TestDamageAboveMarker); a database without its
//     marker (TestMarkerLost: a lost marker must not turn a cut log into
//     a silent loss; Restore writes the marker, and Adopt takes a
//     database known whole as it is). Read as a crash (not told): the
//     last log cut at or above the marker's revision, which loses only
//     writes never answered after a crash of the process, and after a
//     power loss at most those of the 100 ms before it (Open serves a
//     prefix of the history, never a gap or half a write). pebble
//     (v1.1.5) has no stricter recovery mode for its last log: its
//     strict WAL tail is for the logs before it, since a crash leaves a
//     torn tail in the last one. A marker synced with every commit would
//     tell the rest, at the price of a second sync per commit (the cost
//     that made bbolt lose to pebble: see below); the pwrite costs
//     microseconds (BENCHMARKS.md).
//   - Backup is a pebble checkpoint (tables hard-linked, log copied)
//     written as a tar stream while the store serves (as `etcdctl
//     snapshot save`), ending with an entry that tells a whole backup
//     from one cut short; Restore checks it and installs it in an empty
//     directory.
//
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
// Worked example of the marker (each commit's sync, then its marker
// write, then its answer):
//
//	commit r118–r120    log synced; slot 0 := 120; answered
//	(100 ms)            the marker synced: 120 on disk
//	commit r121         log synced; slot 1 := 121; answered
//	commit r122         log synced; slot 0 := 122 (page cache); answered
//	commit r123         log synced; SIGKILL before its marker write
//	Open                marker 122 (the page cache), log 123 ≥ 122: opens
//	                    at 123 (r123 was not answered: ambiguous, as any
//	                    write in flight at a crash)
//	Open, log cut at 97 "the database holds revision 97; revision 122 was
//	                    committed": ErrCorrupt, nothing read
//	power loss instead  the marker on disk is 120, 121 or 122 (122 torn in
//	                    slot 0: 121); the log holds 123 (synced): opens at
//	                    123. A log cut to 121 by the same power loss would
//	                    pass for a crash: the window the marker's sync leaves
//
// The data directory (DirName, MarkerName) is described in disk.go, the
// records in record.go.
//
// Start-up is decoding every object into the memory store; reading
// pebble's tables is the smaller part (measured: of the 0.44–0.57 s of
// CPU time an Open of 100,000 objects of 2 KiB took, a bare iteration
// of the tables was 0.15–0.19 s with 4 KiB blocks). So Open reads each
// key space (the state, then the log) in parallel parts, one per
// processor the Go runtime uses, cut at the database's table boundaries
// (splitKeys), each part with its own iterator, decoded where it is read
// and joined in key order (scanParts); the tables are written in blocks
// of 32 KiB, not pebble's 4 KiB (a 2 KiB object filled a block by
// itself: a bare iteration took 0.07–0.09 s of CPU time, half); and an
// object is decoded in two allocations besides its two maps (its value,
// and one string cut into its key, uid and the keys and values of its
// labels and fields), where it took three and two for each label and
// field, and objects whose labels (or fields) encode alike share one
// map (an interner for each part, at most 4096 maps: objects are
// immutable once stored; a Deployment's Pods share their labels).
// BenchmarkOpen, 100,000 objects, this (without shared maps) and the
// previous version
// alternately, five rounds: CPU time
// 0.38–0.44 s a start-up where it was 0.44–0.57 s; wall time 0.24 s
// (compacted) and 0.28 s (from the log) where it was 0.45 s and 0.53 s
// in the round with the machine least loaded, and a median of 0.96 s
// over all rounds where it was 1.09 s (load average 8–20: a start-up
// waits for processors like everything else). Sharing maps then took
// the CPU time to 0.36–0.39 s and the heap from 1.42–1.43× the encoded
// objects to 1.26–1.35× (the benchmark's objects: 16 sets of labels,
// fields all different; two rounds alternately). Measured and left:
// pebble without compression (a bare iteration cost more CPU, 0.09–0.12
// s: more bytes read), a larger block cache (each block is read once),
// and a snapshot of the memory state written at Close (it would still
// decode every object, the cost that remains; and a second format to
// keep true).
//
// At 1,000,000 objects most of an Open's CPU time is the kernel's: the
// 2.8 GB heap it builds is fresh memory, mapped a 4 KiB page at a time on
// its first touch (this machine's transparent huge pages are "madvise";
// the fault count, about one per 4 KiB of heap, shows the heap got none).
// BenchmarkOpen, 1M objects, three Opens (two runs): 5.6–8.4 s of CPU
// time, 2.3–5.0 s of it system time, 525,000–567,000 minor page faults
// at 4.2–8.8 µs each; at 100,000 objects 17,000–26,000 faults and 58–76
// ms of system time an Open (the runtime reuses the heap the previous
// Open freed). So the user time, 3.3–3.8 s at 1M and 0.37–0.40 s at
// 100k, grows with the objects, and the rest is what a page fault costs
// on the machine at the time (reclaiming page cache, the hypervisor
// backing the memory): most likely what moved the CPU time of the
// earlier 1M runs between 4.2 and 9.1 s (their wall time, 6.4–33 s at
// load 6–20, follows the load too). From the log, trimLog applied the
// changes the history cannot hold (900,000 at 1M) into a map that
// grew as it went: 2.0 s of CPU time an Open (pprof), 0.44 s once sized
// at its start.
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
// time, measured alternately, before start-up was made parallel: see
// above); a larger dependency; and a torn log tail that reads as the
// end (the marker above narrows what that can hide).
// What it gives besides: compressed tables (the disk holds 0.22–0.25×
// the encoded objects, where bbolt's 4 KiB pages held 1.95×).
package durable
