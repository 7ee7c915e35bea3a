package keytree_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
)

// treeOf returns a tree holding keys, each state at revision i+1.
func treeOf(keys ...string) *keytree.Tree {
	t := keytree.New()
	for i, k := range keys {
		t.ReplaceOrInsert(&keytree.Item{Key: k, Obj: storage.Object{Key: k, Revision: uint64(i + 1)}})
	}
	return t
}

func keysOf(t *keytree.Tree) []string {
	var keys []string
	t.Ascend(func(it *keytree.Item) bool {
		keys = append(keys, it.Key)
		return true
	})
	return keys
}

func TestTreeOrdersByKey(t *testing.T) {
	tr := treeOf("/b/1", "/a/2", "/a/1", "/a/1") // the second /a/1 replaces the first
	if got, want := keysOf(tr), []string{"/a/1", "/a/2", "/b/1"}; !slices.Equal(got, want) {
		t.Fatalf("got keys %q; want %q", got, want)
	}
	it, ok := tr.Get(&keytree.Item{Key: "/a/1"})
	if !ok {
		t.Fatal("Get(/a/1): not found")
	}
	if got, want := it.Object(), (storage.Object{Key: "/a/1", Revision: 4}); got.Key != want.Key || got.Revision != want.Revision {
		t.Fatalf("got %s@%d; want %s@%d", got.Key, got.Revision, want.Key, want.Revision)
	}
}

func TestCountFrom(t *testing.T) {
	tr := treeOf("/a/1", "/a/2", "/a/3", "/a0", "/b/1")
	tests := []struct {
		prefix, start string
		want          int64
	}{
		{"/a/", "/a/", 3}, {"/a/", "/a/2", 2}, {"/a/", "/a/9", 0},
		{"/a", "/a", 4}, // not a directory: /a0 too
		{"/b/", "/b/", 1}, {"/c/", "/c/", 0}, {"", "", 5},
	}
	for _, tt := range tests {
		if got := keytree.CountFrom(tr, tt.prefix, tt.start); got != tt.want {
			t.Errorf("CountFrom(%q, %q): got %d; want %d", tt.prefix, tt.start, got, tt.want)
		}
	}
}

// TestDirs walks the example of Dirs' doc, and Count of prefixes that
// are not directories.
func TestDirs(t *testing.T) {
	type add struct {
		key string
		d   int64
	}
	tests := []struct {
		name string
		adds []add
		want map[string]int64
	}{
		{"empty", nil, map[string]int64{}},
		{"three keys", []add{{"/a/x/1", 1}, {"/a/x/2", 1}, {"/a/y/1", 1}},
			map[string]int64{"": 3, "/": 3, "/a/": 3, "/a/x/": 2, "/a/y/": 1}},
		{"a delete empties /a/y/", []add{{"/a/x/1", 1}, {"/a/x/2", 1}, {"/a/y/1", 1}, {"/a/y/1", -1}},
			map[string]int64{"": 2, "/": 2, "/a/": 2, "/a/x/": 2}},
		{"a key without slashes", []add{{"k", 1}}, map[string]int64{"": 1}},
		{"a key ending in a slash", []add{{"/d/", 1}}, map[string]int64{"": 1, "/": 1, "/d/": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := keytree.Dirs{}
			for _, a := range tt.adds {
				m.Add(a.key, a.d)
			}
			if !maps.Equal(m, tt.want) {
				t.Fatalf("got %v; want %v", m, tt.want)
			}
		})
	}

	m := keytree.Dirs{}
	for _, k := range []string{"/a/x/1", "/a/x/2", "/a/y/1"} {
		m.Add(k, 1)
	}
	counts := []struct {
		prefix string
		n      int64
		ok     bool
	}{
		{"", 3, true}, {"/a/", 3, true}, {"/a/x/", 2, true}, {"/z/", 0, true},
		{"/a", 0, false}, {"/a/x/1", 0, false},
	}
	for _, c := range counts {
		n, ok := m.Count(c.prefix)
		if n != c.n || ok != c.ok {
			t.Errorf("Count(%q): got %d, %v; want %d, %v", c.prefix, n, ok, c.n, c.ok)
		}
	}
}
