package durable

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// History is how long changes are kept at least, in memory and on
	// disk, for watches and Exact reads (default watch.DefaultHistory,
	// 5 minutes): compaction by age.
	History time.Duration
	// MaxEvents bounds the history by count (default
	// watch.DefaultMaxEvents): compaction by size.
	MaxEvents int
	// Wait is how long a read or watch at a revision newer than the
	// store's waits for it (default 3s), as memory.Options.Wait.
	Wait time.Duration
	// Tokens encode continue tokens (zero: a fresh random secret, so
	// tokens do not survive a restart: their lists answer 410).
	Tokens rv.Tokens
	// Snapshots and BookmarkInterval are the memory store's.
	Snapshots        int
	BookmarkInterval time.Duration
	// Clock ages the history (default time.Now).
	Clock func() time.Time
}

// Store is the durable store. All methods are safe for concurrent use.
type Store struct {
	mem  *memory.Store
	disk *disk

	mu      sync.Mutex
	kick    chan struct{}     // a token when the queue grew or the store closed
	last    uint64            // the last revision handed out to a write
	queue   *batch            // the writes waiting for the next commit
	pending map[string]*batch // keys with a write handed out and not yet in memory
	broken  error             // set when memory and disk may disagree: writes refused
	closed  bool
	stopped chan struct{} // closed when the committer has ended

	compactMu sync.Mutex // serializes Compact

	statsMu sync.Mutex
	stats   Stats // the committer's counts
}

// Stats count the committer's work since Open: how many writes shared
// each sync, and where a commit's time went. Throughput at N concurrent
// writers is Writes / (Gather + Disk + Memory): at most N writes a
// commit, so at most N writes per sync of the disk.
type Stats struct {
	// Commits is the pebble batches committed (one sync each), Writes
	// the writes they held.
	Commits, Writes int64
	// Gather is the time spent waiting for writers before commits, Disk
	// the commits' time in pebble (the sync included), Memory applying
	// them to the memory store.
	Gather, Disk, Memory time.Duration
}

// Stats returns the committer's counts since Open.
func (s *Store) Stats() Stats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.stats
}

// batch is the writes of one commit (one pebble batch, one sync).
type batch struct {
	ops  []*op
	done chan struct{} // closed once the batch is in memory, or failed
	err  error         // why the batch was not committed
}

// op is one write: the change record, its revision and, once applied,
// its result.
type op struct {
	op  byte
	key string
	obj storage.Object // what to store (put) or the state deleted (delete)
	rec []byte         // the change record
	rev uint64

	res storage.Object // the result, set by the committer
	err error          // a failure to apply in memory
}

var _ storage.Interface = (*Store)(nil)

// Open opens the store kept in dir (created if needed), reading its
// state and history into memory. Errors are *OpenError values: the
// directory is not writable (ErrNotWritable), another store has it open
// (ErrLocked) or its files are damaged (ErrCorrupt); they are left as
// they were then.
func Open(dir string, opts Options) (*Store, error) {
	d, err := openDisk(dir)
	if err != nil {
		return nil, err
	}
	base, rev, state, log := d.load()
	base, state, log = trimLog(base, state, log, opts.MaxEvents)
	mem := memory.New(memory.Options{
		History:          opts.History,
		MaxEvents:        opts.MaxEvents,
		Wait:             opts.Wait,
		Tokens:           opts.Tokens,
		Snapshots:        opts.Snapshots,
		BookmarkInterval: opts.BookmarkInterval,
		Clock:            opts.Clock,
		Revision:         base,
		Objects:          slices.Values(state),
	})
	for _, c := range log {
		if _, err := apply(mem, c.op, c.obj, c.rev); err != nil {
			mem.Close()
			d.close()
			return nil, &OpenError{Path: d.path, Err: ErrCorrupt, Cause: err}
		}
	}
	s := &Store{
		mem:     mem,
		disk:    d,
		last:    rev,
		queue:   &batch{done: make(chan struct{})},
		pending: map[string]*batch{},
		stopped: make(chan struct{}),
		kick:    make(chan struct{}, 1),
	}
	go s.commitLoop()
	return s, nil
}

