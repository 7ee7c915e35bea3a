package cache_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/cache"
)

// TestConflictCatchesUp: a write that conflicts because the caller's copy
// came from a cache lagging behind its backend returns only once the
// cache has caught up, so the caller's next read at rv.Any shows the
// state that won. Without it a get-modify-update retry loop on a cache
// spins on the same stale copy for as long as the cache lags.
func TestConflictCatchesUp(t *testing.T) {
	const key = "/g/r/ns/a"
	tests := []struct {
		name  string
		write func(ctx context.Context, c *cache.Cache, stale uint64) error
	}{
		{"GuaranteedUpdate", func(ctx context.Context, c *cache.Cache, stale uint64) error {
			_, err := c.GuaranteedUpdate(ctx, key, storage.UpdateOptions{Preconditions: storage.Preconditions{Revision: stale}}, set("mine"))
			return err
		}},
		{"Delete", func(ctx context.Context, c *cache.Cache, stale uint64) error {
			_, err := c.Delete(ctx, key, storage.DeleteOptions{Preconditions: storage.Preconditions{Revision: stale}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, cache.Options{Wait: time.Minute})
			mustCreate(t, f.c, key, "v1")
			f.b.hold()
			v2 := mustSet(t, f.m, key, "v2") // straight to the backend; the cache lags
			stale, err := f.c.Get(t.Context(), key, storage.GetOptions{Match: rv.Any})
			if err != nil || string(stale.Value) != "v1" {
				t.Fatalf("Get Any before: got %q, %v; want the cache's stale v1", stale.Value, err)
			}
			go func() {
				time.Sleep(50 * time.Millisecond) // while the write's conflict is being answered
				f.b.release()
			}()
			if err := tt.write(t.Context(), f.c, stale.Revision); !errors.Is(err, storage.ErrConflict) {
				t.Fatalf("write from the stale copy: got %v; want ErrConflict", err)
			}
			got, err := f.c.Get(t.Context(), key, storage.GetOptions{Match: rv.Any})
			if err != nil || got.Revision != v2.Revision || string(got.Value) != "v2" {
				t.Fatalf("Get Any after the conflict: got %q@%d, %v; want v2@%d", got.Value, got.Revision, err, v2.Revision)
			}
		})
	}
}
