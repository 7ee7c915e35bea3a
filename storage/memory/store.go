package memory

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
	"github.com/kapi-dev/kapi/storage/internal/revlru"
	"github.com/kapi-dev/kapi/watch"
)

// Defaults for Options.
const (
	DefaultWait      = 3 * time.Second
	DefaultSnapshots = 32
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// History is how long changes are kept at least, for watches and
	// Exact reads (default watch.DefaultHistory, 5 minutes).
	History time.Duration
	// MaxEvents bounds the history by count (default
	// watch.DefaultMaxEvents).
	MaxEvents int
	// Wait is how long a read or watch at a revision newer than the
	// store's waits for it before failing with ErrTooLarge (default 3s;
	// the request's ctx bounds it too).
	Wait time.Duration
	// Tokens encode continue tokens (zero: a fresh random secret).
	Tokens rv.Tokens
	// Snapshots bounds the snapshots kept for paginated lists and
	// Exact reads (default 32, least recently used evicted first).
	Snapshots int
	// BookmarkInterval is the period of bookmarks for watches that ask
	// for them (default watch.DefaultBookmarkInterval, 1 minute).
	BookmarkInterval time.Duration
	// Clock ages the history (default time.Now).
	Clock func() time.Time
	// Revision is the revision the store starts at (default 1, an empty
	// store's). With Objects it restores a state kept elsewhere: a
	// durable backend (storage/durable) starts its memory store at the
	// revision of its on-disk state, so revisions go on increasing
	// across restarts. Reads and watches at older revisions fail with
	// ErrExpired: the history starts at Revision.
	Revision uint64
	// Objects is the state at Revision the store starts with, each
	// object keeping its own Revision (at most Revision; zero is read as
	// Revision). Keys must be distinct and non-empty.
	Objects iter.Seq[storage.Object]
}

// initialRevision is the revision of an empty store, as in etcd: the
// first write gets revision 2, and a list of an empty store never
// reports resourceVersion "0", which clients read as "any".
const initialRevision = 1

// written is the allocation of a write: its item and the state's Memo
// (obj.Memo points to it), one allocation instead of two. Lookups use a
// bare item.
type written struct {
	item keytree.Item
	memo storage.Memo
}

// newItem returns the item of a state written now: obj gets a new Memo,
// replacing the caller's.
func newItem(obj storage.Object) *keytree.Item {
	w := &written{item: keytree.Item{Key: obj.Key}}
	obj.Memo = &w.memo
	w.item.Obj = obj
	return &w.item
}

// Store is the in-memory MVCC store. All methods are safe for concurrent
// use.
//
// Writes take mu exclusively and publish their change to the log before
// releasing it; reads of the current state hold mu shared. Because the
// log only grows under mu, a reader holding mu sees a tree and a log
// that agree: the tree is the state at rev, and undoing the log's changes
// after N yields the state at N.
type Store struct {
	mu    sync.RWMutex
	live  keytree.Live  // the current state, guarded by mu
	rev   atomic.Uint64 // current revision; written under mu
	log   *watch.Broadcaster
	snaps revlru.Cache[*keytree.Snapshot]
	opts  Options
}

var _ storage.Interface = (*Store)(nil)

// Tokens returns the keys of the Store's continue tokens, for a cache in
// front of it (storage/cache) to issue tokens the Store accepts.
func (s *Store) Tokens() rv.Tokens { return s.opts.Tokens }

// New returns a Store at opts.Revision (1 by default) holding
// opts.Objects (none by default).
func New(opts Options) *Store {
	if opts.Revision == 0 {
		opts.Revision = initialRevision
	}
	if opts.Wait <= 0 {
		opts.Wait = DefaultWait
	}
	if opts.Tokens.Secret == nil {
		opts.Tokens = rv.NewTokens()
	}
	if opts.Snapshots <= 0 {
		opts.Snapshots = DefaultSnapshots
	}
	s := &Store{
		live: keytree.Live{Tree: keytree.New(), Dirs: keytree.Dirs{}},
		log: watch.NewBroadcaster(watch.Options{
			History:          opts.History,
			MaxEvents:        opts.MaxEvents,
			BookmarkInterval: opts.BookmarkInterval,
			Revision:         opts.Revision,
			Clock:            opts.Clock,
		}),
		snaps: revlru.Cache[*keytree.Snapshot]{Max: opts.Snapshots},
		opts:  opts,
	}
	if opts.Objects != nil {
		for obj := range opts.Objects {
			if obj.Revision == 0 || obj.Revision > opts.Revision {
				obj.Revision = opts.Revision
			}
			if _, dup := s.live.Tree.ReplaceOrInsert(newItem(obj)); !dup {
				s.live.Dirs.Add(obj.Key, 1)
			}
		}
	}
	s.rev.Store(opts.Revision)
	if opts.Revision > initialRevision {
		s.log.Compact(opts.Revision) // no history before the restored state
	}
	return s
}

// Oldest returns the oldest revision reads and watches are served at:
// older ones were compacted (by Compact, or by age and count as
// Options.History and MaxEvents set).
func (s *Store) Oldest() uint64 { return s.log.Oldest() }

// Close ends every watch. The store stays readable and writable.
func (s *Store) Close() { s.log.Close() }

// Revision returns the current revision.
func (s *Store) Revision(context.Context) (uint64, error) { return s.rev.Load(), nil }

