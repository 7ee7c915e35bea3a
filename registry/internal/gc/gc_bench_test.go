package gc

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// The cost of one collection as the store grows: n objects owned by a
// live owner stand by; each op creates a dependent whose owner is gone
// and waits for the collector to delete it. A collector that scans the
// store costs O(n) per op; one that keeps an owner index, O(1).
func BenchmarkCollectOne(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("bystanders=%d", n), func(b *testing.B) {
			ctx := context.Background()
			store := memory.New(memory.Options{})
			defer store.Close()
			t := &testing.T{}
			put(t, store, "owner", "u-owner", map[string]any{})
			for i := range n {
				put(t, store, fmt.Sprintf("kept-%d", i), fmt.Sprintf("u-kept-%d", i), map[string]any{"ownerReferences": []any{ref("owner", "u-owner")}})
			}
			c := Start(fakeRegistry{store}, store, slog.New(slog.DiscardHandler))
			defer c.Close()
			collect := func(name string) {
				w, err := store.Watch(ctx, "/things/"+name, storage.WatchOptions{})
				if err != nil {
					b.Fatal(err)
				}
				put(t, store, name, "u-"+name, map[string]any{"ownerReferences": []any{ref("gone", "u-gone")}})
				for ev := range w.ResultChan() {
					if ev.Type == watch.Deleted {
						break
					}
				}
				w.Stop()
			}
			// The collector's first look at the n bystanders is done
			// once a collection that follows it is.
			for i := range 3 {
				collect(fmt.Sprintf("warm-%d", i))
			}
			for i := 0; b.Loop(); i++ {
				collect(fmt.Sprintf("dangling-%d", i))
			}
			if t.Failed() {
				b.Fatal("a put failed")
			}
		})
	}
}
