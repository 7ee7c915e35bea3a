package rbac

import "hash/maphash"

// cow is a copy-on-write map: a value is never modified once published,
// so any number of readers may use one while a writer makes the next.
// The entries are spread over shardCount shards by hash, and a write
// copies the shard array (shardCount pointers) and the one shard it
// changes, not the whole map: O(n/shardCount + shardCount) per write, for
// a map of n entries.
//
// Keys are hashed by the caller (hashString, hashPair), so that a hash
// used for several maps is computed once.
type cow[K comparable, V any] struct {
	shards *[shardCount]map[K]V // nil when empty
	n      int
}

const shardCount = 128

var seed = maphash.MakeSeed()

func hashString(s string) uint64 { return maphash.String(seed, s) }

// hashPair combines the hashes of a namespace and a name.
func hashPair(ns, name uint64) uint64 { return ns ^ (name * 0x9E3779B97F4A7C15) }

func (c cow[K, V]) len() int { return c.n }

func (c cow[K, V]) get(h uint64, k K) (V, bool) {
	if c.shards == nil {
		var zero V
		return zero, false
	}
	v, ok := c.shards[h%shardCount][k]
	return v, ok
}

// with returns c with k set to v.
func (c cow[K, V]) with(h uint64, k K, v V) cow[K, V] {
	var s [shardCount]map[K]V
	if c.shards != nil {
		s = *c.shards
	}
	i := h % shardCount
	m := make(map[K]V, len(s[i])+1)
	for kk, vv := range s[i] {
		m[kk] = vv
	}
	if _, ok := m[k]; !ok {
		c.n++
	}
	m[k] = v
	s[i] = m
	c.shards = &s
	return c
}

// without returns c without k.
func (c cow[K, V]) without(h uint64, k K) cow[K, V] {
	if _, ok := c.get(h, k); !ok {
		return c
	}
	s := *c.shards
	i := h % shardCount
	var m map[K]V
	if len(s[i]) > 1 {
		m = make(map[K]V, len(s[i])-1)
		for kk, vv := range s[i] {
			if kk != k {
				m[kk] = vv
			}
		}
	}
	s[i] = m
	c.n--
	if c.n == 0 {
		return cow[K, V]{}
	}
	c.shards = &s
	return c
}

// all calls fn with every entry, in no order.
func (c cow[K, V]) all(fn func(K, V)) {
	if c.shards == nil {
		return
	}
	for _, m := range c.shards {
		for k, v := range m {
			fn(k, v)
		}
	}
}
