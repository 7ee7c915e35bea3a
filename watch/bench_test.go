package watch

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// BenchmarkFanOut publishes b.N changes to W watchers, each read by its
// own consumer goroutine, and waits until every watcher has delivered
// every change. ns/op is per published change (W deliveries); the custom
// metrics are per delivered event.
func BenchmarkFanOut(b *testing.B) {
	for _, watchers := range []int{1, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			br := NewBroadcaster(Options{MaxEvents: b.N + segSize})
			defer br.Close()
			var wg sync.WaitGroup
			for range watchers {
				w, err := br.Watch(context.Background(), 0, WatcherOptions{Match: func(any) bool { return true }})
				if err != nil {
					b.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; n < b.N; n++ {
						if _, ok := <-w.ResultChan(); !ok {
							b.Errorf("watch ended early: %v", w.Err())
							return
						}
					}
					w.Stop()
				}()
			}
			obj := any("object")
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := br.Publish(Change{Type: Added, Revision: uint64(i + 1), Object: obj}); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			runtime.ReadMemStats(&after)
			deliveries := float64(b.N) * float64(watchers)
			b.ReportMetric(float64(elapsed.Nanoseconds())/deliveries, "ns/delivery")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/deliveries, "allocs/delivery")
		})
	}
}

// BenchmarkPublish measures the writer's cost with no watcher.
func BenchmarkPublish(b *testing.B) {
	br := NewBroadcaster(Options{})
	defer br.Close()
	obj := any("object")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := br.Publish(Change{Type: Added, Revision: uint64(i + 1), Object: obj}); err != nil {
			b.Fatal(err)
		}
	}
}
