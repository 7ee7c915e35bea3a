package watch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func added(rev uint64) Change { return Change{Type: Added, Revision: rev, Object: rev} }

func publish(t testing.TB, b *Broadcaster, from, to uint64) {
	t.Helper()
	for r := from; r <= to; r++ {
		if err := b.Publish(added(r)); err != nil {
			t.Errorf("Publish(%d): %v", r, err)
			return
		}
	}
}

// collect reads n events from w, failing (with what it got) after a
// generous deadline so a bug hangs no test run. It is safe to call from
// any goroutine.
func collect(t *testing.T, w *Watcher, n int) []Event {
	t.Helper()
	var got []Event
	deadline := time.After(10 * time.Second)
	for len(got) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Errorf("result channel closed after %d events (Err %v); want %d", len(got), w.Err(), n)
				return got
			}
			got = append(got, ev)
		case <-deadline:
			t.Errorf("got %d events before the deadline; want %d", len(got), n)
			return got
		}
	}
	return got
}

// next reads one event; call it from the test goroutine only.
func next(t *testing.T, w *Watcher) Event {
	t.Helper()
	got := collect(t, w, 1)
	if len(got) == 0 {
		t.FailNow()
	}
	return got[0]
}

// drain reads until the channel closes and returns what it read.
func drain(t *testing.T, w *Watcher) []Event {
	t.Helper()
	var got []Event
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-deadline:
			t.Fatalf("result channel still open after %d events", len(got))
		}
	}
}

func revisions(evs []Event) []uint64 {
	var r []uint64
	for _, ev := range evs {
		r = append(r, ev.Revision)
	}
	return r
}

func seq(from, to uint64) []uint64 {
	var r []uint64
	for i := from; i <= to; i++ {
		r = append(r, i)
	}
	return r
}

func TestReplayThenLive(t *testing.T) {
	tests := []struct {
		name      string
		published uint64 // revisions 1..published exist before Watch
		from      uint64
	}{
		{name: "from the start", published: 10, from: 0},
		{name: "from the middle", published: 10, from: 5},
		{name: "from the latest", published: 10, from: 10},
		{name: "across segments", published: 3*segSize + 7, from: segSize - 3},
		{name: "from a segment boundary", published: 2 * segSize, from: segSize},
		{name: "empty log", published: 0, from: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBroadcaster(Options{})
			defer b.Close()
			publish(t, b, 1, tt.published)
			w, err := b.Watch(context.Background(), tt.from, WatcherOptions{})
			if err != nil {
				t.Fatalf("Watch(%d): %v", tt.from, err)
			}
			defer w.Stop()
			last := tt.published + 20
			publish(t, b, tt.published+1, last)
			got := revisions(collect(t, w, int(last-tt.from)))
			if want := seq(tt.from+1, last); !slices.Equal(got, want) {
				t.Fatalf("got revisions %v; want %v", got, want)
			}
		})
	}
}

// TestNoGapUnderConcurrentPublish starts watchers at whatever revision is
// current while a writer publishes: each must see exactly every later
// change, once, in order (WATCH-9).
func TestNoGapUnderConcurrentPublish(t *testing.T) {
	const total = 5 * segSize
	b := NewBroadcaster(Options{})
	defer b.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		publish(t, b, 1, total)
	}()
	type started struct {
		w    *Watcher
		from uint64
	}
	var ws []started
	for i := 0; i < 20; i++ {
		from := b.Revision()
		w, err := b.Watch(context.Background(), from, WatcherOptions{Buffer: 1})
		if err != nil {
			t.Fatalf("Watch(%d): %v", from, err)
		}
		ws = append(ws, started{w, from})
		runtime.Gosched()
	}
	var wg sync.WaitGroup
	for i, s := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.w.Stop()
			got := revisions(collect(t, s.w, int(total-s.from)))
			if want := seq(s.from+1, total); !slices.Equal(got, want) {
				t.Errorf("watcher %d from %d: got %d revisions %v…; want %d", i, s.from, len(got), got[:min(5, len(got))], len(want))
			}
		}()
	}
	wg.Wait()
	<-done
}

