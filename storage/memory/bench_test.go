package memory

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// value2K is a 2 KiB JSON-ish object, shared by the objects of the
// speed benchmarks (the store never copies values, so sharing one slice
// changes memory use, not speed). BenchmarkMemory gives each object its
// own.
var value2K = makeValue(0)

func makeValue(i int) []byte {
	b := fmt.Appendf(nil, `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w-%06d","namespace":"ns-%d","uid":"%08x-0000-4000-8000-000000000000"},"spec":{`, i, i%10, i)
	for j := 0; len(b) < 1900; j++ {
		b = fmt.Appendf(b, `"field%03d":"value-%06d",`, j, i)
	}
	b = append(b, `"pad":"`...)
	for len(b) < valueSize-3 {
		b = append(b, 'x')
	}
	// Exactly valueSize bytes in an exactly sized allocation, so memory
	// figures carry no slack from building it.
	return append(make([]byte, 0, valueSize), append(b, `"}}`...)...)
}

const valueSize = 2048

func benchKey(i int) string { return fmt.Sprintf("/example.com/widgets/ns-%d/w-%06d", i%10, i) }

// benchObject is a realistic stored object: value, uid, two labels and
// the two fields every namespaced resource has.
func benchObject(i int, value []byte) storage.Object {
	return storage.Object{
		Key:    benchKey(i),
		Value:  value,
		UID:    fmt.Sprintf("%08x-0000-4000-8000-000000000000", i),
		Labels: map[string]string{"app": "bench", "shard": fmt.Sprint(i % 16)},
		Fields: map[string]string{"metadata.name": fmt.Sprintf("w-%06d", i), "metadata.namespace": fmt.Sprintf("ns-%d", i%10)},
	}
}

// stores of n objects are built once per process and shared by the
// read benchmarks (which do not write).
var (
	storesMu sync.Mutex
	stores   = map[int]*Store{}
)

func storeOf(b *testing.B, n int) *Store {
	storesMu.Lock()
	defer storesMu.Unlock()
	if s, ok := stores[n]; ok {
		return s
	}
	s := New(Options{})
	for i := range n {
		if _, err := s.Create(ctx, benchObject(i, value2K)); err != nil {
			b.Fatal(err)
		}
	}
	stores[n] = s
	return s
}

// writeObjects returns n objects with distinct keys for the write
// benchmarks. They share their value and attribute maps (stored objects
// are immutable, so sharing is allowed), so that the benchmark's own
// garbage does not dominate what it measures.
func writeObjects(n int) []storage.Object {
	tmpl := benchObject(0, value2K)
	objs := make([]storage.Object, n)
	for i := range objs {
		objs[i] = tmpl
		objs[i].Key = benchKey(i)
	}
	return objs
}

