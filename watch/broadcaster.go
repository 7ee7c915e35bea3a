package watch

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Errors a Broadcaster returns, and the reasons a Watcher ends with.
var (
	// ErrGone: the revision a watch or Since asked to start after is older
	// than the retained history ("too old resource version", HTTP 410).
	ErrGone = errors.New("watch: too old resource version")
	// ErrTooSlow: the watcher fell so far behind that the history it had
	// still to read was compacted. The client re-watches from the last
	// revision it saw.
	ErrTooSlow = errors.New("watch: watcher fell behind the retained history")
	// ErrClosed: the Broadcaster was closed.
	ErrClosed = errors.New("watch: broadcaster closed")
)

// Change is one entry of a Broadcaster's log: a write and the state it
// replaced. Object is nil for Deleted, Prev is nil for Added. Entries of
// any other Type are progress markers: they advance watchers (and their
// bookmarks) without being delivered.
type Change struct {
	Type     EventType
	Revision uint64
	Object   any
	Prev     any
}

// Defaults for Options.
const (
	DefaultHistory          = 5 * time.Minute
	DefaultMaxEvents        = 100 * 1024 // kube's watch cache upper bound
	DefaultBookmarkInterval = time.Minute
	DefaultBuffer           = 32
)

// Options configure a Broadcaster. The zero value is usable.
type Options struct {
	// History is how long changes are kept at least (default 5 minutes);
	// negative keeps them by count only.
	History time.Duration
	// MaxEvents bounds the log: once it holds more, the oldest changes are
	// dropped even if younger than History (default 100×1024, the upper
	// bound of kube's watch cache; about 5 MiB of log entries plus the
	// old object states they keep alive).
	MaxEvents int
	// BookmarkInterval is the period of bookmarks for watchers that ask
	// for them (default 1 minute).
	BookmarkInterval time.Duration
	// Revision is the revision before the first change: Revision() returns
	// it until something is published.
	Revision uint64
	// Clock returns the time used to age history (default time.Now).
	Clock func() time.Time
}

// segSize is the number of entries per log segment.
const segSize = 256

// A segment is a fixed block of the log. The writer fills entries in
// order and publishes each with n.Store after writing it, so a reader that
// loads n may read entries[:n] without locks: they never change again.
// Only the tail segment is ever partly full; next links to the segment
// after it once the writer has created it.
type segment struct {
	entries [segSize]Change
	n       atomic.Int64
	next    atomic.Pointer[segment]
	dropped atomic.Bool // compacted away: watchers still inside it are too slow
	newest  time.Time   // writer only: when the segment was filled
}

func (s *segment) last() uint64 { return s.entries[s.n.Load()-1].Revision }

// Broadcaster is an append-only log of changes with any number of
// watchers reading it, each through its own cursor and goroutine.
//
// The writer appends with Publish in O(1), whatever the number of
// watchers, and never waits for them: a slow watcher only delays its own
// goroutine. History is kept by age (Options.History) and count
// (Options.MaxEvents); compaction drops whole segments from the head, and
// the garbage collector frees them once no watcher holds them. A watcher
// whose unread changes were dropped ends with ErrTooSlow.
//
// Worked example, segSize 4 for brevity, MaxEvents 4:
//
//	publish r1..r9:  [r1 r2 r3 r4] → [r5 r6 r7 r8] → [r9 . . .]
//	                 head                              tail
//	count 9 - 4 ≥ 4: drop head; Oldest() = 4
//	                 [r5 r6 r7 r8] → [r9 . . .]
//	Watch(4) replays r5..r9 then goes live; Watch(3) is ErrGone (r4 is
//	gone). A watcher whose cursor was still at r3 ends with ErrTooSlow.
//
// Publish and Compact serialize on an internal mutex that readers never
// take; callers must publish revisions in increasing order. All methods are
// safe for concurrent use.
type Broadcaster struct {
	mu     sync.Mutex // writer state: head, tail, count, closed
	head   *segment
	tail   *segment
	count  int
	closed bool

	first     atomic.Pointer[segment] // head, for readers
	last      atomic.Pointer[segment] // tail, for readers
	latest    atomic.Uint64           // revision of the last change
	compacted atomic.Uint64           // changes at or before it are gone
	wake      atomic.Value            // chan struct{}: closed by a Publish when sleepy
	sleepy    atomic.Bool             // a reader may wait on wake
	shrink    atomic.Value            // chan struct{}: closed when segments are dropped

	opts Options
	done chan struct{} // closed by Close
	wg   sync.WaitGroup
}