func TestTransitions(t *testing.T) {
	type obj struct{ match bool }
	yes, no := obj{true}, obj{false}
	match := func(o any) bool { return o.(obj).match }
	tests := []struct {
		name   string
		change Change
		want   *Event // nil: nothing delivered
	}{
		{"added matching", Change{Type: Added, Revision: 2, Object: yes}, &Event{Type: Added, Revision: 2, Object: yes}},
		{"added not matching", Change{Type: Added, Revision: 2, Object: no}, nil},
		{"modified, still matching", Change{Type: Modified, Revision: 2, Object: yes, Prev: yes}, &Event{Type: Modified, Revision: 2, Object: yes}},
		{"modified, starts matching", Change{Type: Modified, Revision: 2, Object: yes, Prev: no}, &Event{Type: Added, Revision: 2, Object: yes}},
		{"modified, stops matching", Change{Type: Modified, Revision: 2, Object: no, Prev: yes}, &Event{Type: Deleted, Revision: 2, Object: yes}},
		{"modified, never matching", Change{Type: Modified, Revision: 2, Object: no, Prev: no}, nil},
		{"deleted matching", Change{Type: Deleted, Revision: 2, Prev: yes}, &Event{Type: Deleted, Revision: 2, Object: yes}},
		{"deleted not matching", Change{Type: Deleted, Revision: 2, Prev: no}, nil},
		{"progress marker", Change{Type: Bookmark, Revision: 2}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBroadcaster(Options{})
			defer b.Close()
			w, err := b.Watch(context.Background(), 0, WatcherOptions{Match: match})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if err := b.Publish(tt.change); err != nil {
				t.Fatal(err)
			}
			// A later matching change tells us the first was consumed.
			if err := b.Publish(Change{Type: Added, Revision: 3, Object: yes}); err != nil {
				t.Fatal(err)
			}
			got := next(t, w)
			if tt.want == nil {
				if got.Revision != 3 {
					t.Fatalf("got %+v; want nothing before the sentinel at 3", got)
				}
				return
			}
			if got != *tt.want {
				t.Fatalf("got %+v; want %+v", got, *tt.want)
			}
		})
	}
}

func TestSlowWatcherDoesNotBlockPublish(t *testing.T) {
	b := NewBroadcaster(Options{MaxEvents: segSize})
	defer b.Close()
	w, err := b.Watch(context.Background(), 0, WatcherOptions{Buffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := b.Watch(context.Background(), 0, WatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Stop()
	// Publish in chunks, letting a reading watcher keep up, while w
	// never reads: Publish returns every time.
	const chunk, n = segSize / 4, 20 * segSize
	for r := uint64(0); r < n; r += chunk {
		publish(t, b, r+1, r+chunk)
		if got := revisions(collect(t, fast, chunk)); !slices.Equal(got, seq(r+1, r+chunk)) {
			t.Fatalf("fast watcher got %v; want %d..%d", got, r+1, r+chunk)
		}
	}
	evs := drain(t, w)
	if !errors.Is(w.Err(), ErrTooSlow) {
		t.Fatalf("slow watcher ended with %v; want %v", w.Err(), ErrTooSlow)
	}
	// How many events it got before falling behind depends on scheduling
	// (none, under load); what it got must be a gapless prefix, short of
	// everything.
	if len(evs) >= n {
		t.Fatalf("slow watcher got %d events before ending; want fewer than all %d", len(evs), n)
	}
	if !slices.Equal(revisions(evs), seq(1, uint64(len(evs)))) {
		t.Fatalf("slow watcher got %v; want a gapless prefix", revisions(evs))
	}
}

func TestCompaction(t *testing.T) {
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	t.Run("by count", func(t *testing.T) {
		b := NewBroadcaster(Options{MaxEvents: 2 * segSize})
		defer b.Close()
		publish(t, b, 1, 4*segSize)
		// Keeps at least MaxEvents and drops whole segments.
		if got, want := b.Oldest(), uint64(2*segSize); got != want {
			t.Fatalf("got Oldest %d; want %d", got, want)
		}
	})
	t.Run("by age", func(t *testing.T) {
		b := NewBroadcaster(Options{History: time.Minute, Clock: clock})
		defer b.Close()
		publish(t, b, 1, 2*segSize)
		advance(2 * time.Minute)
		publish(t, b, 2*segSize+1, 2*segSize+1)
		if got, want := b.Oldest(), uint64(2*segSize); got != want {
			t.Fatalf("got Oldest %d; want %d", got, want)
		}
	})
	t.Run("explicit", func(t *testing.T) {
		b := NewBroadcaster(Options{})
		defer b.Close()
		publish(t, b, 1, 3*segSize)
		b.Compact(segSize + 10)
		if got, want := b.Oldest(), uint64(segSize+10); got != want {
			t.Fatalf("got Oldest %d; want %d", got, want)
		}
		b.Compact(5) // never goes back
		if got, want := b.Oldest(), uint64(segSize+10); got != want {
			t.Fatalf("after Compact(5): got Oldest %d; want %d", got, want)
		}
		b.Compact(1 << 40) // capped at the latest revision
		if got, want := b.Oldest(), uint64(3*segSize); got != want {
			t.Fatalf("after a future Compact: got Oldest %d; want %d", got, want)
		}
	})
}

func TestGone(t *testing.T) {
	b := NewBroadcaster(Options{})
	defer b.Close()
	publish(t, b, 1, 2*segSize)
	b.Compact(100)
	tests := []struct {
		from    uint64
		wantErr error
	}{
		{from: 0, wantErr: ErrGone},
		{from: 99, wantErr: ErrGone},
		{from: 100, wantErr: nil},
		{from: 2 * segSize, wantErr: nil},
		{from: 1 << 40, wantErr: nil}, // the future is never gone
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.from), func(t *testing.T) {
			w, err := b.Watch(context.Background(), tt.from, WatcherOptions{})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Watch: got error %v; want %v", err, tt.wantErr)
			}
			if err == nil {
				w.Stop()
			}
			_, err = b.Since(tt.from)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Since: got error %v; want %v", err, tt.wantErr)
			}
		})
	}
}

