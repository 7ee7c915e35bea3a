package cache_test

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/cache"
	"github.com/kapi-dev/kapi/storage/memory"
)

// A watch cache in front of a store: writes go to the store, reads and
// watches are served from memory with the store's guarantees.
func Example() {
	ctx := context.Background()
	backend := memory.New(memory.Options{})
	defer backend.Close()
	c, err := cache.New(backend, cache.Options{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	a, _ := c.Create(ctx, storage.Object{Key: "/widgets/default/a", Value: []byte(`{"v":1}`)})
	c.GuaranteedUpdate(ctx, a.Key, storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
		cur.Value = []byte(`{"v":2}`)
		return cur, nil
	})

	// A consistent read: served once the cache has the backend's revision.
	now, _ := c.Get(ctx, a.Key, storage.GetOptions{})
	// An Exact read at an older revision, from the cache's history.
	old, _ := c.Get(ctx, a.Key, storage.GetOptions{Match: rv.Exact, Revision: a.Revision})
	fmt.Println("now", string(now.Value), "at", now.Revision, "; at", a.Revision, "it was", string(old.Value))

	// A watch from a revision replays the history after it, then streams.
	w, _ := c.Watch(ctx, "/widgets/", storage.WatchOptions{Recursive: true, Revision: a.Revision})
	defer w.Stop()
	ev := <-w.ResultChan()
	fmt.Println(ev.Type, ev.Object.(storage.Object).Key, "at", ev.Revision)

	// Older than the cache's history: 410, as from the store itself.
	c.Compact(ctx, now.Revision)
	_, err = c.Watch(ctx, "/widgets/", storage.WatchOptions{Recursive: true, Revision: a.Revision})
	fmt.Println(err)
	// Output:
	// now {"v":2} at 3 ; at 2 it was {"v":1}
	// MODIFIED /widgets/default/a at 3
	// storage: resource version expired: /widgets/: too old resource version: 2 (3)
}

// Paginated lists from the cache: with the backend's token keys, a page
// names the revision it was read at and every continuation is served
// from the cache's snapshot of that revision, whatever is written in
// between; the backend accepts the same tokens.
func Example_pages() {
	ctx := context.Background()
	tokens := rv.NewTokens() // the backend's keys, shared with the cache
	backend := memory.New(memory.Options{Tokens: tokens})
	defer backend.Close()
	c, err := cache.New(backend, cache.Options{Tokens: tokens, ReadYourWrites: true})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for _, name := range []string{"a", "b", "c"} {
		c.Create(ctx, storage.Object{Key: "/widgets/default/" + name, Value: []byte(`{}`)})
	}

	first, _ := c.List(ctx, "/widgets/", storage.ListOptions{Limit: 2})
	c.Delete(ctx, "/widgets/default/c", storage.DeleteOptions{}) // after the first page
	rest, _ := c.List(ctx, "/widgets/", storage.ListOptions{Limit: 2, Continue: first.Continue})
	fromBackend, _ := backend.List(ctx, "/widgets/", storage.ListOptions{Limit: 2, Continue: first.Continue})
	fmt.Println(len(first.Items), "items at", first.Revision, "; remaining", *first.Remaining)
	fmt.Println(rest.Items[0].Key, "at", rest.Revision, "; the backend:", fromBackend.Items[0].Key, "at", fromBackend.Revision)
	// Output:
	// 2 items at 4 ; remaining 1
	// /widgets/default/c at 4 ; the backend: /widgets/default/c at 4
}
