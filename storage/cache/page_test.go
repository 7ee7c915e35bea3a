package cache_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/cache"
	"github.com/kapi-dev/kapi/storage/memory"
)

// fillKeys creates /g/r/ns/o00../g/r/ns/o<n-1> = "v", labelled
// app=web when i%3 == 1, app=db otherwise.
func fillKeys(t *testing.T, s storage.Interface, n int) {
	t.Helper()
	for i := range n {
		o := obj(fmt.Sprintf("/g/r/ns/o%02d", i), "v")
		o.Labels = map[string]string{"app": "db"}
		if i%3 == 1 {
			o.Labels["app"] = "web"
		}
		if _, err := s.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// shown is what a test compares of listed items: key=value@revision.
func shown(items []storage.Object) []string {
	out := make([]string, len(items))
	for i, o := range items {
		out[i] = fmt.Sprintf("%s=%s@%d", o.Key, o.Value, o.Revision)
	}
	return out
}

// walk lists prefix page by page from opts and returns every item and
// each page's result; between runs after every page but the last.
func walk(t *testing.T, s storage.Interface, prefix string, opts storage.ListOptions, between func(page int)) (items []string, res []storage.ListResult) {
	t.Helper()
	for page := 0; ; page++ {
		r, err := s.List(t.Context(), prefix, opts)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		items = append(items, shown(r.Items)...)
		res = append(res, r)
		if r.Continue == "" {
			return items, res
		}
		if page > 100 {
			t.Fatal("more than 100 pages")
		}
		if between != nil {
			between(page)
		}
		opts.Continue = r.Continue
	}
}

// TestPagesFromSnapshot: every page after the first is served by the
// cache at the first page's revision, whatever is written between
// pages, and equals the backend's list at that revision.
func TestPagesFromSnapshot(t *testing.T) {
	tests := []struct {
		name    string
		opts    cache.Options
		between func(t *testing.T, f fixture, page int)
	}{
		{"no writes", cache.Options{}, nil},
		{"updates ahead of the cursor", cache.Options{}, func(t *testing.T, f fixture, page int) {
			mustSet(t, f.c, fmt.Sprintf("/g/r/ns/o%02d", 19-page), "changed")
		}},
		{"deletes and creates ahead of the cursor", cache.Options{}, func(t *testing.T, f fixture, page int) {
			if _, err := f.c.Delete(t.Context(), fmt.Sprintf("/g/r/ns/o%02d", 19-page), storage.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, f.c, fmt.Sprintf("/g/r/ns/o%02d.new", 10+page), "new")
		}},
		{"snapshot evicted by other lists, rebuilt from history", cache.Options{Snapshots: 1}, func(t *testing.T, f fixture, page int) {
			mustSet(t, f.c, fmt.Sprintf("/g/r/ns/o%02d", 19-page), "changed")
			// a paged list at the new revision takes the only snapshot slot
			if _, err := f.c.List(t.Context(), "/g/r/", storage.ListOptions{Limit: 1}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.opts)
			fillKeys(t, f.c, 20)
			lists := f.b.lists.Load()
			var between func(int)
			if tt.between != nil {
				between = func(page int) { tt.between(t, f, page) }
			}
			got, res := walk(t, f.c, "/g/r/", storage.ListOptions{Limit: 3, Match: rv.MostRecent}, between)
			if n := f.b.lists.Load() - lists; n != 0 {
				t.Fatalf("%d lists reached the backend; want every page from the cache", n)
			}
			at := res[0].Revision
			want, err := f.m.List(t.Context(), "/g/r/", storage.ListOptions{Match: rv.Exact, Revision: at})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, shown(want.Items)) {
				t.Fatalf("pages = %q;\nwant the backend's list at %d: %q", got, at, shown(want.Items))
			}
			for i, r := range res {
				if r.Revision != at {
					t.Fatalf("page %d at %d; want %d", i, r.Revision, at)
				}
				if left := int64(20 - 3*(i+1)); r.Continue != "" && (r.Remaining == nil || *r.Remaining != left) {
					t.Fatalf("page %d: Remaining %v; want %d", i, r.Remaining, left)
				}
			}
			if tt.between != nil {
				if cur, _ := f.m.Revision(t.Context()); cur == at {
					t.Fatal("no writes between the pages")
				}
			}
		})
	}
}

// TestPagedWalkEqualsBackend: the cache's pages are the backend's, for
// every limit and predicate, item for item and, without a predicate,
// page for page with the same Remaining; and tokens are interchangeable
// both ways: the backend continues a walk the cache started, and the
// cache (from its snapshots) one the backend started.
func TestPagedWalkEqualsBackend(t *testing.T) {
	f := newFixture(t, cache.Options{})
	fillKeys(t, f.c, 20)
	mustCreate(t, f.c, "/g/r2/ns/x", "other resource")
	mustCreate(t, f.c, "/g/r/ns10/x", "other namespace")
	for _, prefix := range []string{"/g/r/ns/", "/g/r/", "/g/r/ns/o1"} {
		for _, label := range []string{"", "app=web"} {
			for _, limit := range []int64{1, 2, 7, 20, 30} {
				t.Run(fmt.Sprintf("%s|%s|%d", prefix, label, limit), func(t *testing.T) {
					var p storage.Predicate
					if label != "" {
						sel, err := storage.ParseLabelSelector(label)
						if err != nil {
							t.Fatal(err)
						}
						p.Label = sel
					}
					opts := storage.ListOptions{Limit: limit, Predicate: p}
					lists := f.b.lists.Load()
					got, gotPages := walk(t, f.c, prefix, opts, nil)
					if n := f.b.lists.Load() - lists; n != 0 {
						t.Fatalf("%d lists reached the backend; want the cache to serve", n)
					}
					want, wantPages := walk(t, f.m, prefix, opts, nil)
					if !slices.Equal(got, want) {
						t.Fatalf("cache pages = %q;\nbackend's = %q", got, want)
					}
					if label == "" {
						if len(gotPages) != len(wantPages) {
							t.Fatalf("%d pages; want the backend's %d", len(gotPages), len(wantPages))
						}
						for i := range gotPages {
							g, w := gotPages[i].Remaining, wantPages[i].Remaining
							if (g == nil) != (w == nil) || (g != nil && *g != *w) {
								t.Fatalf("page %d: Remaining %v; want the backend's %v", i, g, w)
							}
						}
					}
					if len(gotPages) < 2 {
						return
					}
					// The backend continues the cache's walk after its first page, and the cache the backend's.
					first := shown(gotPages[0].Items)
					opts.Continue = gotPages[0].Continue
					rest, _ := walk(t, f.m, prefix, opts, nil)
					if all := append(first, rest...); !slices.Equal(all, want) {
						t.Fatalf("the backend continuing the cache's token: %q; want %q", all, want)
					}
					opts.Continue = wantPages[0].Continue
					lists = f.b.lists.Load()
					rest, _ = walk(t, f.c, prefix, opts, nil)
					if all := append(shown(wantPages[0].Items), rest...); !slices.Equal(all, want) {
						t.Fatalf("the cache continuing the backend's token: %q; want %q", all, want)
					}
					if n := f.b.lists.Load() - lists; n != 0 {
						t.Fatalf("%d lists reached the backend; want the cache to serve the backend's token", n)
					}
				})
			}
		}
	}
}

// TestPagesFallBack: a token the cache cannot serve goes to the backend,
// which serves it or answers ErrExpired exactly as for its own tokens.
func TestPagesFallBack(t *testing.T) {
	tests := []struct {
		name string
		opts cache.Options
		// after runs once the first page is out, with its revision.
		after   func(t *testing.T, f fixture, at uint64)
		wantErr error // from the continuation
		backend bool  // the continuation reaches the backend
	}{
		{"within the history", cache.Options{MaxEvents: 50}, func(t *testing.T, f fixture, at uint64) {
			for i := range 10 {
				mustSet(t, f.c, "/g/r/ns/o09", fmt.Sprint("v", i))
			}
		}, nil, false},
		{"older than the cache's history", cache.Options{MaxEvents: 50}, func(t *testing.T, f fixture, at uint64) {
			for i := range 1000 { // the log drops whole segments
				mustSet(t, f.c, "/g/r/ns/o09", fmt.Sprint("v", i))
			}
			if _, err := f.c.Get(t.Context(), "/g/r/ns/o00", storage.GetOptions{Match: rv.Exact, Revision: at}); err != nil || f.b.gets.Load() != 1 {
				t.Fatalf("Get Exact at %d: %v, %d backend gets; want the backend to serve it (older than the history)", at, err, f.b.gets.Load())
			}
		}, nil, true},
		{"compacted through the cache", cache.Options{}, func(t *testing.T, f fixture, at uint64) {
			mustSet(t, f.c, "/g/r/ns/o09", "changed")
			cur, _ := f.m.Revision(t.Context())
			if err := f.c.Compact(t.Context(), cur); err != nil {
				t.Fatal(err)
			}
		}, storage.ErrExpired, true},
		{"the cache re-listed after a compaction", cache.Options{Wait: time.Minute}, func(t *testing.T, f fixture, at uint64) {
			f.b.setRefuse(errors.New("test: unavailable"))
			f.b.breakWatches(errConnection)
			mustSet(t, f.m, "/g/r/ns/o09", "changed")
			cur, _ := f.m.Revision(t.Context())
			if err := f.m.Compact(t.Context(), cur); err != nil {
				t.Fatal(err)
			}
			f.b.setRefuse(nil)
			if _, err := f.c.List(t.Context(), "/g/r/", storage.ListOptions{}); err != nil { // waits for the new list
				t.Fatal(err)
			}
		}, storage.ErrExpired, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.opts)
			fillKeys(t, f.c, 10)
			first, err := f.c.List(t.Context(), "/g/r/", storage.ListOptions{Limit: 4})
			if err != nil || first.Continue == "" {
				t.Fatalf("first page: continue %q, %v; want a token", first.Continue, err)
			}
			tt.after(t, f, first.Revision)
			opts := storage.ListOptions{Limit: 4, Continue: first.Continue}
			lists := f.b.lists.Load()
			got, err := f.c.List(t.Context(), "/g/r/", opts)
			if n := f.b.lists.Load() - lists; (n > 0) != tt.backend {
				t.Fatalf("%d lists reached the backend; want the backend to serve: %v", n, tt.backend)
			}
			want, wantErr := f.m.List(t.Context(), "/g/r/", opts)
			if !errors.Is(err, tt.wantErr) || !errors.Is(wantErr, tt.wantErr) {
				t.Fatalf("continuation: %v (backend: %v); want %v", err, wantErr, tt.wantErr)
			}
			if err != nil {
				var se *storage.Error
				if !errors.As(err, &se) || se.Continue == "" {
					t.Fatalf("ErrExpired without a token to go on: %v", err)
				}
				return
			}
			if !slices.Equal(shown(got.Items), shown(want.Items)) || got.Revision != first.Revision || got.Continue == "" {
				t.Fatalf("continuation: %q at %d; want the backend's %q at %d, with a token", shown(got.Items), got.Revision, shown(want.Items), first.Revision)
			}
		})
	}
}

