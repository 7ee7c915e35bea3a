package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Scenario names, in the order they run on each peer.
const (
	ScenarioCreate = "create" // also measures heap per object
	ScenarioGet    = "get"
	ScenarioList   = "list"   // whole, 1% by label, paged walk
	ScenarioUpdate = "update" // 8 workers on one object, conflicts retried
	ScenarioWatch  = "watch"  // fan-out to Watchers
	// ScenarioWatchMany is the fan-out to ManyWatchers.
	ScenarioWatchMany = "watch1000"
	// ScenarioPaced is the fan-out to Watchers with the writes paced at
	// PacedRate: delivery latency at the same load on every peer.
	ScenarioPaced = "paced"
	// ScenarioStall is a fan-out with one watcher that never reads.
	ScenarioStall = "stall"
)

// AllScenarios lists every scenario.
var AllScenarios = []string{ScenarioCreate, ScenarioGet, ScenarioList, ScenarioUpdate, ScenarioWatch, ScenarioWatchMany, ScenarioPaced, ScenarioStall}

// Config sizes a run. Zero fields take the defaults in brackets.
type Config struct {
	N               int           // objects [10000]
	Scenarios       []string      // [AllScenarios]; create always runs (the others need the objects)
	UpdateWorkers   int           // [8]
	UpdatesEach     int           // per update worker [100]
	Watchers        int           // [100]
	WatchWrites     int           // [1000]
	WatchWriters    int           // [4]
	PageSize        int64         // [500]
	WatchDrainLimit time.Duration // how long watchers may take to catch up after the writes [20s]
	ManyWatchers    int           // [1000]
	ManyWrites      int           // writes of the ManyWatchers fan-out [100]
	PacedRate       int           // writes/s of the paced fan-out, all writers together [50]
	PacedWrites     int           // writes of the paced fan-out [400]
	StallReaders    int           // watchers that read beside the stalled one [10]
	StallWrites     int           // [3000]
	// WriteLimit bounds the writes of one watch scenario: writers still
	// blocked after it are reported as such [2m].
	WriteLimit time.Duration
	Log        io.Writer // progress, or nil
}

