package durable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/kapi-dev/kapi/storage"
)

// The data directory:
//
//	pebble/     the pebble database (DirName): the data
//	revision    the marker: the last revision known synced (MarkerName)
//	lock        held (flock) while a store has the directory open
//
// The pebble database holds three key spaces:
//
//	m format    "kapi-durable/2"
//	m base      B, uvarint: the state key space is the state at B
//	m revision  N, uvarint: the last committed revision
//	s key       → state record (revision, object): the state at B
//	l revision  (8 bytes big-endian) → change, for every revision in (B, N]
//
// The state at N is the state at B with the log applied in order. A
// compaction to C folds the log's changes up to C into the state and
// deletes them, in one batch (base = C). For example:
//
//	B=4  state {a@3}         log 5:put b, 6:put a, 7:delete b
//	compact 6 → B=6  state {a@6, b@5}  log 7:delete b
//
// The marker is what detects damage a log cannot show by itself: a log
// cut short (a file truncated between records, a lost MANIFEST edit)
// reads as a shorter log, as a crash mid-append does. The marker
// (marker.go) holds a revision every write up to which is synced in the
// log: each commit writes its last revision to it in place after its
// sync and before its writers are answered (no sync of its own; it is
// synced every markInterval and at Close). Open refuses (ErrCorrupt) a
// database whose revision is below the marker's, or a database without
// a marker. For example: marker 120, the log's file cut so that it
// ends at 97 → ErrCorrupt ("holds revision 97; revision 120 was
// committed").
const (
	// DirName is the pebble database in the data directory.
	DirName = "pebble"
	// MarkerName is the marker file in the data directory.
	MarkerName = "revision"
	lockName   = "lock"
	format     = "kapi-durable/2"
	// legacyName is the bbolt file of the store's first format.
	legacyName = "kapi.db"
)

var (
	keyFormat   = []byte("mformat")
	keyBase     = []byte("mbase")
	keyRevision = []byte("mrevision")
	prefixState = byte('s')
	prefixLog   = byte('l')
)

func stateKey(key string) []byte { return append([]byte{prefixState}, key...) }

func logKey(rev uint64) []byte { return binary.BigEndian.AppendUint64([]byte{prefixLog}, rev) }

func uvarint(v uint64) []byte { return binary.AppendUvarint(nil, v) }

// disk is the data directory. Its writers (commit, fold) and reopen are
// serialized by mu.
type disk struct {
	dir, path string
	lock      *os.File

	mu     sync.Mutex
	db     *pebble.DB
	failed error // the engine failed a commit: reopened before the next use

	marker  *marker // written after each commit's sync (under mu)
	synced  uint64  // the last revision synced (under mu)
	stop    chan struct{}
	stopped chan struct{}

	loaded *loaded // what Open read, until Store.Open takes it
}

// loaded is what Open read: the state at base, the log after it up to rev.
type loaded struct {
	base, rev uint64
	state     []storage.Object
	log       []change
}

// load returns what openDisk read (once).
func (d *disk) load() (base, rev uint64, state []storage.Object, log []change) {
	l := d.loaded
	d.loaded = nil
	return l.base, l.rev, l.state, l.log
}

// engineFault is pebble's fatal error: a commit it could not write or
// sync leaves its commit pipeline unusable, so pebble stops the
// process. The store's logger panics with it instead, the commit
// recovers it, and the database is reopened before the next commit.
type engineFault struct{ msg string }

type engineLog struct{}

func (engineLog) Infof(string, ...any) {}

func (engineLog) Fatalf(format string, args ...any) {
	panic(engineFault{fmt.Sprintf(format, args...)})
}

// engineOptions: every commit synced (the batch's pebble.Sync), the
// engine's fatal errors turned into panics the commit recovers.
func engineOptions(readOnly bool) *pebble.Options {
	return &pebble.Options{
		ErrorIfNotExists: true,
		ReadOnly:         readOnly,
		Logger:           engineLog{},
		// Blocks of 32 KiB, not pebble's 4 KiB: the tables are read whole
		// at start-up (the only point reads are of the two revision keys,
		// whose block stays in the cache), and a 2 KiB object filled a
		// 4 KiB block by itself. Start-up's iteration of the tables took
		// half the CPU time (100,000 objects of 2 KiB: 0.15–0.19 s →
		// 0.07–0.09 s; doc.go).
		Levels: []pebble.LevelOptions{{BlockSize: 32 << 10}},
	}
}