// trimLog applies to the state the changes the memory store's history
// would drop at once for its bound on count (maxEvents, 0 for the
// default): replaying them would only build a history to forget. The
// file catches up at the next commit, which folds its log up to the
// memory store's oldest revision.
func trimLog(base uint64, state []storage.Object, log []change, maxEvents int) (uint64, []storage.Object, []change) {
	if maxEvents <= 0 {
		maxEvents = watch.DefaultMaxEvents
	}
	skip := len(log) - maxEvents
	if skip <= 0 {
		return base, state, log
	}
	at := make(map[string]int, len(state)+skip) // sized once: growing it was a third of trimLog at 1M changes
	state = slices.Grow(state, skip)
	for i, o := range state {
		at[o.Key] = i
	}
	for _, c := range log[:skip] {
		i, ok := at[c.obj.Key]
		switch {
		case c.op == opDelete && ok:
			state[i] = storage.Object{} // removed below
			delete(at, c.obj.Key)
		case c.op == opPut && ok:
			state[i] = c.obj
		case c.op == opPut:
			at[c.obj.Key] = len(state)
			state = append(state, c.obj)
		}
	}
	kept := state[:0]
	for _, o := range state {
		if o.Key != "" {
			kept = append(kept, o)
		}
	}
	return log[skip-1].rev, kept, log[skip:]
}

// apply makes a committed change in mem, which must give it revision rev.
func apply(mem *memory.Store, op byte, obj storage.Object, rev uint64) (storage.Object, error) {
	ctx := context.Background()
	var res storage.Object
	var err error
	switch op {
	case opDelete:
		res, err = mem.Delete(ctx, obj.Key, storage.DeleteOptions{})
	default:
		res, err = mem.Create(ctx, obj)
		if storage.IsExists(err) {
			res, err = mem.GuaranteedUpdate(ctx, obj.Key, storage.UpdateOptions{}, func(storage.Object) (storage.Object, error) {
				return obj, nil
			})
		}
	}
	if err != nil {
		return res, fmt.Errorf("applying revision %d to %q: %w", rev, obj.Key, err)
	}
	if got, _ := mem.Revision(ctx); got != rev {
		return res, fmt.Errorf("applying revision %d to %q: the memory store is at %d", rev, obj.Key, got)
	}
	return res, nil
}

// Close waits for the writes under way, ends every watch and closes the
// file. Writes after Close fail with ErrUnavailable.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.signal()
	s.mu.Unlock()
	<-s.stopped
	s.mem.Close()
	return s.disk.close()
}

// Tokens returns the keys of the Store's continue tokens, for a cache in
// front of it (storage/cache).
func (s *Store) Tokens() rv.Tokens { return s.mem.Tokens() }

// Path is the pebble database's directory (DirName in the data
// directory).
func (s *Store) Path() string { return s.disk.path }

// Reads and watches are the memory store's.

func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions) (storage.Object, error) {
	return s.mem.Get(ctx, key, opts)
}

func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	return s.mem.List(ctx, prefix, opts)
}

func (s *Store) Watch(ctx context.Context, key string, opts storage.WatchOptions) (watch.Interface, error) {
	return s.mem.Watch(ctx, key, opts)
}

func (s *Store) Revision(ctx context.Context) (uint64, error) { return s.mem.Revision(ctx) }

// Compact forgets the history before rev, in memory and on disk (the
// disk's before Compact returns, so a restart does not bring it back).
func (s *Store) Compact(ctx context.Context, rev uint64) error {
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	if err := s.mem.Compact(ctx, rev); err != nil {
		return err
	}
	if err := s.disk.fold(s.mem.Oldest()); err != nil {
		return &storage.Error{Err: storage.ErrUnavailable, Msg: "durable: compaction not written: " + err.Error()}
	}
	return nil
}

// Create stores obj under obj.Key at the next revision, once on disk.
func (s *Store) Create(ctx context.Context, obj storage.Object) (storage.Object, error) {
	if obj.Key == "" {
		return storage.Object{}, storage.NewError(storage.ErrInvalid, "", "empty key")
	}
	obj.Revision, obj.Memo = 0, nil
	rec := encodeChange(opPut, obj)
	for {
		s.mu.Lock()
		if err := s.writable(obj.Key); err != nil {
			s.mu.Unlock()
			return storage.Object{}, err
		}
		if b := s.pending[obj.Key]; b != nil {
			s.mu.Unlock()
			if err := waitBatch(ctx, b); err != nil {
				return storage.Object{}, err
			}
			continue
		}
		if _, err := s.mem.Get(ctx, obj.Key, storage.GetOptions{}); !storage.IsNotFound(err) {
			s.mu.Unlock()
			if err == nil {
				rev, _ := s.mem.Revision(ctx)
				err = &storage.Error{Err: storage.ErrExists, Key: obj.Key, Revision: rev}
			}
			return storage.Object{}, err
		}
		b, o := s.enqueue(opPut, obj, rec)
		s.mu.Unlock()
		return s.await(b, o)
	}
}

