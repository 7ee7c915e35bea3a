package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
	"github.com/kapi-dev/kapi/storage/internal/revlru"
	"github.com/kapi-dev/kapi/watch"
)

// Defaults for Options.
const (
	DefaultWait = 3 * time.Second
	// progressEvery is how often a read waiting for the cache asks the
	// backend's watch for a progress bookmark (kube: 100ms).
	progressEvery = 100 * time.Millisecond
	// retryEvery spaces attempts to list or watch a failing backend.
	retryEvery = 100 * time.Millisecond
	// DefaultSnapshots bounds the snapshots kept for paginated lists.
	DefaultSnapshots = 32
)

// Options configure a Cache. The zero value is usable.
type Options struct {
	// Prefix is the part of the backend the cache holds (default "",
	// every key). Calls for keys outside it go to the backend.
	Prefix string
	// Wait bounds how long a read waits for the cache to reach the
	// revision it needs (default 3s, kube's blockTimeout; the request's
	// ctx bounds it too). A consistent read that times out is served by
	// the backend; a read at a revision newer than the backend's fails
	// with ErrTooLarge.
	Wait time.Duration
	// History is how long changes are kept at least, for watches and
	// Exact reads (default watch.DefaultHistory, 5 minutes).
	History time.Duration
	// MaxEvents bounds the history by count (default
	// watch.DefaultMaxEvents).
	MaxEvents int
	// ReadYourWrites makes every write return only once the cache has
	// applied it (bounded by Wait), so that the writer sees it even in
	// reads at rv.Any, as from the backend itself. Off by default, as in
	// kube's watch cache: a write then costs the backend's write only,
	// rather than also a round through the cache's feeder, which is
	// slow to come by when many watchers keep the CPUs busy.
	ReadYourWrites bool
	// BookmarkInterval is the period of bookmarks for watches that ask
	// for them (default watch.DefaultBookmarkInterval, 1 minute).
	BookmarkInterval time.Duration
	// Tokens are the backend's continue-token keys: with them the cache
	// serves paginated lists and their continuations from snapshots, in
	// tokens the backend accepts too. Zero: the backend's own, if it
	// tells them (a Tokens() rv.Tokens method, as storage/memory's and
	// storage/etcd3's stores have); else a list that does not fit in one
	// page, and every continuation, is the backend's.
	Tokens rv.Tokens
	// Snapshots bounds the snapshots kept for paginated lists (default
	// 32, least recently used evicted first; an evicted one is rebuilt
	// from history when a continuation needs it).
	Snapshots int
}

// Cache is a watch cache in front of a storage backend: it implements
// storage.Interface, sends writes to the backend and serves reads and
// watches from memory, fed by one watch of the backend. All methods are
// safe for concurrent use.
//
// One goroutine (the feeder) applies the backend's events: it takes mu
// exclusively, updates the tree and publishes the change to the log, as
// the memory store's writers do. Readers hold mu shared, so the tree and
// the log they see agree: the tree is the state at log.Revision(), and
// undoing the log's changes after N yields the state at N.
type Cache struct {
	backend storage.Interface
	opts    Options

	mu    sync.RWMutex
	live  keytree.Live // the tree at log.Revision(), guarded by mu
	log   *watch.Broadcaster
	ready bool // the tree holds a listed state; false while re-listing
	snaps revlru.Cache[*keytree.Snapshot]
	// progress asks the backend watch for a bookmark (nil between watches).
	progress func()

	stop func()        // cancels the feeder's context
	done chan struct{} // closed by Close
	once sync.Once
	wg   sync.WaitGroup // the feeder
}

var _ storage.Interface = (*Cache)(nil)