// openDisk opens (or creates) the store in dir: the lock, the marker,
// then the database, read-only first to check it (so that a damaged one
// is left as it was: opened for writing, pebble would rewrite its
// files), then for writing.
func openDisk(dir string) (_ *disk, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	if err := probe(dir); err != nil {
		return nil, &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	path := filepath.Join(dir, DirName)
	if _, err := os.Stat(filepath.Join(dir, legacyName)); err == nil {
		return nil, &OpenError{Path: filepath.Join(dir, legacyName), Err: ErrCorrupt,
			Cause: errors.New("a store of the first format (bbolt), which this version does not read")}
	}
	marked, err := readMarker(dir)
	_, statErr := os.Stat(path)
	switch {
	case err == errNoMarker && statErr == nil:
		return nil, &OpenError{Path: filepath.Join(dir, MarkerName), Err: ErrCorrupt, Cause: errors.New(
			"the revision marker is missing beside the database: a log cut short could not be told from a crash; " +
				"restore a backup (Restore writes the marker), or, to take the database as it is, Adopt the directory")}
	case err != nil && err != errNoMarker:
		return nil, err
	case errors.Is(statErr, os.ErrNotExist) && marked > initialRevision:
		return nil, &OpenError{Path: path, Err: ErrCorrupt, Cause: fmt.Errorf("the database is missing; the marker says revision %d was committed", marked)}
	case errors.Is(statErr, os.ErrNotExist):
		// A new directory, or one whose creation stopped before its
		// database was in place (the marker says nothing was committed).
		if err := initDB(dir, path); err != nil {
			return nil, &OpenError{Path: path, Err: ErrNotWritable, Cause: err}
		}
		marked = initialRevision
	}
	var l loaded
	if l.base, l.rev, l.state, l.log, err = loadDB(path, marked); err != nil {
		return nil, err
	}
	// Opened for writing, pebble flushes the log it replays into synced
	// tables: what loadDB read is on stable storage once it returns, so
	// the marker may say so (and takes the current format).
	db, err := pebble.Open(path, engineOptions(false))
	if err != nil {
		return nil, openErr(path, err)
	}
	d := &disk{dir: dir, path: path, lock: lock, db: db, stop: make(chan struct{}), stopped: make(chan struct{}), loaded: &l}
	if d.synced, err = d.revision(); err != nil {
		db.Close()
		return nil, &OpenError{Path: path, Err: ErrCorrupt, Cause: err}
	}
	if err = writeMarker(dir, d.synced); err == nil {
		d.marker, err = openMarker(dir, d.synced)
	}
	if err != nil {
		db.Close()
		return nil, &OpenError{Path: filepath.Join(dir, MarkerName), Err: ErrNotWritable, Cause: err}
	}
	go d.markLoop()
	return d, nil
}

// lockDir takes the directory's lock, waiting at most a second for
// another store to let it go.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &OpenError{Path: path, Err: ErrNotWritable, Cause: err}
	}
	deadline := time.Now().Add(time.Second)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, &OpenError{Path: path, Err: ErrLocked, Cause: err}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openErr classifies pebble.Open's error.
func openErr(path string, err error) error {
	if errors.Is(err, os.ErrPermission) {
		return &OpenError{Path: path, Err: ErrNotWritable, Cause: err}
	}
	return &OpenError{Path: path, Err: ErrCorrupt, Cause: err}
}