// GuaranteedUpdate reads key, calls fn, and stores its result if key
// still holds the state fn saw (otherwise it tries again), as the memory
// store does; a result equal to the current state is not written.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, opts storage.UpdateOptions, fn storage.UpdateFunc) (storage.Object, error) {
	for {
		cur, err := s.settled(ctx, key, opts.Preconditions)
		if err != nil {
			return storage.Object{}, err
		}
		next, err := fn(cur)
		if err != nil {
			return storage.Object{}, err
		}
		next.Key, next.Revision, next.Memo = key, 0, nil
		rec := encodeChange(opPut, next)
		s.mu.Lock()
		if !s.current(key, cur) {
			s.mu.Unlock()
			continue
		}
		if same(cur, next) {
			s.mu.Unlock()
			return cur, nil
		}
		if err := s.writable(key); err != nil {
			s.mu.Unlock()
			return storage.Object{}, err
		}
		b, o := s.enqueue(opPut, next, rec)
		s.mu.Unlock()
		return s.await(b, o)
	}
}

// Delete removes key and returns its last state.
func (s *Store) Delete(ctx context.Context, key string, opts storage.DeleteOptions) (storage.Object, error) {
	rec := encodeChange(opDelete, storage.Object{Key: key})
	for {
		cur, err := s.settled(ctx, key, opts.Preconditions)
		if err != nil {
			return storage.Object{}, err
		}
		if opts.Validate != nil {
			if err := opts.Validate(cur); err != nil {
				return storage.Object{}, err
			}
		}
		s.mu.Lock()
		if !s.current(key, cur) {
			s.mu.Unlock()
			continue
		}
		if err := s.writable(key); err != nil {
			s.mu.Unlock()
			return storage.Object{}, err
		}
		b, o := s.enqueue(opDelete, cur, rec)
		s.mu.Unlock()
		return s.await(b, o)
	}
}

// settled returns key's state once no write to it is under way, after
// checking p on it.
func (s *Store) settled(ctx context.Context, key string, p storage.Preconditions) (storage.Object, error) {
	for {
		if err := ctx.Err(); err != nil {
			return storage.Object{}, err
		}
		s.mu.Lock()
		b := s.pending[key]
		s.mu.Unlock()
		if b != nil {
			if err := waitBatch(ctx, b); err != nil {
				return storage.Object{}, err
			}
			continue
		}
		cur, err := s.mem.Get(ctx, key, storage.GetOptions{})
		if err != nil {
			return storage.Object{}, err
		}
		if err := p.Check(key, cur); err != nil {
			return storage.Object{}, err
		}
		return cur, nil
	}
}

// current reports whether cur is still key's state with no write to it
// under way. Callers hold mu.
func (s *Store) current(key string, cur storage.Object) bool {
	if s.pending[key] != nil {
		return false
	}
	now, err := s.mem.Get(context.Background(), key, storage.GetOptions{})
	return err == nil && now.Revision == cur.Revision
}

// writable is nil, or why writes are refused. Callers hold mu.
func (s *Store) writable(key string) error {
	switch {
	case s.closed:
		return &storage.Error{Err: storage.ErrUnavailable, Key: key, Msg: "durable: the store is closed"}
	case s.broken != nil:
		return &storage.Error{Err: storage.ErrUnavailable, Key: key, Msg: "durable: writes stopped, reopen the store: " + s.broken.Error()}
	}
	return nil
}

// enqueue hands the next revision to a write and queues it for the next
// commit. Callers hold mu and checked writable.
func (s *Store) enqueue(kind byte, obj storage.Object, rec []byte) (*batch, *op) {
	s.last++
	o := &op{op: kind, key: obj.Key, obj: obj, rec: rec, rev: s.last}
	b := s.queue
	b.ops = append(b.ops, o)
	s.pending[o.key] = b
	s.signal()
	return b, o
}

// signal wakes the committer.
func (s *Store) signal() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// await waits for o's batch and returns o's result. A committed write is
// waited for whatever ctx says: its outcome is then known.
func (s *Store) await(b *batch, o *op) (storage.Object, error) {
	<-b.done
	if b.err != nil {
		return storage.Object{}, &storage.Error{Err: storage.ErrUnavailable, Key: o.key,
			Msg: "durable: the write was not committed to disk, nothing changed: " + b.err.Error()}
	}
	if o.err != nil {
		return storage.Object{}, &storage.Error{Err: storage.ErrTimeout, Key: o.key, Msg: "durable: " + o.err.Error()}
	}
	return o.res, nil
}