// New lists backend under opts.Prefix, starts watching it from the
// list's revision, and returns the Cache. It fails if the first list
// does; later failures of the backend's watch are retried in the
// background (see the package doc). Call Close to stop the watch.
func New(backend storage.Interface, opts Options) (*Cache, error) {
	if opts.Wait <= 0 {
		opts.Wait = DefaultWait
	}
	if opts.Snapshots <= 0 {
		opts.Snapshots = DefaultSnapshots
	}
	if t, ok := backend.(interface{ Tokens() rv.Tokens }); ok && opts.Tokens.Secret == nil {
		opts.Tokens = t.Tokens()
	}
	c := &Cache{backend: backend, opts: opts, done: make(chan struct{}), snaps: revlru.Cache[*keytree.Snapshot]{Max: opts.Snapshots}}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.relist(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	c.stop = cancel
	c.wg.Add(1)
	go c.feed(ctx, w)
	return c, nil
}

// Close stops the backend watch and ends every watch of the cache. The
// Cache must not be used afterwards.
func (c *Cache) Close() {
	c.once.Do(func() {
		c.stop()
		close(c.done)
	})
	c.wg.Wait()
	c.mu.Lock()
	log := c.log
	c.mu.Unlock()
	log.Close()
}

// Revision returns the backend's current revision.
func (c *Cache) Revision(ctx context.Context) (uint64, error) { return c.backend.Revision(ctx) }

// Create creates obj in the backend (see Options.ReadYourWrites).
func (c *Cache) Create(ctx context.Context, obj storage.Object) (storage.Object, error) {
	o, err := c.backend.Create(ctx, obj)
	if err == nil {
		c.seen(ctx, obj.Key, o.Revision)
	}
	return o, err
}

// GuaranteedUpdate updates key in the backend (see
// Options.ReadYourWrites). A conflict means the caller wrote from a
// stale copy, most likely one read from this cache at rv.Any: before
// answering it, the cache catches up with the backend (within
// Options.Wait), so that the caller's next read shows a newer state
// than the one that conflicted, and a retry loop converges instead of
// spinning on the same stale copy.
func (c *Cache) GuaranteedUpdate(ctx context.Context, key string, opts storage.UpdateOptions, fn storage.UpdateFunc) (storage.Object, error) {
	o, err := c.backend.GuaranteedUpdate(ctx, key, opts, fn)
	switch {
	case err == nil:
		c.seen(ctx, key, o.Revision)
	case errors.Is(err, storage.ErrConflict) && c.holds(key):
		c.catchUp(ctx)
	}
	return o, err
}

// Delete deletes key in the backend (see Options.ReadYourWrites).
func (c *Cache) Delete(ctx context.Context, key string, opts storage.DeleteOptions) (storage.Object, error) {
	o, err := c.backend.Delete(ctx, key, opts)
	if errors.Is(err, storage.ErrConflict) && c.holds(key) {
		c.catchUp(ctx) // as GuaranteedUpdate's
	}
	if err == nil {
		c.seen(ctx, key, o.Revision) // the delete's revision
	}
	return o, err
}

// Compact compacts the backend, then the cache's history at the same
// revision, so that both refuse the same reads. It returns once the
// cache has reached the backend's revision (within Options.Wait).
func (c *Cache) Compact(ctx context.Context, rev uint64) error {
	if err := c.backend.Compact(ctx, rev); err != nil {
		return err
	}
	c.catchUp(ctx)
	c.mu.Lock()
	c.log.Compact(rev)
	c.mu.Unlock()
	return nil
}

// seen waits, within Options.Wait, for the cache to reach rev if it
// holds key and Options.ReadYourWrites asks for it. The write succeeded
// whatever happens here.
func (c *Cache) seen(ctx context.Context, key string, rev uint64) {
	if c.opts.ReadYourWrites && c.holds(key) {
		c.fresh(ctx, rev)
	}
}

// catchUp waits, within Options.Wait, for the cache to reach the
// backend's current revision.
func (c *Cache) catchUp(ctx context.Context) {
	if cur, err := c.backend.Revision(ctx); err == nil {
		c.fresh(ctx, cur)
	}
}

// holds reports whether key is in the part of the backend the cache holds.
func (c *Cache) holds(key string) bool { return strings.HasPrefix(key, c.opts.Prefix) }

// revision returns the cache's revision and whether it holds a listed
// state.
func (c *Cache) revision() (uint64, *watch.Broadcaster, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.log.Revision(), c.log, c.ready
}

// fresh waits until the cache has reached rev, up to Options.Wait and
// ctx, asking the backend's watch for progress while it waits (a
// backend whose revision moved for keys the cache does not hold sends
// no event to show it). It reports whether the cache got there.
func (c *Cache) fresh(ctx context.Context, rev uint64) bool {
	cur, log, ready := c.revision()
	if ready && cur >= rev {
		return true
	}
	if !ready {
		return false // re-listing: the backend serves meanwhile
	}
	wctx, cancel := context.WithTimeout(ctx, c.opts.Wait)
	defer cancel()
	go c.askProgress(wctx)
	for {
		err := log.WaitFor(wctx, rev)
		cur, now, ready := c.revision()
		switch {
		case !ready:
			return false
		case cur >= rev:
			return true
		case err != nil && (now == log || !errors.Is(err, watch.ErrClosed)):
			return false
		}
		log = now // re-listed meanwhile: wait on the new log
	}
}

// askProgress asks the backend's watch for a bookmark every
// progressEvery until ctx is done.
func (c *Cache) askProgress(ctx context.Context) {
	t := time.NewTimer(progressEvery / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.mu.RLock()
		p := c.progress
		c.mu.RUnlock()
		if p != nil {
			p()
		}
		t.Reset(progressEvery)
	}
}

// tooLarge is the error for a read at a revision the backend has not
// reached.
func tooLarge(key string, rev, cur uint64) error {
	return &storage.Error{Err: storage.ErrTooLarge, Key: key, Revision: cur,
		Msg: fmt.Sprintf("Too large resource version: %d, current: %d", rev, cur)}
}

// expired is the error for a watch from a revision older than the
// cache's history.
func (c *Cache) expired(key string, rev uint64, log *watch.Broadcaster) error {
	return &storage.Error{Err: storage.ErrExpired, Key: key, Revision: log.Revision(),
		Msg: fmt.Sprintf("too old resource version: %d (%d)", rev, log.Oldest())}
}
