package compare

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// watchStats is what one reading watcher saw.
type watchStats struct {
	delivered int
	ended     bool
	lat       []time.Duration
}

// readers is a set of watchers, each read by a goroutine of its own until
// it has seen want stamped writes or ends.
type readers struct {
	ws       []Watcher
	stats    []watchStats
	stopping atomic.Bool
	wg       sync.WaitGroup
}

// startReaders opens n watches from resourceVersion rv and reads them.
func startReaders(ctx context.Context, p Peer, rv string, n, want int) (*readers, error) {
	r := &readers{ws: make([]Watcher, 0, n), stats: make([]watchStats, n)}
	for i := range n {
		w, err := p.Watch(ctx, rv)
		if err != nil {
			r.stop()
			return nil, fmt.Errorf("watch %d: %w", i, err)
		}
		r.ws = append(r.ws, w)
	}
	for i, w := range r.ws {
		st := &r.stats[i]
		st.lat = make([]time.Duration, 0, want)
		r.wg.Go(func() {
			for st.delivered < want {
				o, ok := w.Next()
				if !ok {
					st.ended = !r.stopping.Load()
					return
				}
				sent := specInt(o, "sentAt")
				if sent == 0 {
					continue // not a stamped write
				}
				st.lat = append(st.lat, time.Duration(time.Now().UnixNano()-sent))
				st.delivered++
			}
		})
	}
	return r, nil
}

// drain waits up to limit for every reader to finish, then stops the
// watches.
func (r *readers) drain(limit time.Duration) {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
	}
	r.stop()
	<-done
}

func (r *readers) stop() {
	r.stopping.Store(true)
	for _, w := range r.ws {
		w.Stop()
	}
}

// totals sums the readers' figures.
func (r *readers) totals() (delivered, ended int, lat []time.Duration) {
	for _, st := range r.stats {
		delivered += st.delivered
		if st.ended {
			ended++
		}
		lat = append(lat, st.lat...)
	}
	slices.Sort(lat)
	return delivered, ended, lat
}

// writeResult is how a run of stamped writes went.
type writeResult struct {
	took    time.Duration
	done    int   // writes that returned
	panics  int64 // writes that panicked (counted in done)
	blocked bool  // writers still blocked after the limit
}

// cell is the writes/s figure, or what stopped the writers.
func (w writeResult) cell(writes int, limit time.Duration) string {
	if w.blocked {
		return fmt.Sprintf("blocks writer (%d of %d writes in %s)", w.done, writes, limit)
	}
	return rate(writes, w.took)
}

