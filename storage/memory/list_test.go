package memory

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

func keys(items []storage.Object) []string {
	var k []string
	for _, o := range items {
		k = append(k, o.Key)
	}
	return k
}

func fill(t *testing.T, s *Store, prefix string, n int) []string {
	t.Helper()
	var k []string
	for i := range n {
		key := fmt.Sprintf("%s%03d", prefix, i)
		o := obj(key, "v")
		o.Labels = map[string]string{"even": fmt.Sprint(i%2 == 0)}
		if _, err := s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		k = append(k, key)
	}
	return k
}

// pages lists prefix page by page and returns every page.
func pages(t *testing.T, s *Store, prefix string, opts storage.ListOptions) []storage.ListResult {
	t.Helper()
	var all []storage.ListResult
	for {
		res, err := s.List(ctx, prefix, opts)
		if err != nil {
			t.Fatalf("List(%q, %+v): %v", prefix, opts, err)
		}
		all = append(all, res)
		if res.Continue == "" {
			return all
		}
		if len(all) > 1000 {
			t.Fatal("more than 1000 pages")
		}
		opts.Continue = res.Continue
	}
}

func TestPagination(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	ns1 := fill(t, s, "/p/ns1/", 25)
	fill(t, s, "/p/ns10/", 3) // shares the string prefix "/p/ns1" but not the directory
	even := storage.Predicate{Label: storage.Selector{{Key: "even", Op: storage.Equals, Values: []string{"true"}}}}
	tests := []struct {
		name      string
		prefix    string
		opts      storage.ListOptions
		wantKeys  []string
		wantPages int
	}{
		{"whole", "/p/ns1/", storage.ListOptions{}, ns1, 1},
		{"pages of 10", "/p/ns1/", storage.ListOptions{Limit: 10}, ns1, 3},
		{"exact pages", "/p/ns1/", storage.ListOptions{Limit: 5}, ns1, 5},
		{"one page that fits", "/p/ns1/", storage.ListOptions{Limit: 25}, ns1, 1},
		{"string prefix", "/p/ns1", storage.ListOptions{Limit: 7}, append(slices.Clone(ns1), "/p/ns10/000", "/p/ns10/001", "/p/ns10/002"), 4},
		{"predicate", "/p/ns1/", storage.ListOptions{Limit: 4, Predicate: even}, evens(ns1), 4},
		{"empty", "/none/", storage.ListOptions{Limit: 4}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := pages(t, s, tt.prefix, tt.opts)
			var got []string
			returned := int64(0)
			for i, p := range ps {
				got = append(got, keys(p.Items)...)
				returned += int64(len(p.Items))
				if p.Revision != ps[0].Revision {
					t.Fatalf("page %d at revision %d; want %d", i, p.Revision, ps[0].Revision)
				}
				last := p.Continue == ""
				switch {
				case last && p.Remaining != nil:
					t.Fatalf("last page: got remaining %d; want none", *p.Remaining)
				case !last && tt.opts.Predicate.Empty() && (p.Remaining == nil || *p.Remaining != int64(len(tt.wantKeys))-returned):
					t.Fatalf("page %d: got remaining %v; want %d", i, p.Remaining, int64(len(tt.wantKeys))-returned)
				case !tt.opts.Predicate.Empty() && p.Remaining != nil:
					t.Fatalf("page %d with a predicate: got remaining %d; want none", i, *p.Remaining)
				}
			}
			if !slices.Equal(got, tt.wantKeys) {
				t.Fatalf("got keys %v; want %v", got, tt.wantKeys)
			}
			if len(ps) != tt.wantPages {
				t.Fatalf("got %d pages; want %d", len(ps), tt.wantPages)
			}
		})
	}
}

func evens(k []string) []string {
	var out []string
	for i, x := range k {
		if i%2 == 0 {
			out = append(out, x)
		}
	}
	return out
}

