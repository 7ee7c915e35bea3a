package etcd3

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// Watches. A watch is one goroutine reading one etcd watch (with prev-kv,
// so transitions and DELETED events know the last state) and translating
// its events through the predicate:
//
//	etcd event   Match(prev)  Match(new)  event
//	PUT create   -            true        ADDED    new
//	PUT          true         true        MODIFIED new
//	PUT          false        true        ADDED    new
//	PUT          true         false       DELETED  prev
//	DELETE       true         -           DELETED  prev
//
// The start revision is fixed before Watch returns, so a write made after
// Watch returns is always seen. With Initial, the state at that revision
// is read in pages and sent as ADDED events before the etcd watch starts
// from the next revision: what happens meanwhile stays in etcd's history,
// not in memory.
//
// Slow consumers: events go on a channel of Options.WatchBuffer. When it
// is full the goroutine cancels its etcd watch (so nothing piles up in
// the client), waits for room, and then watches again from the revision
// after the last one it consumed. A consumer that is slower than the
// writers for good ends with ErrExpired once etcd compacts past it.
//
// Faults: the etcd client itself resumes a watch whose connection broke.
// When etcd ends it instead (no leader, server stopped) or the client
// gives up, the watch starts again from the revision after the last one
// it consumed, after a growing pause (see follower.resume): no gap, no
// duplicate, and ErrExpired if that revision was compacted meanwhile.
//
// Bookmarks: on each Options.BookmarkInterval (with WatchOptions.Bookmarks)
// or RequestBookmark, the goroutine asks etcd for a progress notification,
// whose revision says every event up to it was sent; the BOOKMARK carries
// it. If none comes within progressWait (etcd sends one only when every
// watch of the client's stream is caught up), the BOOKMARK carries the
// last revision the watch consumed.

// progressWait bounds the wait for a progress notification.
const progressWait = time.Second

// errStopped ends a watch on Stop; Err reports nil for it.
var errStopped = errors.New("etcd3: watch stopped")

// ErrClosed ends the watches of a closed Store.
var ErrClosed = errors.New("etcd3: store closed")

// Watch streams the changes to key (or, with opts.Recursive, to the keys
// under it) that match opts.Predicate. The result also has Err, which
// tells why the watch ended, and RequestBookmark, which asks for a
// bookmark now.
//
// With opts.Revision N > 0 the stream carries every change after N
// (ErrExpired if N was compacted; a revision newer than etcd's is waited
// for as reads do). With opts.Initial the state at etcd's current
// revision (at least N) comes first as ADDED events, and opts.InitialEnd
// then sends the initial-events-end bookmark at that revision.
func (s *Store) Watch(ctx context.Context, key string, opts storage.WatchOptions) (watch.Interface, error) {
	w := &watcher{
		s:        s,
		name:     key,
		key:      s.prefix + key,
		opts:     opts,
		result:   make(chan watch.Event, s.opts.WatchBuffer),
		stop:     make(chan struct{}),
		bookmark: make(chan struct{}, 1),
	}
	if opts.Recursive {
		w.key, w.end = s.rangeOf(key)
	}
	var first *clientv3.GetResponse
	sctx, cancel := s.bound(ctx) // only the start is bound
	defer cancel()
	switch {
	case opts.Initial:
		if opts.Revision != 0 {
			if _, err := s.read(sctx, key, s.prefix+"/", rv.NotOlderThan, opts.Revision, true, clientv3.WithCountOnly()); err != nil {
				return nil, err
			}
		}
		resp, err := s.c.Get(sctx, w.key, w.pageOps(0)...)
		if err != nil {
			return nil, s.failed(sctx, "watch", key, err)
		}
		first, w.from = resp, uint64(resp.Header.Revision)
	case opts.Revision != 0:
		// A read at the revision tells whether it is compacted or future.
		if _, err := s.read(sctx, key, s.prefix+"/", rv.Exact, opts.Revision, true, clientv3.WithCountOnly()); err != nil {
			return nil, err
		}
		w.from = opts.Revision
	default:
		rev, err := s.Revision(sctx)
		if err != nil {
			return nil, err
		}
		w.from = rev
	}
	// Under closeMu, so that no Add races with Close's Wait.
	s.closeMu.Lock()
	select {
	case <-s.done:
		s.closeMu.Unlock()
		return nil, ErrClosed
	default:
	}
	s.watchers.Add(1)
	s.closeMu.Unlock()
	go w.run(ctx, first)
	return w, nil
}

// watcher is one watch. Its goroutine owns everything but stop,
// bookmark and err; it exits, closing result, on Stop, when the ctx given
// to Watch is done, when the Store is closed, or on an etcd error (after
// an ERROR event).
type watcher struct {
	s        *Store
	name     string // the key asked for
	key, end string // etcd key, or range [key, end) when recursive
	opts     storage.WatchOptions
	from     uint64 // the stream carries the changes after from
	result   chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	bookmark chan struct{}

	mu  sync.Mutex
	err error
}