func BenchmarkCreate(b *testing.B) {
	s := New(Options{})
	defer s.Close()
	objs := writeObjects(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Create(ctx, objs[i]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	const n = 10000
	s := storeOf(b, n)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = benchKey(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Get(ctx, keys[i%n], storage.GetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuaranteedUpdate(b *testing.B) {
	const n = 10000
	s := New(Options{})
	defer s.Close()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = benchKey(i)
		if _, err := s.Create(ctx, benchObject(i, value2K)); err != nil {
			b.Fatal(err)
		}
	}
	values := [2][]byte{makeValue(1), makeValue(2)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		v := values[i/n%2]
		_, err := s.GuaranteedUpdate(ctx, keys[i%n], storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
			cur.Value = v
			return cur, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList lists whole collections and 500-item pages: the first
// page, and a page 90% of the way through (from a continue token).
func BenchmarkList(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		s := storeOf(b, n)
		prefix := "/example.com/widgets/"
		b.Run(fmt.Sprintf("objects=%d/whole", n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				res, err := s.List(ctx, prefix, storage.ListOptions{})
				if err != nil || len(res.Items) != n {
					b.Fatalf("got %d items, %v; want %d", len(res.Items), err, n)
				}
			}
		})
		b.Run(fmt.Sprintf("objects=%d/page=500/first", n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				res, err := s.List(ctx, prefix, storage.ListOptions{Limit: 500})
				if err != nil || len(res.Items) != 500 {
					b.Fatalf("got %d items, %v; want 500", len(res.Items), err)
				}
			}
		})
		b.Run(fmt.Sprintf("objects=%d/page=500/deep", n), func(b *testing.B) {
			skip, err := s.List(ctx, prefix, storage.ListOptions{Limit: int64(n * 9 / 10)})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				res, err := s.List(ctx, prefix, storage.ListOptions{Limit: 500, Continue: skip.Continue})
				if err != nil || len(res.Items) != 500 {
					b.Fatalf("got %d items, %v; want 500", len(res.Items), err)
				}
			}
		})
	}
}

// BenchmarkListExact lists 10k objects at a revision 1000 writes old:
// "cold" rebuilds the state from history every time (the snapshot cache
// emptied), "cached" reads the snapshot the first call left.
func BenchmarkListExact(b *testing.B) {
	const n, writes = 10000, 1000
	s := New(Options{})
	defer s.Close()
	for i := range n {
		if _, err := s.Create(ctx, benchObject(i, value2K)); err != nil {
			b.Fatal(err)
		}
	}
	old, _ := s.Revision(ctx)
	v := makeValue(1)
	for i := range writes {
		_, err := s.GuaranteedUpdate(ctx, benchKey(i*7%n), storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
			cur.Value = v
			return cur, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	opts := storage.ListOptions{Match: rv.Exact, Revision: old}
	for _, cached := range []bool{false, true} {
		b.Run(map[bool]string{false: "cold", true: "cached"}[cached], func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if !cached {
					s.snaps.Reset()
				}
				res, err := s.List(ctx, "/example.com/widgets/", opts)
				if err != nil || len(res.Items) != n || res.Revision != old {
					b.Fatalf("got %d items at %d, %v; want %d at %d", len(res.Items), res.Revision, err, n, old)
				}
			}
		})
	}
}

// BenchmarkWritesWithWatchers creates objects while 100 watchers of the
// collection each receive every event; it ends when all have. The writer
// is paced to stay within a window of the slowest watcher, as request
// handling paces a real server: unpaced, a writer on one of two cores
// outruns 100 readers on the other and they are ended for falling
// behind the retained history, which is the design (WATCH-8), not a
// throughput figure. writes/s is the sustained rate with every event
// delivered.
func BenchmarkWritesWithWatchers(b *testing.B) {
	const watchers, window = 100, 20000
	s := New(Options{})
	defer s.Close()
	var wg sync.WaitGroup
	got := make([]atomic.Int64, watchers)
	for i := range watchers {
		w, err := s.Watch(ctx, "/example.com/widgets/", storage.WatchOptions{Recursive: true})
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			for n := 0; n < b.N; n++ {
				if _, ok := <-w.ResultChan(); !ok {
					b.Errorf("watcher ended after %d of %d events: %v", n, b.N, w.(*watch.Watcher).Err())
					return
				}
				got[i].Store(int64(n + 1))
			}
		}()
	}
	slowest := func() int64 {
		m := got[0].Load()
		for i := range got {
			m = min(m, got[i].Load())
		}
		return m
	}
	objs := writeObjects(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if i%256 == 0 {
			for int64(i)-slowest() > window {
				runtime.Gosched()
			}
		}
		if _, err := s.Create(ctx, objs[i]); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
}

// BenchmarkMemory stores 10k objects with distinct 2 KiB values and
// reports the heap the store then holds per object (value, attributes,
// tree, history entry), and that divided by the value's size. "bare"
// objects have no labels or fields, so the figure is the store's own
// overhead; "attrs" objects carry two labels and two fields, as the
// registry stores them.
func BenchmarkMemory(b *testing.B) {
	const n = 10000
	for _, attrs := range []bool{false, true} {
		b.Run(map[bool]string{false: "bare", true: "attrs"}[attrs], func(b *testing.B) {
			var total, value float64
			for range b.N {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				s := New(Options{})
				for i := range n {
					o := benchObject(i, makeValue(i))
					if !attrs {
						o.Labels, o.Fields = nil, nil
					}
					value += float64(len(o.Value))
					if _, err := s.Create(ctx, o); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				total += float64(after.HeapAlloc) - float64(before.HeapAlloc)
				runtime.KeepAlive(s)
				s.Close()
			}
			perObject := total / float64(b.N*n)
			b.ReportMetric(perObject, "B/object")
			b.ReportMetric(perObject/(value/float64(b.N*n)), "x-encoded")
		})
	}
}