// TestPagesWithoutTokens: without the backend's token keys the cache
// serves whole lists only; pages are the backend's.
func TestPagesWithoutTokens(t *testing.T) {
	m := memory.New(memory.Options{})
	t.Cleanup(m.Close)
	b := &backend{Interface: m}
	c, err := cache.New(b, cache.Options{ReadYourWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	fillKeys(t, c, 10)
	lists := b.lists.Load()
	got, _ := walk(t, c, "/g/r/", storage.ListOptions{Limit: 4}, nil)
	want, _ := walk(t, m, "/g/r/", storage.ListOptions{Limit: 4}, nil)
	if n := b.lists.Load() - lists; !slices.Equal(got, want) || n != 3 {
		t.Fatalf("pages %q, %d from the backend; want the backend's %q, 3 lists", got, n, want)
	}
	if _, err := c.List(t.Context(), "/g/r/", storage.ListOptions{Limit: 10}); err != nil || b.lists.Load()-lists != 3 {
		t.Fatalf("a list that fits in one page: %v, %d backend lists; want the cache to serve it", err, b.lists.Load()-lists)
	}
}

// tellingBackend is a backend that tells its token keys, as memory's
// and etcd3's stores do.
type tellingBackend struct {
	*backend
	m *memory.Store
}

func (b tellingBackend) Tokens() rv.Tokens { return b.m.Tokens() }

// TestPagesBackendTokens: with Options.Tokens unset, a backend that tells
// its token keys gives them to the cache, which then serves pages itself,
// in tokens the backend accepts, and accepts the backend's.
func TestPagesBackendTokens(t *testing.T) {
	m := memory.New(memory.Options{})
	t.Cleanup(m.Close)
	b := &backend{Interface: m}
	c, err := cache.New(tellingBackend{b, m}, cache.Options{ReadYourWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	fillKeys(t, c, 10)
	lists := b.lists.Load()
	got, _ := walk(t, c, "/g/r/", storage.ListOptions{Limit: 4}, nil)
	want, _ := walk(t, m, "/g/r/", storage.ListOptions{Limit: 4}, nil)
	if n := b.lists.Load() - lists; !slices.Equal(got, want) || n != 0 {
		t.Fatalf("pages %q, %d from the backend; want the backend's %q, served by the cache", got, n, want)
	}
	for _, tt := range []struct {
		name        string
		first, rest storage.Interface
	}{{"cache then backend", c, m}, {"backend then cache", m, c}} {
		t.Run(tt.name, func(t *testing.T) {
			p1, err := tt.first.List(t.Context(), "/g/r/", storage.ListOptions{Limit: 4})
			if err != nil || p1.Continue == "" {
				t.Fatalf("first page: %v, continue %q; want a token", err, p1.Continue)
			}
			p2, err := tt.rest.List(t.Context(), "/g/r/", storage.ListOptions{Limit: 4, Continue: p1.Continue})
			if err != nil || len(p2.Items) != 4 || p2.Items[0].Key != "/g/r/ns/o04" || p2.Revision != p1.Revision {
				t.Fatalf("continuation: %q at %d, %v; want o04..o07 at %d", shown(p2.Items), p2.Revision, err, p1.Revision)
			}
		})
	}
}
