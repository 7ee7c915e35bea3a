package cache_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/cache"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// The benchmarks compare, in one run, the memory store alone with a
// cache in front of a memory store, on the storage/memory benchmarks'
// workload: 10k objects of 2 KiB with two labels and two fields.

var bctx = context.Background()

const valueSize = 2048

func makeValue(i int) []byte {
	b := fmt.Appendf(nil, `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w-%06d","namespace":"ns-%d"},"spec":{`, i, i%10)
	for j := 0; len(b) < 1900; j++ {
		b = fmt.Appendf(b, `"field%03d":"value-%06d",`, j, i)
	}
	b = append(b, `"pad":"`...)
	for len(b) < valueSize-3 {
		b = append(b, 'x')
	}
	return append(b, `"}}`...)
}

var value2K = makeValue(0)

func benchKey(i int) string { return fmt.Sprintf("/example.com/widgets/ns-%d/w-%06d", i%10, i) }

func benchObject(i int) storage.Object {
	return storage.Object{
		Key:    benchKey(i),
		Value:  value2K,
		UID:    fmt.Sprintf("%08x-0000-4000-8000-000000000000", i),
		Labels: map[string]string{"app": "bench", "shard": fmt.Sprint(i % 16)},
		Fields: map[string]string{"metadata.name": fmt.Sprintf("w-%06d", i), "metadata.namespace": fmt.Sprintf("ns-%d", i%10)},
	}
}

// stores returns the two subjects: a memory store, and a cache over
// another; each holding n objects.
func stores(b *testing.B, n int) []struct {
	name string
	s    storage.Interface
} {
	b.Helper()
	m := memory.New(memory.Options{})
	b.Cleanup(m.Close)
	behind := memory.New(memory.Options{})
	b.Cleanup(behind.Close)
	c, err := cache.New(behind, cache.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	out := []struct {
		name string
		s    storage.Interface
	}{{"memory", m}, {"cache", c}}
	for _, st := range out {
		for i := range n {
			if _, err := st.s.Create(bctx, benchObject(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	return out
}

func BenchmarkGet(b *testing.B) {
	const n = 10000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = benchKey(i)
	}
	for _, st := range stores(b, n) {
		for _, m := range []rv.Match{rv.MostRecent, rv.Any} {
			b.Run(fmt.Sprintf("store=%s/match=%v", st.name, m), func(b *testing.B) {
				b.ReportAllocs()
				for i := range b.N {
					if _, err := st.s.Get(bctx, keys[i%n], storage.GetOptions{Match: m}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkList(b *testing.B) {
	const n = 10000
	for _, st := range stores(b, n) {
		for _, m := range []rv.Match{rv.MostRecent, rv.Any} {
			b.Run(fmt.Sprintf("objects=%d/store=%s/match=%v", n, st.name, m), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					res, err := st.s.List(bctx, "/example.com/widgets/", storage.ListOptions{Match: m})
					if err != nil || len(res.Items) != n {
						b.Fatalf("got %d items, %v; want %d", len(res.Items), err, n)
					}
				}
			})
		}
	}
}

// BenchmarkWritesWithWatchers creates objects while 100 watchers of the
// collection each receive every event, paced as storage/memory's
// benchmark of the same name is (the writer stays within a window of
// the slowest watcher); writes/s is the sustained rate with every event
// delivered. "cache-ryw" is a cache with Options.ReadYourWrites: each
// write returns once the cache has applied it.
func BenchmarkWritesWithWatchers(b *testing.B) {
	const watchers, window = 100, 20000
	for _, name := range []string{"memory", "cache", "cache-ryw"} {
		b.Run("store="+name, func(b *testing.B) {
			var s storage.Interface = memory.New(memory.Options{})
			defer s.(*memory.Store).Close()
			if name != "memory" {
				c, err := cache.New(s, cache.Options{ReadYourWrites: name == "cache-ryw"})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				s = c
			}
			var wg sync.WaitGroup
			got := make([]atomic.Int64, watchers)
			for i := range watchers {
				w, err := s.Watch(bctx, "/example.com/widgets/", storage.WatchOptions{Recursive: true})
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
			tmpl := benchObject(0)
			objs := make([]storage.Object, b.N)
			for i := range objs {
				objs[i] = tmpl
				objs[i].Key = benchKey(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				if i%256 == 0 {
					for int64(i)-slowest() > window {
						runtime.Gosched()
					}
				}
				if _, err := s.Create(bctx, objs[i]); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
		})
	}
}
