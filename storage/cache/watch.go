package cache

import (
	"context"
	"errors"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
	"github.com/kapi-dev/kapi/watch"
)

// Watch streams the changes to key (or, with opts.Recursive, to the keys
// under it) that match opts.Predicate, from the cache's log: each
// watcher reads the log through its own cursor and goroutine, so the
// feeder publishes in O(1) whatever the number of watchers, a slow
// watcher never blocks it or the others, and one that falls behind the
// retained history ends with watch.ErrTooSlow (see watch.Broadcaster).
//
// With opts.Revision N > 0 the stream replays the changes after N from
// the log (ErrExpired if N is older than the cache's history, even if
// the backend still has it: kube's watch cache answers the same), after
// waiting for the cache to reach N (ErrTooLarge if the backend has not).
// With N = 0 it starts at the backend's current revision, once the cache
// has reached it. With opts.Initial the cache's state at the start
// revision comes first as ADDED events, and opts.InitialEnd then sends
// the initial-events-end bookmark at that revision.
//
// Keys outside Options.Prefix, and watches the cache cannot start within
// Options.Wait (while it re-lists, or lags the backend), are the
// backend's. The result is a *watch.Watcher otherwise: Err tells why it
// ended, and RequestBookmark asks for a bookmark now.
func (c *Cache) Watch(ctx context.Context, key string, opts storage.WatchOptions) (watch.Interface, error) {
	if !c.holds(key) {
		return c.backend.Watch(ctx, key, opts)
	}
	m := rv.NotOlderThan
	if opts.Revision == 0 {
		m = rv.MostRecent
	}
	ok, err := c.need(ctx, key, m, opts.Revision)
	if err != nil {
		return nil, err
	}
	if !ok {
		return c.backend.Watch(ctx, key, opts)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	from := opts.Revision
	if opts.Initial || from == 0 {
		from = c.log.Revision()
	}
	w, err := c.log.Watch(ctx, from, keytree.WatcherOptions(&c.live, key, opts))
	if errors.Is(err, watch.ErrGone) {
		return nil, c.expired(key, from, c.log)
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}