// NewBroadcaster returns an empty Broadcaster at opts.Revision.
func NewBroadcaster(opts Options) *Broadcaster {
	if opts.History == 0 {
		opts.History = DefaultHistory
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = DefaultMaxEvents
	}
	if opts.BookmarkInterval <= 0 {
		opts.BookmarkInterval = DefaultBookmarkInterval
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	s := &segment{}
	b := &Broadcaster{head: s, tail: s, opts: opts, done: make(chan struct{})}
	b.first.Store(s)
	b.last.Store(s)
	b.latest.Store(opts.Revision)
	b.wake.Store(make(chan struct{}))
	b.shrink.Store(make(chan struct{}))
	return b
}

// Publish appends c to the log and wakes the watchers. It never waits for
// them. c.Revision must be greater than every revision published before;
// Publish returns an error otherwise, and ErrClosed after Close.
func (b *Broadcaster) Publish(c Change) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if c.Revision <= b.latest.Load() {
		return fmt.Errorf("watch: publish revision %d after %d: revisions must increase", c.Revision, b.latest.Load())
	}
	t := b.tail
	n := t.n.Load()
	if n == segSize {
		s := &segment{}
		t.next.Store(s)
		b.tail, t, n = s, s, 0
		b.last.Store(s)
	}
	t.entries[n] = c
	t.n.Store(n + 1)
	if n+1 == segSize {
		t.newest = b.opts.Clock()
	}
	b.count++
	if n == 0 || b.count-segSize >= b.opts.MaxEvents {
		b.trim(n == 0)
	}
	b.latest.Store(c.Revision)
	if b.sleepy.Swap(false) {
		close(b.wake.Swap(make(chan struct{})).(chan struct{}))
	}
	return nil
}

// sleep returns a channel that the next Publish closes. A reader calls it
// when it has found nothing new, then looks again before waiting on the
// channel: either the second look sees the change, or the Publish that
// made it sees sleepy set and closes the channel (atomics are sequentially
// consistent: the reader sets sleepy before loading the entry count, the
// writer stores the count before clearing sleepy). A Publish with nobody
// asleep allocates no channel.
func (b *Broadcaster) sleep() chan struct{} {
	ch := b.wake.Load().(chan struct{})
	b.sleepy.Store(true)
	return ch
}

// trim drops head segments beyond the count and age limits. The tail is
// never dropped, so the log always has a place to append. Ages are checked
// (age true) when Publish starts a segment, so the clock is read twice per
// segment, not per change: once to check, once to record when the
// segment filled.
func (b *Broadcaster) trim(age bool) {
	age = age && b.opts.History > 0
	var now time.Time
	if age {
		now = b.opts.Clock()
	}
	dropped := false
	for b.head != b.tail {
		h := b.head
		tooMany := b.count-segSize >= b.opts.MaxEvents
		tooOld := age && now.Sub(h.newest) > b.opts.History
		if !tooMany && !tooOld {
			break
		}
		b.drop()
		dropped = true
	}
	if dropped {
		b.signalShrink()
	}
}

// drop removes the head segment. Callers hold mu.
func (b *Broadcaster) drop() {
	h := b.head
	h.dropped.Store(true)
	if r := h.last(); r > b.compacted.Load() {
		b.compacted.Store(r)
	}
	b.head = h.next.Load()
	b.first.Store(b.head)
	b.count -= segSize
}

func (b *Broadcaster) signalShrink() {
	close(b.shrink.Swap(make(chan struct{})).(chan struct{}))
}