// ResultChan returns the channel events arrive on; it is closed when the
// watch ends.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch. It may be called any number of times, from any
// goroutine.
func (w *watcher) Stop() { w.stopOnce.Do(func() { close(w.stop) }) }

// RequestBookmark asks for a BOOKMARK as soon as possible, even without
// WatchOptions.Bookmarks. Requests made before it is sent are merged.
func (w *watcher) RequestBookmark() {
	select {
	case w.bookmark <- struct{}{}:
	default:
	}
}

// Err returns why the watch ended: nil after Stop, the ctx's error,
// ErrClosed, or the error its ERROR event carried. It is final once
// ResultChan is closed.
func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *watcher) run(ctx context.Context, first *clientv3.GetResponse) {
	defer w.s.watchers.Done()
	defer close(w.result)
	err := w.loop(ctx, first)
	if err == errStopped {
		err = nil
	}
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
}

func (w *watcher) loop(ctx context.Context, first *clientv3.GetResponse) error {
	if w.opts.Initial {
		if err := w.initial(ctx, first); err != nil {
			return err
		}
	}
	if w.opts.InitialEnd {
		if err := w.send(ctx, watch.Event{Type: watch.Bookmark, Revision: w.from, InitialEventsEnd: true}); err != nil {
			return err
		}
	}
	var tick <-chan time.Time
	if w.opts.Bookmarks {
		t := time.NewTicker(w.s.opts.BookmarkInterval)
		defer t.Stop()
		tick = t.C
	}
	f := follower{w: w, last: w.from, tick: tick}
	for {
		if err := f.follow(ctx); err != nil {
			return err
		}
	}
}

// initial sends the state at w.from as ADDED events, reading it in pages.
func (w *watcher) initial(ctx context.Context, resp *clientv3.GetResponse) error {
	for {
		for _, kv := range resp.Kvs {
			o, err := w.s.object(kv)
			if err != nil {
				return w.fail(ctx, err)
			}
			if w.match(o) {
				if err := w.send(ctx, watch.Event{Type: watch.Added, Revision: o.Revision, Object: o}); err != nil {
					return err
				}
			}
		}
		if !resp.More {
			return nil
		}
		next := string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		pctx, cancel := w.s.bound(ctx)
		var err error
		resp, err = w.s.c.Get(pctx, next, w.pageOps(w.from)...)
		if err != nil {
			err = w.s.readErr(pctx, w.name, w.from, err)
			cancel()
			if err := w.ended(ctx); err != nil {
				return err
			}
			return w.fail(ctx, err)
		}
		cancel()
	}
}

// pageOps are the options of a read of the initial state at rev (0: now).
func (w *watcher) pageOps(rev uint64) []clientv3.OpOption {
	ops := []clientv3.OpOption{clientv3.WithLimit(w.s.opts.PageSize)}
	if w.end != "" {
		ops = append(ops, clientv3.WithRange(w.end))
	}
	if rev != 0 {
		ops = append(ops, clientv3.WithRev(int64(rev)))
	}
	return ops
}

// follower follows etcd watches, one after the other, from the revision
// after last.
type follower struct {
	w       *watcher
	last    uint64 // the last revision consumed (delivered or filtered out)
	tick    <-chan time.Time
	pending <-chan time.Time // a bookmark waits for progress until then
	retry   time.Duration    // the wait before the next resume; 0 after an answer
}

// Bounds of the wait before a watch that etcd ended resumes.
const (
	minRetry = 50 * time.Millisecond
	maxRetry = 2 * time.Second
)

// resume waits a little (longer each time etcd ends the watch without
// an answer in between) and returns nil, so that the watch starts again
// from f.last+1: etcd restarted, or lost its leader, and the stream goes
// on from etcd's history without a gap or a duplicate (or ends with
// ErrExpired if that history was compacted meanwhile).
func (f *follower) resume(ctx context.Context) error {
	f.retry = min(max(2*f.retry, minRetry), maxRetry)
	t := time.NewTimer(f.retry)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-f.w.stop:
		return errStopped
	case <-ctx.Done():
		return ctx.Err()
	case <-f.w.s.done:
		return ErrClosed
	}
}