// probe checks that dir takes a new file, synced.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write([]byte{0}); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// initDB creates an empty kapi database at path: the marker first, at
// the initial revision (nothing committed: a database missing beside it
// is made again), then the database, made beside its place and renamed
// into it, so that path always names an initialized database (a
// missing or empty one is damage, never "new").
func initDB(dir, path string) error {
	if err := writeMarker(dir, initialRevision); err != nil {
		return err
	}
	tmp := path + ".init"
	os.RemoveAll(tmp)
	opts := engineOptions(false)
	opts.ErrorIfNotExists = false
	db, err := pebble.Open(tmp, opts)
	if err != nil {
		return err
	}
	b := db.NewBatch()
	b.Set(keyFormat, []byte(format), nil)
	b.Set(keyBase, uvarint(initialRevision), nil)
	b.Set(keyRevision, uvarint(initialRevision), nil)
	err = b.Commit(pebble.Sync)
	if err == nil {
		err = db.Flush()
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// writeFileAtomic replaces path with what write writes: into a file
// beside it, synced, renamed into place, and the directory synced, so
// that path holds the old content or the new one whole, never a part.
func writeFileAtomic(path string, write func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename, nothing is there
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// markLoop syncs the marker every markInterval while writes go on, so
// that after a power loss it is at most that much behind (after a
// process's crash the page cache holds every write of it).
func (d *disk) markLoop() {
	defer close(d.stopped)
	t := time.NewTicker(markInterval)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
		d.mu.Lock()
		rev := d.marker.wrote
		d.mu.Unlock()
		d.marker.sync(rev)
	}
}

// close stops the marker's syncs, flushes the database (so that a
// restart reads its tables and replays no log), closes it and leaves the
// marker at its revision, synced.
func (d *disk) close() error {
	close(d.stop)
	<-d.stopped
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.lock.Close()
	var err error
	if d.db == nil {
		err = d.failed
	} else {
		if d.failed == nil {
			err = d.db.Flush()
		}
		if cerr := d.closeDB(); err == nil {
			err = cerr
		}
	}
	d.marker.write(d.synced) // again, should the last write have failed
	d.marker.sync(d.marker.wrote)
	if cerr := d.marker.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// closeDB closes the database, which may have failed. Callers hold mu.
func (d *disk) closeDB() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("closing the failed database: %v", r)
		}
	}()
	db := d.db
	d.db = nil
	return db.Close()
}

// ready reopens the database after a failed commit. Callers hold mu.
func (d *disk) ready() error {
	if d.failed == nil && d.db != nil {
		return nil
	}
	if d.db != nil {
		d.closeDB()
	}
	db, err := pebble.Open(d.path, engineOptions(false))
	if err != nil {
		return fmt.Errorf("reopening the database after %v: %w", d.failed, err)
	}
	d.db, d.failed = db, nil
	return nil
}

// write commits b, synced. A failure the engine takes as fatal fails
// the commit and has the database reopened before the next use.
// Callers hold mu.
func (d *disk) write(b *pebble.Batch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(engineFault)
			if !ok {
				panic(r)
			}
			err = errors.New(f.msg)
			d.failed = err
		}
	}()
	return b.Commit(pebble.Sync)
}

// change is one entry of the log.
type change struct {
	rev uint64
	op  byte
	obj storage.Object
}

// loadDB opens the database at path read-only and reads it: the state
// at base, and the log's changes after it, checked against the marker.
func loadDB(path string, marked uint64) (base, rev uint64, state []storage.Object, log []change, err error) {
	db, err := pebble.Open(path, engineOptions(true))
	if err != nil {
		return 0, 0, nil, nil, openErr(path, err)
	}
	defer db.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading the database: %v", r)
		}
		if err != nil {
			err = &OpenError{Path: path, Err: ErrCorrupt, Cause: err}
		}
	}()
	if v, err := get(db, keyFormat); err != nil || string(v) != format {
		return 0, 0, nil, nil, fmt.Errorf("not a %s database (format %q, %v)", format, v, err)
	}
	if base, rev, err = revisions(db); err != nil {
		return 0, 0, nil, nil, err
	}
	if rev < marked {
		return 0, 0, nil, nil, fmt.Errorf("the database holds revision %d; revision %d was committed: files damaged or lost", rev, marked)
	}
	state, err = scanParts(db, prefixState, func(in *interner, k, v []byte) (storage.Object, error) {
		o, err := decodeStateIn(v, in)
		if err != nil {
			return o, fmt.Errorf("state of %q: %w", k, err)
		}
		if o.Key != string(k) || o.Revision > base {
			return o, fmt.Errorf("state of %q: key %q at revision %d after base %d", k, o.Key, o.Revision, base)
		}
		return o, nil
	})
	if err != nil {
		return 0, 0, nil, nil, err
	}
	log, err = scanParts(db, prefixLog, func(in *interner, k, v []byte) (change, error) {
		if len(k) != 8 {
			return change{}, fmt.Errorf("log: found key %x", k)
		}
		rev := binary.BigEndian.Uint64(k)
		op, o, err := decodeChangeIn(v, in)
		if err != nil {
			return change{}, fmt.Errorf("log at %d: %w", rev, err)
		}
		o.Revision = rev
		return change{rev: rev, op: op, obj: o}, nil
	})
	if err != nil {
		return 0, 0, nil, nil, err
	}
	next := base + 1
	for _, c := range log {
		if c.rev != next {
			return 0, 0, nil, nil, fmt.Errorf("log: found revision %d where revision %d belongs", c.rev, next)
		}
		next++
	}
	if next-1 != rev {
		return 0, 0, nil, nil, fmt.Errorf("log ends at %d; the committed revision is %d", next-1, rev)
	}
	return base, rev, state, log, nil
}

