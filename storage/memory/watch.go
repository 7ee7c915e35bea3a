package memory

import (
	"context"
	"errors"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
	"github.com/kapi-dev/kapi/watch"
)

// Watch streams the changes to key (or, with opts.Recursive, to the keys
// under it) that match opts.Predicate. Its events carry storage.Object
// values; a DELETED event carries the last state, with its own older
// Revision: consumers stamp the event's Revision on it.
//
// With opts.Revision N > 0 the stream replays every change after N
// (ErrExpired if N was compacted; a revision newer than the store's is
// waited for as reads do). With opts.Initial the current state (which is
// at least as new as N) comes first as ADDED events, read from a snapshot
// taken atomically with the stream's start, and opts.InitialEnd then sends
// the initial-events-end bookmark at that revision.
//
// The result is a *watch.Watcher: Err tells why it ended, and
// RequestBookmark asks for a bookmark now.
func (s *Store) Watch(ctx context.Context, key string, opts storage.WatchOptions) (watch.Interface, error) {
	if err := s.waitFor(ctx, key, opts.Revision); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	from := opts.Revision
	if opts.Initial || from == 0 {
		from = s.rev.Load()
	}
	w, err := s.log.Watch(ctx, from, keytree.WatcherOptions(&s.live, key, opts))
	if errors.Is(err, watch.ErrGone) {
		return nil, s.expired(key, from)
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}
