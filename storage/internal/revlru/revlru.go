package revlru

import "sync"

// Cache holds at most Max values by revision. The zero value holds none
// until Max is set; it is safe for concurrent use.
type Cache[T any] struct {
	Max  int
	mu   sync.Mutex
	list []entry[T] // least recently used first
}

type entry[T any] struct {
	rev uint64
	v   T
}

// Get returns the value at rev, if held and rev is not older than oldest
// (values older than oldest are dropped first: their history is gone).
func (c *Cache[T]) Get(rev, oldest uint64) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(oldest)
	for i, e := range c.list {
		if e.rev == rev {
			copy(c.list[i:], c.list[i+1:])
			c.list[len(c.list)-1] = e
			return e.v, true
		}
	}
	var zero T
	return zero, false
}

// Put holds v at rev and returns it, or the value already held at rev.
func (c *Cache[T]) Put(rev uint64, v T) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.list {
		if e.rev == rev {
			return e.v
		}
	}
	if c.Max <= 0 {
		return v
	}
	if len(c.list) >= c.Max {
		copy(c.list, c.list[1:])
		c.list = c.list[:len(c.list)-1]
	}
	c.list = append(c.list, entry[T]{rev, v})
	return v
}

// Expire drops the values older than oldest.
func (c *Cache[T]) Expire(oldest uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(oldest)
}

// Reset drops every value (a new history starts).
func (c *Cache[T]) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.list)
	c.list = c.list[:0]
}

func (c *Cache[T]) expire(oldest uint64) {
	kept := c.list[:0]
	for _, e := range c.list {
		if e.rev >= oldest {
			kept = append(kept, e)
		}
	}
	clear(c.list[len(kept):])
	c.list = kept
}
