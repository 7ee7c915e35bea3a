package etcd3_test

import (
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/cache"
	"github.com/kapi-dev/kapi/storage/etcd3"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

// TestCacheConformance runs the shared storage suite against a watch
// cache in front of etcd. The cache's prefix is "/": every key the
// suite uses, and exactly the Store's range in etcd (its prefix plus
// "/"). storage/cache's own tests run the suite with
// Options.ReadYourWrites too, over the memory store.
func TestCacheConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		s := newStore(t, etcd3.Options{})
		// The cache takes the Store's tokens (Store.Tokens) and serves pages.
		c, err := cache.New(s, cache.Options{Prefix: "/", Wait: 100 * time.Millisecond})
		if err != nil {
			t.Fatalf("cache.New: %v", err)
		}
		t.Cleanup(c.Close) // before the Store's
		return c
	})
}