func TestSince(t *testing.T) {
	b := NewBroadcaster(Options{})
	defer b.Close()
	publish(t, b, 1, 2*segSize+5)
	for _, from := range []uint64{0, 1, segSize - 1, segSize, 2*segSize + 5} {
		t.Run(fmt.Sprint(from), func(t *testing.T) {
			s, err := b.Since(from)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for c := range s {
				got = append(got, c.Revision)
			}
			if want := seq(from+1, 2*segSize+5); !slices.Equal(got, want) {
				t.Fatalf("got %d changes; want %d", len(got), len(want))
			}
		})
	}
}

func TestPublishErrors(t *testing.T) {
	b := NewBroadcaster(Options{Revision: 10})
	if got := b.Revision(); got != 10 {
		t.Fatalf("got Revision %d; want 10", got)
	}
	if err := b.Publish(added(10)); err == nil {
		t.Fatal("Publish(10) at revision 10: got nil error; want an error")
	}
	if err := b.Publish(added(11)); err != nil {
		t.Fatalf("Publish(11): %v", err)
	}
	b.Close()
	if err := b.Publish(added(12)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Publish after Close: got %v; want %v", err, ErrClosed)
	}
	if _, err := b.Watch(context.Background(), 0, WatcherOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Watch after Close: got %v; want %v", err, ErrClosed)
	}
}