func (c *Config) defaults() {
	if c.N <= 0 {
		c.N = 10000
	}
	if len(c.Scenarios) == 0 {
		c.Scenarios = AllScenarios
	}
	if c.UpdateWorkers <= 0 {
		c.UpdateWorkers = 8
	}
	if c.UpdatesEach <= 0 {
		c.UpdatesEach = 100
	}
	if c.Watchers <= 0 {
		c.Watchers = 100
	}
	if c.WatchWrites <= 0 {
		c.WatchWrites = 1000
	}
	if c.WatchWriters <= 0 {
		c.WatchWriters = 4
	}
	if c.PageSize <= 0 {
		c.PageSize = 500
	}
	if c.WatchDrainLimit <= 0 {
		c.WatchDrainLimit = 20 * time.Second
	}
	if c.ManyWatchers <= 0 {
		c.ManyWatchers = 1000
	}
	if c.ManyWrites <= 0 {
		c.ManyWrites = 100
	}
	if c.PacedRate <= 0 {
		c.PacedRate = 50
	}
	if c.PacedWrites <= 0 {
		c.PacedWrites = 400
	}
	if c.StallReaders <= 0 {
		c.StallReaders = 10
	}
	if c.StallWrites <= 0 {
		c.StallWrites = 3000
	}
	if c.WriteLimit <= 0 {
		c.WriteLimit = 2 * time.Minute
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

func (c *Config) has(s string) bool { return slices.Contains(c.Scenarios, s) }

// Result holds one peer's figures, by Row.Key.
type Result struct {
	Peer    PeerInfo
	Figures map[string]string
	Err     error // the peer failed to start or a scenario failed
}

// Row is one line of the table.
type Row struct {
	Key, Label string
}

// Rows returns the table's rows for n objects.
func Rows(c Config) []Row {
	c.defaults()
	return []Row{
		{"create", "create, objects/s (1 caller)"},
		{"heap", "heap per stored object (2 KiB JSON)"},
		{"get", "get, objects/s (1 caller)"},
		{"list", fmt.Sprintf("list %d whole, ms", c.N)},
		{"listmbs", "… MB/s of JSON (JSON MB; MB read off the connection, gzip/TLS)"},
		{"listraw", "… the same GET, body read but not decoded: MB/s of JSON (ms)"},
		{"label", fmt.Sprintf("list %d, 1%% by label selector, ms", c.N)},
		{"pages", fmt.Sprintf("paged walk of %d (limit %d), ms", c.N, c.PageSize)},
		{"update", fmt.Sprintf("update, %d workers on one object: updates/s", c.UpdateWorkers)},
		{"conflicts", "… conflicts retried"},
		{"lost", fmt.Sprintf("… lost updates (of %d)", c.UpdateWorkers*c.UpdatesEach)},
		{"wwrites", fmt.Sprintf("watch fan-out: writes/s, %d writers, %d watchers", c.WatchWriters, c.Watchers)},
		{"wdelivered", "… events delivered / expected"},
		{"wended", "… watchers ended early by the store"},
		{"wpanics", "… writes that panicked"},
		{"wp50", "… delivery latency p50"},
		{"wp99", "… delivery latency p99"},
		{"mwrites", fmt.Sprintf("watch fan-out: writes/s, %d writers, %d watchers, %d writes", c.WatchWriters, c.ManyWatchers, c.ManyWrites)},
		{"mdelivered", "… events delivered / expected"},
		{"mended", "… watchers ended early by the store"},
		{"mpanics", "… writes that panicked"},
		{"mp50", "… delivery latency p50"},
		{"mp99", "… delivery latency p99"},
		{"pwrites", fmt.Sprintf("watch fan-out paced at %d writes/s: writes/s achieved, %d writers, %d watchers, %d writes", c.PacedRate, c.WatchWriters, c.Watchers, c.PacedWrites)},
		{"pdelivered", "… events delivered / expected"},
		{"pended", "… watchers ended early by the store"},
		{"pp50", "… delivery latency p50"},
		{"pp99", "… delivery latency p99"},
		{"swrites", fmt.Sprintf("one stalled watcher: writes/s, %d writers, %d writes, %d watchers reading + 1 never reading", c.WatchWriters, c.StallWrites, c.StallReaders)},
		{"spanics", "… writes that panicked"},
		{"sdelivered", fmt.Sprintf("… events delivered to the %d readers / expected", c.StallReaders)},
		{"sended", "… readers ended early by the store"},
		{"sp99", "… delivery latency p99 to the readers"},
		{"sstalled", "… the stalled watcher, read after the writes"},
	}
}

// Run runs the scenarios on each peer in turn, on one embedded etcd
// shared by the peers that need it.
func Run(ctx context.Context, cfg Config, peers []PeerInfo) []Result {
	cfg.defaults()
	var etcd *Etcd
	var etcdErr error
	for _, p := range peers {
		if p.NeedsEtcd && etcd == nil && etcdErr == nil {
			etcd, etcdErr = StartEtcd()
		}
	}
	if etcd != nil {
		defer etcd.Close()
	}
	var out []Result
	for _, info := range peers {
		r := Result{Peer: info, Figures: map[string]string{}}
		if info.NeedsEtcd && etcdErr != nil {
			r.Err = etcdErr
			out = append(out, r)
			continue
		}
		fmt.Fprintf(cfg.Log, "== %s\n", info.Name)
		p, err := info.Start(ctx, etcd)
		if err != nil {
			r.Err = err
			out = append(out, r)
			continue
		}
		r.Err = runPeer(ctx, cfg, p, r.Figures)
		p.Close()
		if r.Err != nil {
			fmt.Fprintf(cfg.Log, "   error: %v\n", r.Err)
		}
		out = append(out, r)
		runtime.GC()
	}
	return out
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func rate(n int, d time.Duration) string {
	return fmt.Sprintf("%.0f", float64(n)/d.Seconds())
}

func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func runPeer(ctx context.Context, cfg Config, p Peer, fig map[string]string) error {
	// create (and heap per object)
	objs := make([]*unstructured.Unstructured, cfg.N)
	for i := range objs {
		objs[i] = Widget(i)
	}
	before := heap()
	start := time.Now()
	for i, o := range objs {
		if _, err := p.Create(ctx, o); err != nil {
			return fmt.Errorf("create %d: %w", i, err)
		}
	}
	d := time.Since(start)
	// A consistent list waits until a cache has every object: the gets
	// below read at "any" revision from the caches.
	if _, err := p.List(ctx, ListOptions{LabelSelector: "shard=s00"}); err != nil {
		return fmt.Errorf("list after create: %w", err)
	}
	after := heap()
	fig["create"] = rate(cfg.N, d)
	fig["heap"] = fmt.Sprintf("%d B", int64(after-before)/int64(cfg.N))
	runtime.KeepAlive(objs)
	objs = nil
	fmt.Fprintf(cfg.Log, "   create %s/s, heap %s/object\n", fig["create"], fig["heap"])

	if cfg.has(ScenarioGet) {
		rnd := rand.New(rand.NewPCG(1, 2))
		gets := cfg.N
		start := time.Now()
		for range gets {
			ns, name := Name(rnd.IntN(cfg.N))
			if _, err := p.Get(ctx, ns, name); err != nil {
				return fmt.Errorf("get %s/%s: %w", ns, name, err)
			}
		}
		fig["get"] = rate(gets, time.Since(start))
		fmt.Fprintf(cfg.Log, "   get %s/s\n", fig["get"])
	}

	if cfg.has(ScenarioList) {
		if err := listScenarios(ctx, cfg, p, fig); err != nil {
			return err
		}
	}
	if cfg.has(ScenarioUpdate) {
		if err := updateScenario(ctx, cfg, p, fig); err != nil {
			return err
		}
	}
	if cfg.has(ScenarioWatch) {
		if err := fanOut(ctx, cfg, p, fig, "w", cfg.Watchers, min(cfg.WatchWrites, cfg.N), 0); err != nil {
			return fmt.Errorf("watch fan-out to %d: %w", cfg.Watchers, err)
		}
	}
	if cfg.has(ScenarioWatchMany) {
		if err := fanOut(ctx, cfg, p, fig, "m", cfg.ManyWatchers, min(cfg.ManyWrites, cfg.N), 0); err != nil {
			fig["mwrites"] = "error: " + err.Error()
		}
	}
	if cfg.has(ScenarioPaced) {
		if err := fanOut(ctx, cfg, p, fig, "p", cfg.Watchers, min(cfg.PacedWrites, cfg.N), cfg.PacedRate); err != nil {
			fig["pwrites"] = "error: " + err.Error()
		}
	}
	if cfg.has(ScenarioStall) {
		if err := stallScenario(ctx, cfg, p, fig); err != nil {
			fig["swrites"] = "error: " + err.Error()
		}
	}
	return nil
}

func listScenarios(ctx context.Context, cfg Config, p Peer, fig map[string]string) error {
	timeList := func(reps int, opts ListOptions, want int) (time.Duration, error) {
		var ds []time.Duration
		for range reps {
			start := time.Now()
			page, err := p.List(ctx, opts)
			if err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(start))
			if len(page.Items) != want {
				return 0, fmt.Errorf("list %+v: got %d items; want %d", opts, len(page.Items), want)
			}
		}
		return median(ds), nil
	}
	counter, overHTTP := p.(interface{ bytesRead() (body, wire int64) })
	var body0, wire0 int64
	if overHTTP {
		body0, wire0 = counter.bytesRead()
	}
	d, err := timeList(3, ListOptions{}, cfg.N)
	if err != nil {
		return err
	}
	fig["list"] = ms(d)
	if overHTTP {
		body1, wire1 := counter.bytesRead()
		body, wire := float64(body1-body0)/3/1e6, float64(wire1-wire0)/3/1e6
		fig["listmbs"] = fmt.Sprintf("%.0f MB/s (%.1f MB; %.1f MB)", body/d.Seconds(), body, wire)
	}
	if raw, ok := p.(interface {
		rawList(context.Context) (int64, error)
	}); ok {
		var ds []time.Duration
		var n int64
		for range 3 {
			start := time.Now()
			b, err := raw.rawList(ctx)
			if err != nil {
				return err
			}
			ds = append(ds, time.Since(start))
			n = b
		}
		d := median(ds)
		fig["listraw"] = fmt.Sprintf("%.0f MB/s (%s ms)", float64(n)/1e6/d.Seconds(), ms(d))
	}
	want := 0
	for i := range cfg.N {
		if i%Shards == 7 {
			want++
		}
	}
	d, err = timeList(5, ListOptions{LabelSelector: "shard=s07"}, want)
	if err != nil {
		return err
	}
	fig["label"] = ms(d)

	var ds []time.Duration
	pages, items := 0, 0
	for range 3 {
		pages, items = 0, 0
		start := time.Now()
		opts := ListOptions{Limit: cfg.PageSize}
		for {
			page, err := p.List(ctx, opts)
			if errors.Is(err, ErrUnsupported) {
				fig["pages"] = "no paging"
				return nil
			}
			if err != nil {
				return fmt.Errorf("paged list: %w", err)
			}
			pages++
			items += len(page.Items)
			if page.Continue == "" {
				break
			}
			opts.Continue = page.Continue
		}
		ds = append(ds, time.Since(start))
	}
	fig["pages"] = fmt.Sprintf("%s (%d pages)", ms(median(ds)), pages)
	if items != cfg.N {
		fig["pages"] += fmt.Sprintf(", %d items!", items)
	}
	fmt.Fprintf(cfg.Log, "   list %s ms (%s; raw %s), label %s ms, pages %s\n", fig["list"], fig["listmbs"], fig["listraw"], fig["label"], fig["pages"])
	return nil
}

func updateScenario(ctx context.Context, cfg Config, p Peer, fig map[string]string) error {
	ns, name := Name(0)
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, cfg.UpdateWorkers)
	start := time.Now()
	for range cfg.UpdateWorkers {
		wg.Go(func() {
			for range cfg.UpdatesEach {
				for {
					cur, err := p.Get(ctx, ns, name)
					if err != nil {
						errc <- err
						return
					}
					cur = cur.DeepCopy() // peers may hand out shared objects
					setSpecInt(cur, "counter", specInt(cur, "counter")+1)
					_, err = p.Update(ctx, cur)
					if errors.Is(err, ErrConflict) {
						conflicts.Add(1)
						continue
					}
					if err != nil {
						errc <- err
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	close(errc)
	if err := <-errc; err != nil {
		return fmt.Errorf("update: %w", err)
	}
	total := cfg.UpdateWorkers * cfg.UpdatesEach
	// The final count comes from a consistent read: a list (a cache's Get
	// may lag behind the last write).
	final, err := consistentGet(ctx, p, 0)
	if err != nil {
		return err
	}
	fig["update"] = rate(total, d)
	fig["conflicts"] = fmt.Sprint(conflicts.Load())
	fig["lost"] = fmt.Sprint(int64(total) - specInt(final, "counter"))
	fmt.Fprintf(cfg.Log, "   update %s/s, %s conflicts, %s lost\n", fig["update"], fig["conflicts"], fig["lost"])
	return nil
}

// consistentGet reads object i with a list, which every peer serves
// consistently (Get from a cache may be stale).
func consistentGet(ctx context.Context, p Peer, i int) (*unstructured.Unstructured, error) {
	l, err := p.List(ctx, ListOptions{LabelSelector: fmt.Sprintf("shard=s%02d", i%Shards)})
	if err != nil {
		return nil, err
	}
	ns, name := Name(i)
	for k := range l.Items {
		if l.Items[k].GetNamespace() == ns && l.Items[k].GetName() == name {
			return &l.Items[k], nil
		}
	}
	return nil, fmt.Errorf("%s/%s not in the list", ns, name)
}

func dur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	}
}

// Table renders results as a Markdown table: rows are figures, columns
// peers.
func Table(cfg Config, results []Result) string {
	var b strings.Builder
	b.WriteString("| figure |")
	for _, r := range results {
		b.WriteString(" " + r.Peer.Name + " |")
	}
	b.WriteString("\n|---|")
	for range results {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, row := range Rows(cfg) {
		b.WriteString("| " + row.Label + " |")
		for _, r := range results {
			v, ok := r.Figures[row.Key]
			if !ok {
				v = "—"
				if r.Err != nil {
					v = "error"
				}
			}
			b.WriteString(" " + v + " |")
		}
		b.WriteString("\n")
	}
	for _, r := range results {
		if r.Err != nil {
			fmt.Fprintf(&b, "\n%s failed: %v\n", r.Peer.Name, r.Err)
		}
	}
	return b.String()
}
