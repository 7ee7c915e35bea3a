package cache

import (
	"context"
	"errors"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
	"github.com/kapi-dev/kapi/watch"
)

// The feeder. One goroutine owns the backend's watch: it applies each
// event to the tree and publishes it to the log, turns the backend's
// bookmarks into progress markers (they advance the cache's revision
// and its watchers' bookmarks without an event), and when the watch
// ends it resumes from the cache's revision. When the backend no longer
// has that revision (ErrExpired) it re-lists, which starts a new log:
// the old one is closed, ending its watchers, whose clients re-watch
// from their last revision and get ErrExpired (410) if it is older than
// the new list, as from any store.
//
//	backend:  list @10 {a,b}   watch from 10: r11 put a, r12 del b, bookmark 15
//	cache:    tree {a,b} @10   log [r11 Modified a, r12 Deleted b, r15 progress]
//	          Revision 15: a consistent read after backend.Revision()=15 is served at once

// bookmarker is what a watch offers to ask for a bookmark now
// (*watch.Watcher and the etcd3 store's watches).
type bookmarker interface{ RequestBookmark() }

// errer is what a watch offers to tell why it ended.
type errer interface{ Err() error }

// relist lists the backend, replaces the tree and starts a new log at
// the list's revision, and returns a watch of the backend from there.
func (c *Cache) relist(ctx context.Context) (watch.Interface, error) {
	c.mu.Lock()
	c.ready = false
	c.mu.Unlock()
	// Not bounded by Options.Wait, which is for reads waiting on the
	// cache: listing a large backend takes longer, and a backend bounds
	// its own calls (etcd3's Options.Timeout).
	res, err := c.backend.List(ctx, c.opts.Prefix, storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	w, err := c.backend.Watch(ctx, c.opts.Prefix, storage.WatchOptions{Recursive: true, Revision: res.Revision, Bookmarks: true})
	if err != nil {
		return nil, err
	}
	t := keytree.New()
	dirs := keytree.Dirs{}
	for _, o := range res.Items {
		if o.Memo == nil {
			o.Memo = new(storage.Memo)
		}
		t.ReplaceOrInsert(&keytree.Item{Key: o.Key, Obj: o})
		dirs.Add(o.Key, 1)
	}
	log := watch.NewBroadcaster(watch.Options{
		History:          c.opts.History,
		MaxEvents:        c.opts.MaxEvents,
		BookmarkInterval: c.opts.BookmarkInterval,
		Revision:         res.Revision,
	})
	log.Compact(res.Revision) // nothing before the list is known
	c.mu.Lock()
	old := c.log
	c.live.Tree, c.live.Dirs, c.log, c.ready = t, dirs, log, true
	c.snaps.Reset()
	c.progress = progressOf(w)
	c.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return w, nil
}

func progressOf(w watch.Interface) func() {
	if b, ok := w.(bookmarker); ok {
		return b.RequestBookmark
	}
	return nil
}

// feed applies w's events, resuming or re-listing whenever the backend's
// watch ends, until ctx is done.
func (c *Cache) feed(ctx context.Context, w watch.Interface) {
	defer c.wg.Done()
	for {
		err := c.follow(ctx, w)
		w.Stop()
		if ctx.Err() != nil {
			return
		}
		w = nil
		for w == nil {
			if !errors.Is(err, storage.ErrExpired) {
				w, err = c.resume(ctx)
			}
			if errors.Is(err, storage.ErrExpired) {
				w, err = c.relist(ctx)
			}
			if w == nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(retryEvery):
				}
			}
		}
	}
}

// resume watches the backend from the cache's revision.
func (c *Cache) resume(ctx context.Context) (watch.Interface, error) {
	c.mu.RLock()
	from := c.log.Revision()
	c.mu.RUnlock()
	w, err := c.backend.Watch(ctx, c.opts.Prefix, storage.WatchOptions{Recursive: true, Revision: from, Bookmarks: true})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.progress = progressOf(w)
	c.mu.Unlock()
	return w, nil
}

// follow applies w's events until it ends, and returns why.
func (c *Cache) follow(ctx context.Context, w watch.Interface) error {
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				if e, ok := w.(errer); ok && e.Err() != nil {
					return e.Err()
				}
				return errors.New("cache: the backend's watch ended")
			}
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				c.apply(ev)
			case watch.Bookmark:
				c.advance(ev.Revision)
			case watch.Error:
				if err, ok := ev.Object.(error); ok {
					return err
				}
				return errors.New("cache: an ERROR event from the backend's watch")
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// apply makes one backend event the cache's next change.
func (c *Cache) apply(ev watch.Event) {
	o := ev.Object.(storage.Object)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Revision <= c.log.Revision() {
		return // replayed by a resumed watch
	}
	old, had := c.live.Tree.Get(&keytree.Item{Key: o.Key})
	ch := watch.Change{Revision: ev.Revision}
	if had {
		ch.Prev = old.Obj
	}
	switch {
	case ev.Type == watch.Deleted && had:
		c.live.Tree.Delete(old)
		c.live.Dirs.Add(o.Key, -1)
		ch.Type = watch.Deleted
	case ev.Type == watch.Deleted:
		ch.Type = watch.Bookmark // nothing to delete: progress only
	default:
		if o.Memo == nil {
			o.Memo = new(storage.Memo)
		}
		it := &keytree.Item{Key: o.Key, Obj: o}
		c.live.Tree.ReplaceOrInsert(it)
		ch.Object, ch.Type = it.Obj, watch.Modified
		if !had {
			c.live.Dirs.Add(o.Key, 1)
			ch.Type = watch.Added
		}
	}
	_ = c.log.Publish(ch) // fails only once closed
}

// advance records the backend's progress: every change up to rev has
// been applied.
func (c *Cache) advance(rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev > c.log.Revision() {
		_ = c.log.Publish(watch.Change{Type: watch.Bookmark, Revision: rev})
	}
}
