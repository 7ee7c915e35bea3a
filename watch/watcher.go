package watch

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"
)

// WatcherOptions choose what a Watcher sees.
type WatcherOptions struct {
	// Match filters on the state of an object (a change's Object or Prev);
	// nil matches everything. Changes are translated by what matches
	// before and after (selector transitions):
	//
	//	change    Match(Prev)  Match(Object)  event
	//	Added     -            true           ADDED    Object
	//	Modified  true         true           MODIFIED Object
	//	Modified  false        true           ADDED    Object
	//	Modified  true         false          DELETED  Prev
	//	Deleted   true         -              DELETED  Prev
	//
	// Every other case delivers nothing. A DELETED event carries the last
	// matching state; its Revision is the change's, which consumers stamp
	// on it.
	Match func(obj any) bool
	// Start, when set, is delivered before the log: typically the state at
	// the start revision as Added changes, for watches that ask for
	// initial events. Its changes go through Match like live ones. It is
	// iterated in the watcher's goroutine.
	Start iter.Seq[Change]
	// InitialEventsEnd sends, after Start, a BOOKMARK at the start
	// revision with InitialEventsEnd set.
	InitialEventsEnd bool
	// Bookmarks sends a BOOKMARK every Options.BookmarkInterval while the
	// watcher is idle, and whenever RequestBookmark asks.
	Bookmarks bool
	// Buffer is the capacity of the result channel (default 32).
	Buffer int
}

// Watcher reads a Broadcaster's log from its own cursor, in its own
// goroutine, and sends what matches on ResultChan.
//
// The goroutine is owned by the Watcher and exits, closing ResultChan,
// when Stop is called, the ctx given to Watch is done, the Broadcaster is
// closed, or the watcher falls behind the retained history. Err says
// which.
//
// Bookmark revisions: a bookmark carries the revision of the last change
// the watcher has consumed (delivered or filtered out), or the start
// revision before any. The goroutine consumes changes in order and hands
// each matching one to the channel before reading the next, so a bookmark
// never claims a revision past an event it has not delivered.
type Watcher struct {
	b        *Broadcaster
	opts     WatcherOptions
	from     uint64
	pos      cursor // goroutine-owned
	result   chan Event
	stop     chan struct{}
	stopOnce sync.Once
	bookmark chan struct{}

	mu  sync.Mutex
	err error
}