func waitBatch(ctx context.Context, b *batch) error {
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// commitLoop is the one committer: it takes every write queued so far,
// commits them in one pebble batch (one sync for all: group
// commit), applies them to memory in revision order and wakes their
// writers. Writes queued meanwhile make the next batch.
//
// Before a commit it waits briefly for the writers the last commit
// answered: they come back within microseconds with their next write,
// while a commit takes milliseconds. Without the wait, N busy writers
// split into two halves that alternate, N/2 writes a commit: measured
// 7.9 writes a commit for 16 writers. It waits until the queue holds as
// many writes as the last commit answered plus those that queued during
// it (the writers known to be busy), for at most the last commit's time
// and maxGather: one writer, or writers that went quiet, cost at most
// that once. (The bound was a quarter of the last commit's time; on the
// shared 2-core machine, where writers wait for a processor to come
// back, 16 writers then made 11.9–13.2 writes a commit, and 13.3–15.4
// with the whole commit's time: BenchmarkWriters, alternately. A full
// batch is what a sync can give: at N writers, at most N writes a sync.)
func (s *Store) commitLoop() {
	defer close(s.stopped)
	var answered int       // writes the last commit answered
	var arrived int        // writes that queued while it ran
	var took time.Duration // how long it took
	for {
		s.mu.Lock()
		n, closed := len(s.queue.ops), s.closed
		s.mu.Unlock()
		if n == 0 {
			if closed {
				return
			}
			<-s.kick
			continue
		}
		if want := answered + arrived; n < want && !closed {
			t := time.Now()
			s.gather(want, min(took, maxGather))
			s.statsMu.Lock()
			s.stats.Gather += time.Since(t)
			s.statsMu.Unlock()
		}
		s.mu.Lock()
		b := s.queue
		s.queue = &batch{done: make(chan struct{})}
		s.mu.Unlock()
		start := time.Now()
		s.commit(b)
		took = time.Since(start)
		answered = len(b.ops)
		s.mu.Lock()
		arrived = len(s.queue.ops)
		s.mu.Unlock()
	}
}

// maxGather bounds the committer's wait for writers to come back.
const maxGather = time.Millisecond

// gather waits until the queue holds want writes, for at most d.
func (s *Store) gather(want int, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-s.kick:
		case <-t.C:
			return
		}
		s.mu.Lock()
		n, closed := len(s.queue.ops), s.closed
		s.mu.Unlock()
		if n >= want || closed {
			return
		}
	}
}

// commit writes b to disk, then to memory.
func (s *Store) commit(b *batch) {
	records := make([][]byte, len(b.ops))
	for i, o := range b.ops {
		records[i] = o.rec
	}
	t := time.Now()
	err := s.disk.commit(b.ops[0].rev, records, s.mem.Oldest())
	diskTime := time.Since(t)
	t = time.Now()
	var broken error
	if err == nil {
		for _, o := range b.ops {
			if broken != nil {
				o.err = broken
				continue
			}
			o.res, o.err = apply(s.mem, o.op, o.obj, o.rev)
			broken = o.err
		}
	}
	s.statsMu.Lock()
	s.stats.Commits++
	s.stats.Writes += int64(len(b.ops))
	s.stats.Disk += diskTime
	s.stats.Memory += time.Since(t)
	s.statsMu.Unlock()
	s.mu.Lock()
	for _, o := range b.ops {
		if s.pending[o.key] == b {
			delete(s.pending, o.key)
		}
	}
	var failed *batch
	if err != nil {
		// Nothing of b is in memory. The writes queued after it were
		// given revisions after b's: fail them too, and hand out b's
		// revisions again, unless the file holds more than memory (the
		// commit failed after its meta page was written): then memory
		// and disk may disagree until the store is reopened.
		b.err = err
		failed, s.queue = s.queue, &batch{done: make(chan struct{})}
		failed.err = err
		for _, o := range failed.ops {
			delete(s.pending, o.key)
		}
		rev, _ := s.mem.Revision(context.Background())
		s.last = rev
		if onDisk, rerr := s.disk.committed(); rerr != nil || onDisk != rev {
			broken = fmt.Errorf("a failed commit may have reached the file (revision %d on disk, %d in memory): %v", onDisk, rev, err)
		}
	}
	if broken != nil && s.broken == nil {
		s.broken = broken
	}
	s.mu.Unlock()
	close(b.done)
	if failed != nil {
		close(failed.done)
	}
}

// same reports whether an update would store what is already there (the
// memory store's rule: no write, no event).
func same(a, b storage.Object) bool {
	return a.UID == b.UID && bytes.Equal(a.Value, b.Value) &&
		maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Fields, b.Fields)
}