// Create stores obj under obj.Key at the next revision.
func (s *Store) Create(_ context.Context, obj storage.Object) (storage.Object, error) {
	if obj.Key == "" {
		return storage.Object{}, storage.NewError(storage.ErrInvalid, "", "empty key")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	obj.Revision = s.rev.Load() + 1
	it := newItem(obj)
	if old, ok := s.live.Tree.ReplaceOrInsert(it); ok {
		s.live.Tree.ReplaceOrInsert(old)
		return storage.Object{}, &storage.Error{Err: storage.ErrExists, Key: obj.Key, Revision: s.rev.Load()}
	}
	s.live.Dirs.Add(obj.Key, 1)
	s.commit(watch.Change{Type: watch.Added, Revision: obj.Revision, Object: it.Obj})
	return it.Object(), nil
}

// Get reads key at the revision opts choose.
func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions) (storage.Object, error) {
	if opts.Match == rv.NotOlderThan || opts.Match == rv.Exact {
		if err := s.waitFor(ctx, key, opts.Revision); err != nil {
			return storage.Object{}, err
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if opts.Match == rv.Exact && opts.Revision != 0 && opts.Revision < s.rev.Load() {
		return s.getAt(key, opts.Revision)
	}
	it, ok := s.live.Tree.Get(&keytree.Item{Key: key})
	if !ok {
		return storage.Object{}, &storage.Error{Err: storage.ErrNotFound, Key: key, Revision: s.rev.Load()}
	}
	return it.Object(), nil
}

// GuaranteedUpdate reads key, calls fn outside the lock, and stores its
// result if key still holds the state fn saw; otherwise it tries again.
// A result equal to the current state (same bytes, UID, labels and fields)
// is not written: the current state is returned with its revision and no
// event is sent, as kube-apiserver does for no-op updates.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, opts storage.UpdateOptions, fn storage.UpdateFunc) (storage.Object, error) {
	for {
		it, err := s.current(ctx, key, opts.Preconditions)
		if err != nil {
			return storage.Object{}, err
		}
		cur := it.Object()
		next, err := fn(cur)
		if err != nil {
			return storage.Object{}, err
		}
		next.Key = key
		// Unchanged labels and fields share the current state's maps
		// (stored maps are read-only): a version kept in the history
		// costs its bytes, not another copy of its attributes.
		if len(next.Labels) > 0 && maps.Equal(next.Labels, cur.Labels) {
			next.Labels = cur.Labels
		}
		if len(next.Fields) > 0 && maps.Equal(next.Fields, cur.Fields) {
			next.Fields = cur.Fields
		}
		s.mu.Lock()
		if now, ok := s.live.Tree.Get(it); !ok || now != it {
			s.mu.Unlock()
			continue // raced with another writer
		}
		if same(cur, next) {
			s.mu.Unlock()
			return cur, nil
		}
		next.Revision = s.rev.Load() + 1
		nit := newItem(next)
		s.live.Tree.ReplaceOrInsert(nit)
		s.commit(watch.Change{Type: watch.Modified, Revision: next.Revision, Object: nit.Obj, Prev: it.Obj})
		s.mu.Unlock()
		return nit.Object(), nil
	}
}

// Delete removes key and returns its last state.
func (s *Store) Delete(ctx context.Context, key string, opts storage.DeleteOptions) (storage.Object, error) {
	for {
		it, err := s.current(ctx, key, opts.Preconditions)
		if err != nil {
			return storage.Object{}, err
		}
		cur := it.Object()
		if opts.Validate != nil {
			if err := opts.Validate(cur); err != nil {
				return storage.Object{}, err
			}
		}
		s.mu.Lock()
		if now, ok := s.live.Tree.Get(it); !ok || now != it {
			s.mu.Unlock()
			continue
		}
		s.live.Tree.Delete(it)
		s.live.Dirs.Add(key, -1)
		rev := s.rev.Load() + 1
		s.commit(watch.Change{Type: watch.Deleted, Revision: rev, Prev: it.Obj})
		s.mu.Unlock()
		cur.Revision = rev // the delete's, as Interface.Delete says
		return cur, nil
	}
}

// Compact forgets the history at and before rev.
func (s *Store) Compact(_ context.Context, rev uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.rev.Load(); rev > cur {
		return &storage.Error{Err: storage.ErrTooLarge, Msg: fmt.Sprintf("cannot compact at %d: the current revision is %d", rev, cur), Revision: cur}
	}
	s.log.Compact(rev)
	s.snaps.Expire(s.log.Oldest())
	return nil
}

// current returns key's item after checking the preconditions on it.
func (s *Store) current(ctx context.Context, key string, p storage.Preconditions) (*keytree.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	it, ok := s.live.Tree.Get(&keytree.Item{Key: key})
	rev := s.rev.Load()
	s.mu.RUnlock()
	if !ok {
		return nil, &storage.Error{Err: storage.ErrNotFound, Key: key, Revision: rev}
	}
	if err := p.Check(key, it.Object()); err != nil {
		return nil, err
	}
	return it, nil
}

// commit makes a write visible: the new revision, then its change in the
// log. Callers hold mu exclusively.
func (s *Store) commit(c watch.Change) {
	s.rev.Store(c.Revision)
	_ = s.log.Publish(c) // fails only after Close, when no watcher is left to tell
}

// waitFor waits until the store reaches rev, up to opts.Wait and ctx.
func (s *Store) waitFor(ctx context.Context, key string, rev uint64) error {
	if rev <= s.rev.Load() {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, s.opts.Wait)
	defer cancel()
	if err := s.log.WaitFor(wctx, rev); err != nil {
		cur := s.rev.Load()
		return &storage.Error{Err: storage.ErrTooLarge, Key: key, Revision: cur,
			Msg: fmt.Sprintf("Too large resource version: %d, current: %d", rev, cur)}
	}
	return nil
}

// same reports whether an update would store what is already there.
func same(a, b storage.Object) bool {
	return a.UID == b.UID && bytes.Equal(a.Value, b.Value) &&
		maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Fields, b.Fields)
}