// Watch starts a watcher that delivers, in order and once each, every
// change with a revision after from: first those still in the log, then
// live ones, with no gap between them. It fails with ErrGone if from is
// older than Oldest(), and ErrClosed after Close. The watcher ends when
// ctx is done.
func (b *Broadcaster) Watch(ctx context.Context, from uint64, opts WatcherOptions) (*Watcher, error) {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	w := &Watcher{
		b:        b,
		opts:     opts,
		from:     from,
		result:   make(chan Event, opts.Buffer),
		stop:     make(chan struct{}),
		bookmark: make(chan struct{}, 1),
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if from < b.compacted.Load() {
		return nil, fmt.Errorf("%w: %d is older than %d", ErrGone, from, b.compacted.Load())
	}
	// Under mu no segment is dropped, so the cursor starts inside the
	// retained log.
	w.pos.seg, w.pos.idx = b.seek(from)
	b.wg.Add(1)
	go w.run(ctx)
	return w, nil
}

// ResultChan returns the channel events arrive on. It is closed when the
// watch ends.
func (w *Watcher) ResultChan() <-chan Event { return w.result }

// Stop ends the watch: ResultChan is closed promptly. It may be called any
// number of times, from any goroutine.
func (w *Watcher) Stop() { w.stopOnce.Do(func() { close(w.stop) }) }

// RequestBookmark asks for a BOOKMARK as soon as the watcher is idle
// (caught up with the log), even without WatcherOptions.Bookmarks. Requests
// made before the bookmark is sent are merged.
func (w *Watcher) RequestBookmark() {
	select {
	case w.bookmark <- struct{}{}:
	default:
	}
}

// Err returns why the watch ended: nil after Stop, the ctx's error, or
// ErrTooSlow or ErrClosed. It is nil while the watch runs; it is final
// once ResultChan is closed.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// errStopped ends the loop on Stop; Err reports nil for it.
var errStopped = errors.New("watch: stopped")

func (w *Watcher) run(ctx context.Context) {
	defer w.b.wg.Done()
	defer close(w.result)
	var tick <-chan time.Time
	if w.opts.Bookmarks {
		t := time.NewTicker(w.b.opts.BookmarkInterval)
		defer t.Stop()
		tick = t.C
	}
	err := w.loop(ctx, tick)
	if err == errStopped {
		err = nil
	}
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
}

// checkEvery is how many changes a busy watcher consumes between checks
// that it was not stopped.
const checkEvery = 256

func (w *Watcher) loop(ctx context.Context, tick <-chan time.Time) error {
	if w.opts.Start != nil {
		n := 0
		for c := range w.opts.Start {
			if n++; n%checkEvery == 0 {
				if err := w.ended(ctx); err != nil {
					return err
				}
			}
			if ev, ok := w.filter(c); ok {
				if err := w.send(ctx, ev); err != nil {
					return err
				}
			}
		}
	}
	if w.opts.InitialEventsEnd {
		if err := w.send(ctx, Event{Type: Bookmark, Revision: w.from, InitialEventsEnd: true}); err != nil {
			return err
		}
	}
	last := w.from // the last revision consumed
	for {
		for n := 1; ; n++ {
			if n%checkEvery == 0 {
				if err := w.ended(ctx); err != nil {
					return err
				}
			}
			if w.pos.behind() {
				return ErrTooSlow
			}
			c, ok := w.pos.next()
			if !ok {
				break
			}
			if c.Revision <= last {
				continue // before the start revision
			}
			if ev, ok := w.filter(c); ok {
				if err := w.send(ctx, ev); err != nil {
					return err
				}
			}
			last = c.Revision
		}
		wake := w.b.sleep()
		if w.pos.more() {
			continue
		}
		select {
		case <-wake:
		case <-tick:
			if err := w.send(ctx, Event{Type: Bookmark, Revision: last}); err != nil {
				return err
			}
		case <-w.bookmark:
			if err := w.send(ctx, Event{Type: Bookmark, Revision: last}); err != nil {
				return err
			}
		case <-w.stop:
			return errStopped
		case <-ctx.Done():
			return ctx.Err()
		case <-w.b.done:
			return ErrClosed
		}
	}
}

// ended reports, without blocking, whether the watch must end.
func (w *Watcher) ended(ctx context.Context) error {
	select {
	case <-w.stop:
		return errStopped
	case <-ctx.Done():
		return ctx.Err()
	case <-w.b.done:
		return ErrClosed
	default:
		return nil
	}
}

// send hands ev to the consumer. While it waits, compaction may drop the
// changes the watcher has still to read: it then gives up with ErrTooSlow
// so the dropped segments can be freed.
func (w *Watcher) send(ctx context.Context, ev Event) error {
	select {
	case w.result <- ev:
		return nil
	default:
	}
	for {
		shrink := w.b.shrink.Load().(chan struct{})
		if w.pos.behind() {
			return ErrTooSlow
		}
		select {
		case w.result <- ev:
			return nil
		case <-shrink:
		case <-w.stop:
			return errStopped
		case <-ctx.Done():
			return ctx.Err()
		case <-w.b.done:
			return ErrClosed
		}
	}
}

// filter turns a change into the event this watcher sees, if any.
func (w *Watcher) filter(c Change) (Event, bool) {
	m := w.opts.Match
	switch c.Type {
	case Added:
		if m == nil || m(c.Object) {
			return Event{Type: Added, Revision: c.Revision, Object: c.Object}, true
		}
	case Modified:
		if m == nil {
			return Event{Type: Modified, Revision: c.Revision, Object: c.Object}, true
		}
		switch now, was := m(c.Object), m(c.Prev); {
		case now && was:
			return Event{Type: Modified, Revision: c.Revision, Object: c.Object}, true
		case now:
			return Event{Type: Added, Revision: c.Revision, Object: c.Object}, true
		case was:
			return Event{Type: Deleted, Revision: c.Revision, Object: c.Prev}, true
		}
	case Deleted:
		if m == nil || m(c.Prev) {
			return Event{Type: Deleted, Revision: c.Revision, Object: c.Prev}, true
		}
	}
	return Event{}, false
}
