package cache

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
)

// TestScanKnown: a scan told how many keys follow gives the same page
// as one that looks at every key, and falls back to looking when the
// count it was told is wrong.
func TestScanKnown(t *testing.T) {
	tr := keytree.New()
	for _, k := range []string{"/a/x", "/b/0", "/b/1", "/b/2", "/b/3", "/b/4", "/b0", "/c/y"} {
		tr.ReplaceOrInsert(&keytree.Item{Key: k, Obj: storage.Object{Key: k}})
	}
	keys := func(items []storage.Object) []string {
		var out []string
		for _, o := range items {
			out = append(out, o.Key)
		}
		return out
	}
	tests := []struct {
		prefix, start string
		limit         int64
	}{
		{"/b/", "/b/", 0}, {"/b/", "/b/", 2}, {"/b/", "/b/", 5}, {"/b/", "/b/", 6},
		{"/b/", "/b/2", 0}, {"/b/", "/b/2", 2}, {"/b/", "/b/2", 3},
		{"/c/", "/c/", 1}, {"/d/", "/d/", 1}, {"", "", 3},
	}
	for _, tt := range tests {
		want, wantNext, wantMore := scan(tr, tt.prefix, tt.start, tt.limit, storage.Predicate{}, -1)
		exact := int64(0)
		tr.AscendGreaterOrEqual(&keytree.Item{Key: tt.start}, func(it *keytree.Item) bool {
			if len(it.Key) < len(tt.prefix) || it.Key[:len(tt.prefix)] != tt.prefix {
				return false
			}
			exact++
			return true
		})
		for _, known := range []int64{exact, exact - 1, exact + 1, 0, 100} {
			if known < 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s|%s|limit %d|known %d of %d", tt.prefix, tt.start, tt.limit, known, exact), func(t *testing.T) {
				got, next, more := scan(tr, tt.prefix, tt.start, tt.limit, storage.Predicate{}, known)
				if !slices.Equal(keys(got), keys(want)) || next != wantNext || more != wantMore {
					t.Fatalf("got %q, next %q, more %v; want %q, %q, %v", keys(got), next, more, keys(want), wantNext, wantMore)
				}
				if _, _, _, ok := scanKnown(tr, tt.prefix, tt.start, tt.limit, known); known == exact && !ok {
					t.Fatal("the exact count was refused")
				}
			})
		}
	}
}
