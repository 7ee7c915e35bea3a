package weakmemo

import (
	"runtime"
	"sync"
	"weak"
)

// Memo holds the results of one function by the pointer they were made
// from. The zero Memo is empty and ready; a Memo must not be copied after
// first use.
//
// Example: two Registries of one process register package builtin's
// Deployment, whose *schema.Schema is the same pointer in both; the first
// registration compiles the field manager's parts (Get calls build), the
// second finds them (Get returns the first result). A CRD's schema,
// dropped when the CRD is updated, takes its entry with it when
// collected.
type Memo[K, V any] struct {
	m sync.Map // weak.Pointer[K] → V
}

// Get returns the result for k: the one memoized while k lives, or
// build(k), memoized when it succeeds. Two callers racing on a new k may
// both call build; both get the result stored first. A nil k is not
// memoized.
func (c *Memo[K, V]) Get(k *K, build func(*K) (V, error)) (V, error) {
	if k == nil {
		return build(k)
	}
	w := weak.Make(k)
	if v, ok := c.m.Load(w); ok {
		return v.(V), nil
	}
	v, err := build(k)
	if err != nil {
		return v, err
	}
	if old, loaded := c.m.LoadOrStore(w, v); loaded {
		return old.(V), nil
	}
	runtime.AddCleanup(k, func(w weak.Pointer[K]) { c.m.Delete(w) }, w)
	return v, nil
}

// Len is the number of results held (for tests).
func (c *Memo[K, V]) Len() int {
	n := 0
	c.m.Range(func(any, any) bool { n++; return true })
	return n
}
