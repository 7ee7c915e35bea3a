package durable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/kapi-dev/kapi/storage"
)

// The bbolt file, FileName in the data directory:
//
//	meta   format   "kapi-durable/1"
//	       base     B, uvarint: the state bucket is the state at B
//	       revision N, uvarint: the last committed revision
//	state  key → state record (revision, object): the state at B
//	log    revision (8 bytes big-endian) → change, for every revision in (B, N]
//
// The state at N is the state at B with the log applied in order. A
// compaction to C folds the log's changes up to C into the state bucket
// and deletes them, in one transaction (base = C). For example:
//
//	B=4  state {a@3}         log 5:put b, 6:put a, 7:delete b
//	compact 6 → B=6  state {a@6, b@5}  log 7:delete b
const (
	// FileName is the bbolt file in the data directory.
	FileName = "kapi.db"
	format   = "kapi-durable/1"
)

var (
	bucketMeta  = []byte("meta")
	bucketState = []byte("state")
	bucketLog   = []byte("log")
	keyFormat   = []byte("format")
	keyBase     = []byte("base")
	keyRevision = []byte("revision")
)

func revKey(rev uint64) []byte { return binary.BigEndian.AppendUint64(nil, rev) }

func uvarint(v uint64) []byte { return binary.AppendUvarint(nil, v) }

// disk is the bbolt file. Its writers (commit, fold) are serialized by
// bbolt's writer lock.
type disk struct {
	db   *bolt.DB
	path string
}

// boltOptions: fsync on every commit (bbolt's default), and a bounded
// wait for the file lock held by another process. The freelist is
// written with every commit (unlike etcd, which rebuilds it at open):
// rebuilding it reads every page in a goroutine of bbolt's own, where a
// page past the end of a truncated file faults beyond recovery; read
// from its page, it is read in Open's goroutine, where openBolt turns
// the fault into ErrCorrupt. Pages are bbolt's default, the OS page
// (4 KiB): 16 KiB pages pack 2 KiB objects tighter (1.1–1.3× their size
// on disk instead of 1.95×) but made a synced commit ~15% slower
// (BENCHMARKS.md).
func boltOptions(readOnly bool) *bolt.Options {
	return &bolt.Options{
		Timeout:      time.Second,
		FreelistType: bolt.FreelistMapType,
		ReadOnly:     readOnly,
	}
}

// openDisk opens (or creates) the file in dir. A new file is initialized
// beside it and renamed into place, so that FileName always names an
// initialized database: an empty or short one is damage, never "new".
func openDisk(dir string) (_ *disk, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	if err := probe(dir); err != nil {
		return nil, &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	path := filepath.Join(dir, FileName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := initFile(dir, path); err != nil {
			return nil, &OpenError{Path: path, Err: ErrNotWritable, Cause: err}
		}
	}
	db, err := openBolt(path, false)
	if err != nil {
		return nil, err
	}
	return &disk{db: db, path: path}, nil
}

// openBolt opens path and checks it is a whole kapi database. Reading
// pages past the end of a truncated file faults (SIGBUS) instead of
// failing: the fault is turned into ErrCorrupt.
func openBolt(path string, readOnly bool) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &OpenError{Path: path, Err: ErrCorrupt, Cause: fmt.Errorf("reading the file faulted (truncated?): %v", r)}
		}
	}()
	info, err := os.Stat(path)
	if err != nil {
		return nil, &OpenError{Path: path, Err: ErrCorrupt, Cause: err}
	}
	if info.Size() == 0 { // bbolt would make it a new, empty database
		return nil, &OpenError{Path: path, Err: ErrCorrupt, Cause: errors.New("the file is empty")}
	}
	db, err = bolt.Open(path, 0o600, boltOptions(readOnly))
	if err != nil {
		sentinel := ErrCorrupt
		switch {
		case errors.Is(err, os.ErrPermission):
			sentinel = ErrNotWritable
		case errors.Is(err, berrors.ErrTimeout):
			sentinel = ErrLocked
		}
		return nil, &OpenError{Path: path, Err: sentinel, Cause: err}
	}
	err = db.View(func(tx *bolt.Tx) error {
		if size := tx.Size(); size > info.Size() {
			return fmt.Errorf("the file has %d bytes; its pages reach %d", info.Size(), size)
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil || string(meta.Get(keyFormat)) != format {
			return fmt.Errorf("not a %s database", format)
		}
		if tx.Bucket(bucketState) == nil || tx.Bucket(bucketLog) == nil {
			return errors.New("a bucket is missing")
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, &OpenError{Path: path, Err: ErrCorrupt, Cause: err}
	}
	return db, nil
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

// initFile creates an empty kapi database at path, atomically.
func initFile(dir, path string) error {
	tmp := path + ".init"
	os.Remove(tmp)
	db, err := bolt.Open(tmp, 0o600, boltOptions(false))
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		for _, b := range [][]byte{bucketState, bucketLog} {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		for k, v := range map[string][]byte{string(keyFormat): []byte(format), string(keyBase): uvarint(initialRevision), string(keyRevision): uvarint(initialRevision)} {
			if err := meta.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// initialRevision is an empty store's revision, as the memory store's.
const initialRevision = 1

// change is one entry of the log.
type change struct {
	rev uint64
	op  byte
	obj storage.Object
}

// load reads the file: the state at base, and the log's changes after it.
func (d *disk) load() (base, rev uint64, state []storage.Object, log []change, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &OpenError{Path: d.path, Err: ErrCorrupt, Cause: fmt.Errorf("reading the file faulted (truncated?): %v", r)}
		}
	}()
	err = d.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		var n int
		if base, n = binary.Uvarint(meta.Get(keyBase)); n <= 0 {
			return errors.New("no base revision")
		}
		if rev, n = binary.Uvarint(meta.Get(keyRevision)); n <= 0 || rev < base {
			return errors.New("no revision")
		}
		err := tx.Bucket(bucketState).ForEach(func(k, v []byte) error {
			o, err := decodeState(v)
			if err != nil {
				return fmt.Errorf("state of %q: %w", k, err)
			}
			if o.Key != string(k) || o.Revision > base {
				return fmt.Errorf("state of %q: key %q at revision %d after base %d", k, o.Key, o.Revision, base)
			}
			state = append(state, o)
			return nil
		})
		if err != nil {
			return err
		}
		next := base + 1
		err = tx.Bucket(bucketLog).ForEach(func(k, v []byte) error {
			if len(k) != 8 || binary.BigEndian.Uint64(k) != next {
				return fmt.Errorf("log: found key %x where revision %d belongs", k, next)
			}
			op, o, err := decodeChange(v)
			if err != nil {
				return fmt.Errorf("log at %d: %w", next, err)
			}
			o.Revision = next
			log = append(log, change{rev: next, op: op, obj: o})
			next++
			return nil
		})
		if err != nil {
			return err
		}
		if next-1 != rev {
			return fmt.Errorf("log ends at %d; the committed revision is %d", next-1, rev)
		}
		return nil
	})
	if err != nil {
		if _, ok := err.(*OpenError); !ok {
			err = &OpenError{Path: d.path, Err: ErrCorrupt, Cause: err}
		}
	}
	return base, rev, state, log, err
}

// commit appends records (change records at revisions first, first+1, …)
// to the log, makes the last one the committed revision and folds the
// log up to fold; one transaction, synced before it returns.
func (d *disk) commit(first uint64, records [][]byte, fold uint64) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		log := tx.Bucket(bucketLog)
		log.FillPercent = 1 // keys only ever grow: full pages
		for i, r := range records {
			if err := log.Put(revKey(first+uint64(i)), r); err != nil {
				return err
			}
		}
		if len(records) > 0 {
			if err := tx.Bucket(bucketMeta).Put(keyRevision, uvarint(first+uint64(len(records))-1)); err != nil {
				return err
			}
		}
		_, err := foldTx(tx, fold)
		return err
	})
}