func TestStartAndInitialEventsEnd(t *testing.T) {
	b := NewBroadcaster(Options{Revision: 5})
	defer b.Close()
	start := func(yield func(Change) bool) {
		for _, r := range []uint64{2, 3, 4} {
			if !yield(added(r)) {
				return
			}
		}
	}
	odd := func(o any) bool { return o.(uint64)%2 == 1 }
	w, err := b.Watch(context.Background(), 5, WatcherOptions{Match: odd, Start: start, InitialEventsEnd: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	publish(t, b, 6, 9)
	got := collect(t, w, 4)
	want := []Event{
		{Type: Added, Revision: 3, Object: uint64(3)},
		{Type: Bookmark, Revision: 5, InitialEventsEnd: true},
		{Type: Added, Revision: 7, Object: uint64(7)},
		{Type: Added, Revision: 9, Object: uint64(9)},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v; want %+v", got, want)
	}
}

// TestBookmarks checks that periodic bookmarks never claim a revision
// whose matching event has not been delivered yet.
func TestBookmarks(t *testing.T) {
	b := NewBroadcaster(Options{BookmarkInterval: time.Microsecond})
	defer b.Close()
	even := func(o any) bool { return o.(uint64)%2 == 0 }
	w, err := b.Watch(context.Background(), 0, WatcherOptions{Match: even, Bookmarks: true, Buffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const n = 2000
	go publish(t, b, 1, n)
	var delivered, bookmark uint64
	bookmarks := 0
	for delivered < n || bookmark < n {
		ev := next(t, w)
		switch ev.Type {
		case Added:
			if ev.Revision < bookmark {
				t.Fatalf("got event %d after a bookmark at %d; want bookmarks never past undelivered events", ev.Revision, bookmark)
			}
			if want := delivered + 2; ev.Revision != want {
				t.Fatalf("got event %d; want %d", ev.Revision, want)
			}
			delivered = ev.Revision
		case Bookmark:
			if ev.Revision < bookmark {
				t.Fatalf("got bookmark %d after %d; want non-decreasing", ev.Revision, bookmark)
			}
			if ev.Revision > delivered+1 {
				t.Fatalf("got bookmark %d with the last delivered event at %d; want at most %d", ev.Revision, delivered, delivered+1)
			}
			bookmark = ev.Revision
			bookmarks++
		default:
			t.Fatalf("got %v event; want ADDED or BOOKMARK", ev.Type)
		}
	}
	if bookmarks == 0 {
		t.Fatal("got no bookmarks; want some")
	}
}

func TestRequestBookmark(t *testing.T) {
	b := NewBroadcaster(Options{})
	defer b.Close()
	none := func(any) bool { return false }
	w, err := b.Watch(context.Background(), 0, WatcherOptions{Match: none})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	publish(t, b, 1, 10)
	if err := b.WaitFor(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	// The watcher may not have consumed everything yet: ask until the
	// bookmark reaches 10. Each bookmark must be ≤ 10 and non-decreasing.
	var last uint64
	for last < 10 {
		w.RequestBookmark()
		ev := next(t, w)
		if ev.Type != Bookmark || ev.Revision < last || ev.Revision > 10 {
			t.Fatalf("got %+v after bookmark %d; want a bookmark in [%d, 10]", ev, last, last)
		}
		last = ev.Revision
	}
}

func TestEnd(t *testing.T) {
	base := runtime.NumGoroutine()
	tests := []struct {
		name    string
		end     func(w *Watcher, cancel context.CancelFunc, b *Broadcaster)
		wantErr error
	}{
		{"stop", func(w *Watcher, _ context.CancelFunc, _ *Broadcaster) { w.Stop(); w.Stop() }, nil},
		{"stop from another goroutine", func(w *Watcher, _ context.CancelFunc, _ *Broadcaster) {
			done := make(chan struct{})
			go func() { w.Stop(); close(done) }()
			<-done
		}, nil},
		{"ctx", func(_ *Watcher, cancel context.CancelFunc, _ *Broadcaster) { cancel() }, context.Canceled},
		{"close", func(_ *Watcher, _ context.CancelFunc, b *Broadcaster) { b.Close() }, ErrClosed},
	}
	for _, tt := range tests {
		for _, blocked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/blocked=%v", tt.name, blocked), func(t *testing.T) {
				b := NewBroadcaster(Options{})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				w, err := b.Watch(ctx, 0, WatcherOptions{Buffer: 1})
				if err != nil {
					t.Fatal(err)
				}
				if blocked { // the goroutine waits on a full channel
					publish(t, b, 1, 5)
				}
				tt.end(w, cancel, b)
				drain(t, w)
				if err := w.Err(); !errors.Is(err, tt.wantErr) {
					t.Fatalf("got Err %v; want %v", err, tt.wantErr)
				}
				b.Close() // waits for every watcher goroutine
			})
		}
	}
	// Goroutines that signalled their end may still be exiting.
	for i := 0; i < 1000 && runtime.NumGoroutine() > base; i++ {
		time.Sleep(time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > base {
		t.Fatalf("got %d goroutines after every watch ended; want at most %d", got, base)
	}
}

func TestWaitFor(t *testing.T) {
	b := NewBroadcaster(Options{})
	defer b.Close()
	var reached atomic.Bool
	done := make(chan error)
	go func() {
		err := b.WaitFor(context.Background(), 3)
		reached.Store(b.Revision() >= 3)
		done <- err
	}()
	publish(t, b, 1, 3)
	if err := <-done; err != nil || !reached.Load() {
		t.Fatalf("WaitFor(3): got %v, reached %v; want nil, true", err, reached.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.WaitFor(ctx, 4); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitFor(4) with a cancelled ctx: got %v; want %v", err, context.Canceled)
	}
}