// follow runs one etcd watch from f.last+1. It returns nil when the
// consumer was too slow and the watch must start again, or the error
// that ends the stream.
func (f *follower) follow(ctx context.Context) error {
	w := f.w
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// As kube-apiserver does: a member cut off from the leader ends the
	// watch (with an ERROR event) rather than serving stale events.
	wctx = clientv3.WithRequireLeader(wctx)
	ops := []clientv3.OpOption{clientv3.WithRev(int64(f.last + 1)), clientv3.WithPrevKV()}
	if w.end != "" {
		ops = append(ops, clientv3.WithRange(w.end))
	}
	ch := w.s.c.Watch(wctx, w.key, ops...)
	for {
		select {
		case resp, ok := <-ch:
			if !ok {
				if err := w.ended(ctx); err != nil {
					return err
				}
				return f.resume(ctx) // the client gave up without saying why
			}
			if resp.CompactRevision != 0 {
				return w.fail(ctx, w.s.expired(ctx, w.name, f.last))
			}
			if err := resp.Err(); err != nil {
				if unavailable(err) { // no leader, server stopped, …
					return f.resume(ctx)
				}
				return w.fail(ctx, w.s.failed(ctx, "watch", w.name, err))
			}
			f.retry = 0
			if resp.IsProgressNotify() {
				f.last = max(f.last, uint64(resp.Header.Revision))
				if f.pending != nil {
					if err := f.sendBookmark(ctx); err != nil {
						return err
					}
				}
				continue
			}
			slow := false
			for _, e := range resp.Events {
				ev, ok, err := w.translate(e)
				if err != nil {
					return w.fail(ctx, err)
				}
				if ok {
					if !slow {
						select {
						case w.result <- ev:
							f.last = ev.Revision
							continue
						default:
						}
						slow = true
						cancel() // let etcd keep the rest; no pile-up in the client
					}
					if err := w.send(ctx, ev); err != nil {
						return err
					}
				}
				f.last = uint64(e.Kv.ModRevision)
			}
			if slow {
				return nil
			}
		case <-f.tick:
			f.requestProgress(wctx)
		case <-w.bookmark:
			f.requestProgress(wctx)
		case <-f.pending:
			if err := f.sendBookmark(ctx); err != nil {
				return err
			}
		case <-w.stop:
			return errStopped
		case <-ctx.Done():
			return ctx.Err()
		case <-w.s.done:
			return ErrClosed
		}
	}
}

// requestProgress asks etcd for a progress notification, and sets a
// deadline after which the bookmark goes without it.
func (f *follower) requestProgress(ctx context.Context) {
	if f.pending == nil {
		f.pending = time.After(progressWait)
	}
	// The client blocks until it is connected: bound the wait.
	ctx, cancel := context.WithTimeout(ctx, progressWait)
	defer cancel()
	_ = f.w.s.c.RequestProgress(ctx) // on failure the deadline sends the bookmark
}

func (f *follower) sendBookmark(ctx context.Context) error {
	f.pending = nil
	return f.w.send(ctx, watch.Event{Type: watch.Bookmark, Revision: f.last})
}

// translate turns an etcd event into the event this watcher sees, if any.
func (w *watcher) translate(e *clientv3.Event) (watch.Event, bool, error) {
	rev := uint64(e.Kv.ModRevision)
	var prev, cur storage.Object
	var hasPrev bool
	if e.PrevKv != nil {
		var err error
		if prev, err = w.s.event(e.PrevKv); err != nil {
			return watch.Event{}, false, err
		}
		hasPrev = true
	}
	if e.Type == mvccpb.DELETE {
		if hasPrev && w.match(prev) {
			return watch.Event{Type: watch.Deleted, Revision: rev, Object: prev}, true, nil
		}
		return watch.Event{}, false, nil // without prev-kv (compacted) there is nothing to show
	}
	cur, err := w.s.event(e.Kv)
	if err != nil {
		return watch.Event{}, false, err
	}
	now := w.match(cur)
	switch {
	case e.IsCreate() && now:
		return watch.Event{Type: watch.Added, Revision: rev, Object: cur}, true, nil
	case e.IsCreate():
	case !hasPrev && now: // prev compacted: assume it matched
		return watch.Event{Type: watch.Modified, Revision: rev, Object: cur}, true, nil
	case now && w.match(prev):
		return watch.Event{Type: watch.Modified, Revision: rev, Object: cur}, true, nil
	case now:
		return watch.Event{Type: watch.Added, Revision: rev, Object: cur}, true, nil
	case hasPrev && w.match(prev):
		return watch.Event{Type: watch.Deleted, Revision: rev, Object: prev}, true, nil
	}
	return watch.Event{}, false, nil
}

func (w *watcher) match(o storage.Object) bool {
	return w.opts.Predicate.Empty() || w.opts.Predicate.Matches(o)
}

// send hands ev to the consumer, waiting for room.
func (w *watcher) send(ctx context.Context, ev watch.Event) error {
	select {
	case w.result <- ev:
		return nil
	case <-w.stop:
		return errStopped
	case <-ctx.Done():
		return ctx.Err()
	case <-w.s.done:
		return ErrClosed
	}
}

// fail sends an ERROR event carrying err and returns err, or the reason
// the watch ended first.
func (w *watcher) fail(ctx context.Context, err error) error {
	if e := w.send(ctx, watch.Event{Type: watch.Error, Object: err}); e != nil {
		return e
	}
	return err
}

// ended reports, without blocking, whether the watch must end.
func (w *watcher) ended(ctx context.Context) error {
	select {
	case <-w.stop:
		return errStopped
	case <-ctx.Done():
		return ctx.Err()
	case <-w.s.done:
		return ErrClosed
	default:
		return nil
	}
}
