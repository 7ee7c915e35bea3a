package keytree

import (
	"strings"

	"github.com/google/btree"

	"github.com/kapi-dev/kapi/storage"
)

// Item is one key's state in the tree. Items are immutable: a write
// replaces the item, so a clone of the tree keeps the states it saw.
// Obj holds the storage.Object boxed once per write, so the same
// interface value goes into the tree, the history log and every
// watcher's events without further allocation.
type Item struct {
	Key string
	Obj any // storage.Object
}

// Object returns the item's state.
func (it *Item) Object() storage.Object { return it.Obj.(storage.Object) }

// Tree holds items by key.
type Tree = btree.BTreeG[*Item]

// degree is the B-tree's degree: nodes hold up to 2*degree-1 items.
const degree = 32

// New returns an empty Tree.
func New() *Tree { return btree.NewG(degree, less) }

func less(a, b *Item) bool { return a.Key < b.Key }

// CountFrom returns the number of keys under prefix in t from key start
// on.
func CountFrom(t *Tree, prefix, start string) int64 {
	var n int64
	t.AscendGreaterOrEqual(&Item{Key: start}, func(it *Item) bool {
		if !strings.HasPrefix(it.Key, prefix) {
			return false
		}
		n++
		return true
	})
	return n
}

// Dirs counts the keys of a live tree under each directory: every
// prefix of a key that ends in '/', and "" (every key). A directory
// that holds no key is not in the map.
//
//	keys /a/x/1 /a/x/2 /a/y/1:  "" 3, "/" 3, "/a/" 3, "/a/x/" 2, "/a/y/" 1
//	delete /a/y/1:              "" 2, "/" 2, "/a/" 2, "/a/x/" 2
type Dirs map[string]int64

// Add adds d to the count of every directory holding key: for "/a/b/c"
// those are "", "/", "/a/" and "/a/b/".
func (m Dirs) Add(key string, d int64) {
	m[""] += d
	for i := 0; i < len(key); i++ {
		if key[i] != '/' {
			continue
		}
		dir := key[:i+1]
		if n := m[dir] + d; n != 0 {
			m[dir] = n
		} else {
			delete(m, dir)
		}
	}
}

// Count returns the number of keys under prefix, if prefix is a
// directory (ends in '/', or is "").
func (m Dirs) Count(prefix string) (int64, bool) {
	if prefix == "" || strings.HasSuffix(prefix, "/") {
		return m[prefix], true
	}
	return 0, false
}
