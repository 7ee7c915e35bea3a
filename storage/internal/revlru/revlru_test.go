package revlru_test

import (
	"testing"

	"github.com/kapi-dev/kapi/storage/internal/revlru"
)

// TestCache walks the package doc's example and its edges.
func TestCache(t *testing.T) {
	c := revlru.Cache[string]{Max: 2}
	get := func(rev, oldest uint64) string {
		v, ok := c.Get(rev, oldest)
		if !ok {
			return "-"
		}
		return v
	}
	c.Put(5, "a")
	c.Put(6, "b")
	if got := c.Put(6, "b2"); got != "b" {
		t.Errorf("Put(6) again: got %q; want the value held, b", got)
	}
	if got := get(5, 0); got != "a" {
		t.Errorf("Get(5): got %q; want a", got)
	}
	c.Put(7, "c") // evicts b, the least recently used
	if got := get(6, 0) + get(5, 0) + get(7, 0); got != "-ac" {
		t.Errorf("after Put(7): got %q; want -ac (6 evicted)", got)
	}
	c.Expire(6)
	if got := get(5, 0) + get(7, 0); got != "-c" {
		t.Errorf("after Expire(6): got %q; want -c", got)
	}
	if got := get(7, 8); got != "-" {
		t.Errorf("Get(7) with oldest 8: got %q; want - (expired)", got)
	}
	c.Put(9, "d")
	c.Reset()
	if got := get(9, 0); got != "-" {
		t.Errorf("after Reset: got %q; want -", got)
	}
	var zero revlru.Cache[string]
	if got := zero.Put(1, "x"); got != "x" {
		t.Errorf("zero Cache Put: got %q; want x", got)
	}
	if _, ok := zero.Get(1, 0); ok {
		t.Error("zero Cache holds a value; want none (Max 0)")
	}
}