// scanParts decodes every value under prefix and returns them in key
// order. It reads the key space in parts at once, as many as the
// processors the Go runtime uses: start-up is decoding every object,
// and one goroutine would leave the other processors idle (measured:
// BenchmarkOpen; doc.go). The parts are cut at table boundaries, so
// that they hold about as many bytes each. decode is called
// concurrently, with an interner for each part (the maps a part decodes
// are shared among its objects).
func scanParts[T any](db *pebble.DB, prefix byte, decode func(in *interner, k, v []byte) (T, error)) ([]T, error) {
	return scanPartsOf(db, prefix, runtime.GOMAXPROCS(0), decode)
}

// scanPartsOf is scanParts in at most parts parts.
func scanPartsOf[T any](db *pebble.DB, prefix byte, parts int, decode func(in *interner, k, v []byte) (T, error)) ([]T, error) {
	bounds := append([][]byte{{prefix}}, splitKeys(db, prefix, parts)...)
	bounds = append(bounds, []byte{prefix + 1})
	read := make([][]T, len(bounds)-1)
	errs := make([]error, len(read))
	var wg sync.WaitGroup
	for i := range read {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil { // pebble panics on some damaged tables
					errs[i] = fmt.Errorf("reading the database: %v", r)
				}
			}()
			in := newInterner()
			errs[i] = scanRange(db, bounds[i], bounds[i+1], func(k, v []byte) error {
				t, err := decode(in, k[1:], v)
				read[i] = append(read[i], t)
				return err
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(read...), nil
}

// splitKeys returns at most parts-1 keys in ascending order that cut
// the key space under prefix into parts of about as many bytes each,
// at the boundaries of the database's tables (none if it has fewer
// tables than parts, or all in one).
func splitKeys(db *pebble.DB, prefix byte, parts int) [][]byte {
	lo, hi := []byte{prefix}, []byte{prefix + 1}
	levels, err := db.SSTables()
	if err != nil || parts < 2 {
		return nil
	}
	type table struct {
		start []byte
		size  uint64
	}
	var tables []table
	var total uint64
	for _, level := range levels {
		for _, t := range level {
			start := t.Smallest.UserKey
			if bytes.Compare(t.Largest.UserKey, lo) < 0 || bytes.Compare(start, hi) >= 0 {
				continue
			}
			tables = append(tables, table{start, t.Size})
			total += t.Size
		}
	}
	slices.SortFunc(tables, func(a, b table) int { return bytes.Compare(a.start, b.start) })
	var splits [][]byte
	var sum uint64
	for _, t := range tables {
		last := lo
		if len(splits) > 0 {
			last = splits[len(splits)-1]
		}
		if len(splits) < parts-1 && sum >= total*uint64(len(splits)+1)/uint64(parts) && bytes.Compare(t.start, last) > 0 {
			splits = append(splits, bytes.Clone(t.start))
		}
		sum += t.size
	}
	return splits
}

// get reads key's value, copied.
func get(db *pebble.DB, key []byte) ([]byte, error) {
	v, closer, err := db.Get(key)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return bytes.Clone(v), nil
}

// revisions reads the base and the committed revision.
func revisions(db *pebble.DB) (base, rev uint64, err error) {
	var n int
	v, err := get(db, keyBase)
	if base, n = binary.Uvarint(v); err != nil || n <= 0 {
		return 0, 0, fmt.Errorf("no base revision (%v)", err)
	}
	v, err = get(db, keyRevision)
	if rev, n = binary.Uvarint(v); err != nil || n <= 0 || rev < base {
		return 0, 0, fmt.Errorf("no revision (%v)", err)
	}
	return base, rev, nil
}

// scan calls fn for each key (prefix removed) under prefix, in order.
func scan(db *pebble.DB, prefix byte, fn func(k, v []byte) error) error {
	return scanRange(db, []byte{prefix}, []byte{prefix + 1}, func(k, v []byte) error { return fn(k[1:], v) })
}

// scanRange calls fn for each key in [lo, hi), in order.
func scanRange(db *pebble.DB, lo, hi []byte, fn func(k, v []byte) error) error {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

// commit appends records (change records at revisions first, first+1, …)
// to the log, makes the last one the committed revision and folds the
// log up to fold; one batch, synced before it returns (one fdatasync of
// pebble's log).
func (d *disk) commit(first uint64, records [][]byte, fold uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.ready(); err != nil {
		return err
	}
	b := d.db.NewBatch()
	defer b.Close()
	for i, r := range records {
		b.Set(logKey(first+uint64(i)), r, nil)
	}
	last := first + uint64(len(records)) - 1
	if len(records) > 0 {
		b.Set(keyRevision, uvarint(last), nil)
	}
	if _, err := d.foldBatch(b, fold); err != nil {
		return err
	}
	if err := d.write(b); err != nil {
		return err
	}
	if len(records) > 0 {
		d.synced = last
		d.marker.write(last)
	}
	return nil
}

// foldChunk bounds the changes one batch folds (a batch folds at most
// this much besides its writes).
const foldChunk = 2048

// foldBatch adds to b the folding of at most foldChunk of the log's
// changes at and before to into the state (the latest change of each
// key wins), and reports whether changes at or before to remain.
// Callers hold mu.
func (d *disk) foldBatch(b *pebble.Batch, to uint64) (more bool, err error) {
	base, _, err := revisions(d.db)
	if err != nil {
		return false, err
	}
	if to <= base {
		return false, nil
	}
	type folded struct {
		rev  uint64
		op   byte
		body []byte
	}
	latest := map[string]folded{}
	last, n := base, 0
	err = scan(d.db, prefixLog, func(k, v []byte) error {
		rev := binary.BigEndian.Uint64(k)
		if rev > to || n == foldChunk {
			return errStop
		}
		op, o, err := decodeChange(v)
		if err != nil {
			return fmt.Errorf("log at %d: %w", rev, err)
		}
		latest[o.Key] = folded{rev, op, slices.Clone(v[1:])}
		last, n = rev, n+1
		return nil
	})
	if err != nil && err != errStop {
		return false, err
	}
	if last == base { // the log ends before to: nothing to fold
		return false, nil
	}
	for _, key := range slices.Sorted(maps.Keys(latest)) {
		f := latest[key]
		if f.op == opDelete {
			err = b.Delete(stateKey(key), nil)
		} else {
			err = b.Set(stateKey(key), stateRecord(f.rev, f.body), nil)
		}
		if err != nil {
			return false, err
		}
	}
	if err := b.DeleteRange(logKey(base+1), logKey(last+1), nil); err != nil {
		return false, err
	}
	return last < to, b.Set(keyBase, uvarint(last), nil)
}

var errStop = errors.New("stop")

// fold compacts the database to rev, in batches of foldChunk changes.
func (d *disk) fold(rev uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for more := true; more; {
		if err := d.ready(); err != nil {
			return err
		}
		b := d.db.NewBatch()
		var err error
		more, err = d.foldBatch(b, rev)
		if err == nil {
			err = d.write(b)
		}
		b.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// revision reads the committed revision (reopening the database after
// a failed commit: what reached its files).
func (d *disk) revision() (uint64, error) {
	if d.db == nil || d.failed != nil {
		if err := d.ready(); err != nil {
			return 0, err
		}
	}
	_, rev, err := revisions(d.db)
	return rev, err
}

// committed is revision for callers that do not hold mu.
func (d *disk) committed() (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.revision()
}

// initialRevision is an empty store's revision, as the memory store's.
const initialRevision = 1