// Compact forgets the changes at and before rev (at most the latest
// revision): Watch and Since then accept only revisions from rev on.
// Watchers still reading dropped segments end with ErrTooSlow.
func (b *Broadcaster) Compact(rev uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rev = min(rev, b.latest.Load())
	if rev <= b.compacted.Load() {
		return
	}
	b.compacted.Store(rev)
	dropped := false
	for b.head != b.tail && b.head.last() <= rev {
		b.drop()
		dropped = true
	}
	if dropped {
		b.signalShrink()
	}
}

// Revision returns the revision of the last published change
// (Options.Revision before any).
func (b *Broadcaster) Revision() uint64 { return b.latest.Load() }

// Oldest returns the oldest revision Watch and Since accept: every change
// after it is retained.
func (b *Broadcaster) Oldest() uint64 { return b.compacted.Load() }

// WaitFor blocks until Revision() ≥ rev, ctx is done (its error) or the
// Broadcaster is closed (ErrClosed).
func (b *Broadcaster) WaitFor(ctx context.Context, rev uint64) error {
	for {
		if b.latest.Load() >= rev {
			return nil
		}
		wake := b.sleep()
		if b.latest.Load() >= rev {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		case <-b.done:
			return ErrClosed
		}
	}
}

// Since returns the retained changes after rev, oldest first, or ErrGone
// if rev is older than Oldest(). The sequence reads the log as it is when
// the iteration reaches each entry; a caller that must see a fixed
// history serializes with Publish (the memory store iterates under its
// read lock, which excludes its writes).
func (b *Broadcaster) Since(rev uint64) (iter.Seq[Change], error) {
	if rev < b.compacted.Load() {
		return nil, fmt.Errorf("%w: %d is older than %d", ErrGone, rev, b.compacted.Load())
	}
	seg, idx := b.seek(rev)
	return func(yield func(Change) bool) {
		c := cursor{seg: seg, idx: idx}
		for {
			ch, ok := c.next()
			if !ok {
				return
			}
			if ch.Revision > rev && !yield(ch) {
				return
			}
		}
	}, nil
}

// seek returns the position of the first retained change after rev, or
// the end of the log if there is none yet.
func (b *Broadcaster) seek(rev uint64) (*segment, int) {
	t := b.last.Load()
	if n := t.n.Load(); n == 0 || t.entries[n-1].Revision <= rev {
		return t, int(n)
	}
	for s := b.first.Load(); s != nil; s = s.next.Load() {
		n := int(s.n.Load())
		if n > 0 && s.entries[n-1].Revision > rev {
			return s, sort.Search(n, func(i int) bool { return s.entries[i].Revision > rev })
		}
	}
	return t, int(t.n.Load()) // unreachable: the tail holds a later change
}

// Close ends every watcher (with ErrClosed) and waits for their
// goroutines to exit. Publish and Watch fail with ErrClosed afterwards.
func (b *Broadcaster) Close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.done)
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// cursor is a reader's position in the log.
type cursor struct {
	seg *segment
	idx int
}

// next returns the change at the cursor and advances it; false when the
// cursor is at the end of the committed log.
func (c *cursor) next() (Change, bool) {
	for {
		if c.idx < segSize {
			if c.idx < int(c.seg.n.Load()) {
				ch := c.seg.entries[c.idx]
				c.idx++
				return ch, true
			}
			return Change{}, false
		}
		nx := c.seg.next.Load()
		if nx == nil {
			return Change{}, false
		}
		c.seg, c.idx = nx, 0
	}
}

// more reports whether a change is committed after the cursor.
func (c *cursor) more() bool {
	if c.idx < segSize {
		return c.idx < int(c.seg.n.Load())
	}
	nx := c.seg.next.Load()
	return nx != nil && nx.n.Load() > 0
}

// behind reports whether the next change to read was compacted away.
func (c *cursor) behind() bool {
	s := c.seg
	if c.idx == segSize {
		if s = s.next.Load(); s == nil {
			return false
		}
	}
	return s.dropped.Load()
}