// stampedWrites updates objects 0..writes-1 (modulo cfg.N) with
// cfg.WatchWriters writers, each write stamped with its send time in
// spec.sentAt. With perSec > 0 the writers together start at most
// perSec writes a second (a tick a writer misses while busy is dropped,
// so a store slower than the pace shows a lower rate achieved). A write
// that panics is counted and the writer goes on; writers not done after
// cfg.WriteLimit are left behind (their context cancelled) and reported
// blocked.
func stampedWrites(ctx context.Context, cfg Config, p Peer, writes, perSec int) (writeResult, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // lets writers left blocked go, where the store honours it
	var pace <-chan time.Time
	if perSec > 0 {
		t := time.NewTicker(time.Second / time.Duration(perSec))
		defer t.Stop()
		pace = t.C
	}
	var done, panics atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, cfg.WatchWriters)
	start := time.Now()
	for wr := range cfg.WatchWriters {
		wg.Go(func() {
			for i := wr; i < writes; i += cfg.WatchWriters {
				if pace != nil {
					select {
					case <-pace:
					case <-wctx.Done():
						return
					}
				}
				if err := stampedWrite(wctx, p, i%cfg.N, &panics); err != nil {
					if wctx.Err() == nil {
						errc <- err
					}
					return
				}
				done.Add(1)
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	var res writeResult
	select {
	case <-finished:
		res.took = time.Since(start)
	case <-time.After(cfg.WriteLimit):
		res.blocked = true
	}
	res.done, res.panics = int(done.Load()), panics.Load()
	if !res.blocked {
		close(errc)
		if err := <-errc; err != nil {
			return res, err
		}
	}
	return res, nil
}

func stampedWrite(ctx context.Context, p Peer, i int, panics *atomic.Int64) error {
	ns, name := Name(i)
	for {
		cur, err := p.Get(ctx, ns, name)
		if err != nil {
			return fmt.Errorf("get %s/%s: %w", ns, name, err)
		}
		cur = cur.DeepCopy()
		setSpecInt(cur, "sentAt", time.Now().UnixNano())
		func() {
			defer func() {
				if r := recover(); r != nil {
					panics.Add(1)
					err = nil // the write was applied before the store's watchers panicked
				}
			}()
			_, err = p.Update(ctx, cur)
		}()
		if errors.Is(err, ErrConflict) {
			continue // a cache's get was behind; read again
		}
		if err != nil {
			return fmt.Errorf("update %s/%s: %w", ns, name, err)
		}
		return nil
	}
}

// fanOut is the fan-out scenario: watchers watch from the current
// resourceVersion while the writers make writes (paced at perSec, if
// not 0); every watcher must see every write. Figures go under
// key+"writes", key+"delivered" and so on.
func fanOut(ctx context.Context, cfg Config, p Peer, fig map[string]string, key string, watchers, writes, perSec int) error {
	first, err := p.List(ctx, ListOptions{LabelSelector: "shard=s00"})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r, err := startReaders(wctx, p, first.ResourceVersion, watchers, writes)
	if err != nil {
		return err
	}
	w, err := stampedWrites(ctx, cfg, p, writes, perSec)
	if err != nil {
		r.stop()
		return fmt.Errorf("writers: %w", err)
	}
	r.drain(cfg.WatchDrainLimit)
	delivered, ended, lat := r.totals()
	fig[key+"writes"] = w.cell(writes, cfg.WriteLimit)
	fig[key+"delivered"] = fmt.Sprintf("%d / %d", delivered, writes*watchers)
	fig[key+"ended"] = fmt.Sprint(ended)
	fig[key+"panics"] = fmt.Sprint(w.panics)
	if len(lat) > 0 {
		fig[key+"p50"] = dur(lat[len(lat)/2])
		fig[key+"p99"] = dur(lat[len(lat)*99/100])
	}
	fmt.Fprintf(cfg.Log, "   watch×%d %s writes/s, delivered %s, ended %s, panics %s, p50 %s p99 %s\n", watchers,
		fig[key+"writes"], fig[key+"delivered"], fig[key+"ended"], fig[key+"panics"], fig[key+"p50"], fig[key+"p99"])
	return nil
}

// stalledQuiet is how long the stalled watcher may stay silent, once read,
// before it is taken to have nothing more.
const stalledQuiet = 2 * time.Second

// stallScenario is the fan-out with one more watcher that is never read
// while the writes go on: does the store block the writers, starve the
// other watchers, or end the stalled one? Afterwards the stalled watcher
// is read to see what it kept.
func stallScenario(ctx context.Context, cfg Config, p Peer, fig map[string]string) error {
	writes := cfg.StallWrites
	first, err := p.List(ctx, ListOptions{LabelSelector: "shard=s00"})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stalled, err := p.Watch(wctx, first.ResourceVersion)
	if err != nil {
		return fmt.Errorf("stalled watch: %w", err)
	}
	defer stalled.Stop()
	r, err := startReaders(wctx, p, first.ResourceVersion, cfg.StallReaders, writes)
	if err != nil {
		return err
	}
	w, err := stampedWrites(ctx, cfg, p, writes, 0)
	if err != nil {
		r.stop()
		return fmt.Errorf("writers: %w", err)
	}
	r.drain(cfg.WatchDrainLimit)
	delivered, ended, lat := r.totals()
	fig["swrites"] = w.cell(writes, cfg.WriteLimit)
	fig["spanics"] = fmt.Sprint(w.panics)
	fig["sdelivered"] = fmt.Sprintf("%d / %d", delivered, writes*cfg.StallReaders)
	fig["sended"] = fmt.Sprint(ended)
	if len(lat) > 0 {
		fig["sp99"] = dur(lat[len(lat)*99/100])
	}
	fig["sstalled"] = readStalled(stalled, writes)
	fmt.Fprintf(cfg.Log, "   stall %s writes/s, panics %s, delivered %s, ended %s, p99 %s; stalled: %s\n",
		fig["swrites"], fig["spanics"], fig["sdelivered"], fig["sended"], fig["sp99"], fig["sstalled"])
	return nil
}

// readStalled reads w until it ends, has given every one of the writes,
// or stays silent for stalledQuiet, and says which.
func readStalled(w Watcher, writes int) string {
	var got atomic.Int64
	ended := make(chan bool, 1)
	go func() {
		for got.Load() < int64(writes) {
			o, ok := w.Next()
			if !ok {
				ended <- true
				return
			}
			if specInt(o, "sentAt") != 0 {
				got.Add(1)
			}
		}
		ended <- false
	}()
	last := int64(-1)
	for {
		select {
		case e := <-ended:
			if e {
				return fmt.Sprintf("ended by the store (had %d of %d)", got.Load(), writes)
			}
			return fmt.Sprintf("not ended: all %d, late", writes)
		case <-time.After(stalledQuiet):
			if n := got.Load(); n != last {
				last = n
				continue
			}
			w.Stop()
			return fmt.Sprintf("not ended: %d of %d, then silent", got.Load(), writes)
		}
	}
}