// foldChunk bounds the changes one transaction folds: bbolt keeps the
// nodes a transaction touches in memory until Commit, where a node that
// grew by k inserts costs O(k²) moves, so a large compaction is many
// small transactions (and a batch folds at most this much besides its
// writes).
const foldChunk = 2048

// foldTx moves at most foldChunk of the log's changes at and before to
// into the state bucket, in key order (the latest change of each key
// wins), and reports whether changes at or before to remain.
func foldTx(tx *bolt.Tx, to uint64) (more bool, err error) {
	meta := tx.Bucket(bucketMeta)
	base, _ := binary.Uvarint(meta.Get(keyBase))
	if to <= base {
		return false, nil
	}
	type folded struct {
		rev  uint64
		op   byte
		body []byte
	}
	latest := map[string]folded{}
	var revs [][]byte
	last := base
	c := tx.Bucket(bucketLog).Cursor()
	for k, v := c.First(); k != nil && len(revs) < foldChunk; k, v = c.Next() {
		rev := binary.BigEndian.Uint64(k)
		if rev > to {
			break
		}
		op, o, err := decodeChange(v)
		if err != nil {
			return false, fmt.Errorf("log at %d: %w", rev, err)
		}
		latest[o.Key] = folded{rev, op, slices.Clone(v[1:])}
		revs = append(revs, slices.Clone(k))
		last = rev
	}
	state := tx.Bucket(bucketState)
	state.FillPercent = 0.9
	for _, key := range slices.Sorted(maps.Keys(latest)) {
		f := latest[key]
		if f.op == opDelete {
			err = state.Delete([]byte(key))
		} else {
			err = state.Put([]byte(key), stateRecord(f.rev, f.body))
		}
		if err != nil {
			return false, err
		}
	}
	log := tx.Bucket(bucketLog)
	for _, k := range revs {
		if err := log.Delete(k); err != nil {
			return false, err
		}
	}
	if last == base { // the log ends before to: nothing to fold
		return false, nil
	}
	return last < to, meta.Put(keyBase, uvarint(last))
}

// fold compacts the file to rev, in transactions of foldChunk changes.
func (d *disk) fold(rev uint64) error {
	for more := true; more; {
		err := d.db.Update(func(tx *bolt.Tx) error {
			var err error
			more, err = foldTx(tx, rev)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// revision reads the committed revision.
func (d *disk) revision() (uint64, error) {
	var rev uint64
	err := d.db.View(func(tx *bolt.Tx) error {
		var n int
		if rev, n = binary.Uvarint(tx.Bucket(bucketMeta).Get(keyRevision)); n <= 0 {
			return errors.New("no revision")
		}
		return nil
	})
	return rev, err
}

// backup writes a consistent copy of the file to w.
func (d *disk) backup(w io.Writer) (int64, error) {
	var n int64
	err := d.db.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}