// TestPaginationSnapshot writes between pages: every page must show the
// collection as of the first one, also after its snapshot is evicted.
func TestPaginationSnapshot(t *testing.T) {
	for _, evict := range []bool{false, true} {
		t.Run(fmt.Sprintf("evicted=%v", evict), func(t *testing.T) {
			s := New(Options{Snapshots: 1})
			defer s.Close()
			want := fill(t, s, "/s/", 30)
			first, err := s.List(ctx, "/s/", storage.ListOptions{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			// Writes after the first page: none may show.
			if _, err := s.Delete(ctx, want[15], storage.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, s, "/s/0125", "new")
			if _, err := s.GuaranteedUpdate(ctx, want[20], storage.UpdateOptions{}, set("changed")); err != nil {
				t.Fatal(err)
			}
			if evict { // another list's snapshot pushes ours out
				if _, err := s.List(ctx, "/s/", storage.ListOptions{Limit: 1}); err != nil {
					t.Fatal(err)
				}
			}
			rest := pages(t, s, "/s/", storage.ListOptions{Limit: 10, Continue: first.Continue})
			got := keys(first.Items)
			for _, p := range rest {
				if p.Revision != first.Revision {
					t.Fatalf("got page at %d; want %d", p.Revision, first.Revision)
				}
				for _, o := range p.Items {
					if string(o.Value) != "v" {
						t.Fatalf("got %s = %q; want the first page's state %q", o.Key, o.Value, "v")
					}
				}
				got = append(got, keys(p.Items)...)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got keys %v; want %v", got, want)
			}
		})
	}
}

func TestContinueErrors(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	all := fill(t, s, "/e/", 10)
	first, err := s.List(ctx, "/e/", storage.ListOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("garbage", func(t *testing.T) {
		_, err := s.List(ctx, "/e/", storage.ListOptions{Continue: "garbage"})
		wantErr(t, err, storage.ErrInvalid)
	})
	t.Run("other collection", func(t *testing.T) {
		_, err := s.List(ctx, "/f/", storage.ListOptions{Continue: first.Continue})
		wantErr(t, err, storage.ErrInvalid)
	})
	t.Run("other store's secret", func(t *testing.T) {
		other := New(Options{})
		defer other.Close()
		_, err := other.List(ctx, "/e/", storage.ListOptions{Continue: first.Continue})
		wantErr(t, err, storage.ErrInvalid)
	})
	t.Run("compacted", func(t *testing.T) {
		mustCreate(t, s, "/e/999", "late")
		cur, _ := s.Revision(ctx)
		if err := s.Compact(ctx, cur); err != nil {
			t.Fatal(err)
		}
		_, err := s.List(ctx, "/e/", storage.ListOptions{Limit: 3, Continue: first.Continue})
		wantErr(t, err, storage.ErrExpired)
		var se *storage.Error
		if !strings.Contains(err.Error(), "continue") || !errors.As(err, &se) || se.Continue == "" {
			t.Fatalf("got %v; want an expired-continue error with a fresh token", err)
		}
		// The inconsistent continuation goes on at the latest revision.
		rest := pages(t, s, "/e/", storage.ListOptions{Limit: 3, Continue: se.Continue})
		var got []string
		for _, p := range rest {
			if p.Revision != cur {
				t.Fatalf("got page at %d; want the latest revision %d", p.Revision, cur)
			}
			if p.Continue != "" && (p.Remaining == nil || *p.Remaining != int64(11-3-len(got)-len(p.Items))) {
				t.Fatalf("got remaining %v after %d more; want %d", p.Remaining, len(got)+len(p.Items), 11-3-len(got)-len(p.Items))
			}
			got = append(got, keys(p.Items)...)
		}
		if want := append(slices.Clone(all[3:]), "/e/999"); !slices.Equal(got, want) {
			t.Fatalf("got keys %v; want %v", got, want)
		}
	})
}

func TestListMatch(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	a := mustCreate(t, s, "/l/a", "1")
	mustCreate(t, s, "/l/b", "1")
	tests := []struct {
		name string
		opts storage.ListOptions
		want map[string]string
		rev  uint64
	}{
		{"most recent", storage.ListOptions{}, map[string]string{"/l/a": "1", "/l/b": "1"}, a.Revision + 1},
		{"any", storage.ListOptions{Match: rv.Any}, map[string]string{"/l/a": "1", "/l/b": "1"}, a.Revision + 1},
		{"not older than", storage.ListOptions{Match: rv.NotOlderThan, Revision: a.Revision}, map[string]string{"/l/a": "1", "/l/b": "1"}, a.Revision + 1},
		{"exact old", storage.ListOptions{Match: rv.Exact, Revision: a.Revision}, map[string]string{"/l/a": "1"}, a.Revision},
		{"exact old paged", storage.ListOptions{Match: rv.Exact, Revision: a.Revision, Limit: 1}, map[string]string{"/l/a": "1"}, a.Revision},
		{"exact before any", storage.ListOptions{Match: rv.Exact, Revision: initialRevision}, map[string]string{}, initialRevision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.List(ctx, "/l/", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := asMap(res.Items); !maps.Equal(got, tt.want) || res.Revision != tt.rev {
				t.Fatalf("got %v at %d; want %v at %d", got, res.Revision, tt.want, tt.rev)
			}
		})
	}
}

// TestConcurrentReads pages through the collection while writers change
// it: every paginated list must equal the Exact list at its revision,
// and every Get at that revision must agree with it.
func TestConcurrentReads(t *testing.T) {
	s := New(Options{Snapshots: 2})
	defer s.Close()
	keys := fill(t, s, "/c/", 60)
	stop := make(chan struct{})
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := keys[(i*7+w)%len(keys)]
				if _, err := s.GuaranteedUpdate(ctx, k, storage.UpdateOptions{}, set(fmt.Sprint(i))); err != nil {
					t.Errorf("update: %v", err)
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for range 20 {
				var got []storage.Object
				opts := storage.ListOptions{Limit: 7}
				var rev uint64
				for {
					res, err := s.List(ctx, "/c/", opts)
					if err != nil {
						t.Errorf("List: %v", err)
						return
					}
					if rev == 0 {
						rev = res.Revision
					}
					got = append(got, res.Items...)
					if res.Continue == "" {
						break
					}
					opts.Continue = res.Continue
				}
				exact, err := s.List(ctx, "/c/", storage.ListOptions{Match: rv.Exact, Revision: rev})
				if err != nil {
					t.Errorf("Exact list at %d: %v", rev, err)
					return
				}
				if !maps.Equal(asMap(got), asMap(exact.Items)) {
					t.Errorf("paginated list at %d differs from the Exact list", rev)
					return
				}
				o, err := s.Get(ctx, keys[5], storage.GetOptions{Match: rv.Exact, Revision: rev})
				if err != nil || string(o.Value) != asMap(got)[keys[5]] {
					t.Errorf("Get at %d: got %q, %v; want %q", rev, o.Value, err, asMap(got)[keys[5]])
					return
				}
			}
		}()
	}
	readers.Wait()
	close(stop)
	writers.Wait()
}
