package review

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Post POSTs body as JSON to url with c, bounded by timeout, and decodes
// a 200 or 201 answer into out; any other answer is an error quoting it.
func Post(ctx context.Context, c *http.Client, timeout time.Duration, url string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", url, resp.Status, bytes.TrimSpace(rb))
	}
	return json.Unmarshal(rb, out)
}

// MaxEntries bounds a Cache.
const MaxEntries = 4096

// Cache is a map whose entries expire after the TTL they were put with.
// The zero value is ready to use.
type Cache[V any] struct {
	mu sync.Mutex
	m  map[string]entry[V]
}

type entry[V any] struct {
	v       V
	expires time.Time
}

// Get returns k's value unless it is missing or expired.
func (c *Cache[V]) Get(k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || time.Now().After(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put keeps v under k for ttl; a ttl ≤ 0 keeps nothing.
func (c *Cache[V]) Put(k string, v V, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]entry[V]{}
	}
	if len(c.m) >= MaxEntries {
		now := time.Now()
		for k, e := range c.m {
			if now.After(e.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= MaxEntries {
			clear(c.m)
		}
	}
	c.m[k] = entry[V]{v: v, expires: time.Now().Add(ttl)}
}
