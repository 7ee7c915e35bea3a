package storagetest

import (
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

// scoped is a layout where naive prefix matching goes wrong: ns1 is a
// prefix of ns10, r of r2.
var scoped = []string{"/g/r/ns1/b", "/g/r/ns10/e", "/g/r/ns1/a", "/g/r2/ns1/d", "/g/r/ns2/c", "/g/r/ns1/a.b", "/g/rr/x"}

func mustSelector(t *testing.T, label, field string) storage.Predicate {
	t.Helper()
	l, err := storage.ParseLabelSelector(label)
	if err != nil {
		t.Fatal(err)
	}
	f, err := storage.ParseFieldSelector(field)
	if err != nil {
		t.Fatal(err)
	}
	return storage.Predicate{Label: l, Field: f}
}

// fill creates n objects /g/r/ns/o00../g/r/ns/o<n-1> with value "v".
func fill(t *testing.T, s storage.Interface, n int, labels func(i int) []string) {
	t.Helper()
	for i := range n {
		var l []string
		if labels != nil {
			l = labels(i)
		}
		create(t, s, obj(fmt.Sprintf("/g/r/ns/o%02d", i), "v", l...))
	}
}

func names(n int, pick func(i int) bool) []string {
	var out []string
	for i := range n {
		if pick == nil || pick(i) {
			out = append(out, fmt.Sprintf("/g/r/ns/o%02d=v", i))
		}
	}
	return out
}

// pages lists prefix page by page and checks the page invariants: every
// page at the first page's revision, at most limit items, Continue empty
// only on the last page, Remaining as documented.
func pages(t *testing.T, s storage.Interface, prefix string, o storage.ListOptions, between func()) (all []string, rev uint64) {
	t.Helper()
	for page := 0; ; page++ {
		r := list(t, s, prefix, o)
		if page == 0 {
			rev = r.Revision
		} else if r.Revision != rev {
			t.Fatalf("page %d at revision %d; want the first page's %d", page, r.Revision, rev)
		}
		if int64(len(r.Items)) > o.Limit {
			t.Fatalf("page %d has %d items; want at most %d", page, len(r.Items), o.Limit)
		}
		all = append(all, keys(r.Items)...)
		if r.Remaining != nil && (r.Continue == "" || !o.Predicate.Empty()) {
			t.Fatalf("page %d: Remaining = %d with continue %q and predicate %v; want it only when more remain and there is no predicate", page, *r.Remaining, r.Continue, o.Predicate)
		}
		if r.Continue == "" {
			return all, rev
		}
		if page > 100 {
			t.Fatalf("more than 100 pages")
		}
		if between != nil {
			between()
		}
		o.Continue = r.Continue
	}
}

var listTests = []test{
	{"Prefix", func(t *testing.T, s storage.Interface) {
		for i, k := range scoped {
			create(t, s, obj(k, fmt.Sprint(i)))
		}
		cur := revision(t, s)
		tests := []struct {
			prefix string
			want   []string
		}{
			{"/g/r/ns1/", []string{"/g/r/ns1/a", "/g/r/ns1/a.b", "/g/r/ns1/b"}},
			{"/g/r/ns10/", []string{"/g/r/ns10/e"}},
			{"/g/r/", []string{"/g/r/ns1/a", "/g/r/ns1/a.b", "/g/r/ns1/b", "/g/r/ns10/e", "/g/r/ns2/c"}},
			{"/g/r2/", []string{"/g/r2/ns1/d"}},
			{"/g/", []string{"/g/r/ns1/a", "/g/r/ns1/a.b", "/g/r/ns1/b", "/g/r/ns10/e", "/g/r/ns2/c", "/g/r2/ns1/d", "/g/rr/x"}},
			{"/g/r/ns3/", nil},
			{"/x/", nil},
		}
		for _, tt := range tests {
			t.Run(tt.prefix, func(t *testing.T) {
				r := list(t, s, tt.prefix, storage.ListOptions{})
				var got []string
				for _, o := range r.Items {
					got = append(got, o.Key)
					sameObj(t, "listed item", o, get(t, s, o.Key, rv.MostRecent, 0))
				}
				if !eqStrings(got, tt.want) {
					t.Fatalf("List(%s) = %q; want %q", tt.prefix, got, tt.want)
				}
				if r.Revision != cur || r.Continue != "" || r.Remaining != nil {
					t.Fatalf("List(%s): revision %d, continue %q, remaining %v; want %d, none, nil", tt.prefix, r.Revision, r.Continue, r.Remaining, cur)
				}
			})
		}
	}},
	{"Predicate", func(t *testing.T, s storage.Interface) {
		create(t, s, obj("/g/r/ns1/a", "a", "app=web", "tier=front"))
		create(t, s, obj("/g/r/ns1/b", "b", "app=db"))
		create(t, s, obj("/g/r/ns2/a", "c", "app=web"))
		create(t, s, obj("/g/r/ns2/d", "d"))
		tests := []struct {
			label, field string
			want         []string
		}{
			{"", "", []string{"/g/r/ns1/a=a", "/g/r/ns1/b=b", "/g/r/ns2/a=c", "/g/r/ns2/d=d"}},
			{"app=web", "", []string{"/g/r/ns1/a=a", "/g/r/ns2/a=c"}},
			{"app!=web", "", []string{"/g/r/ns1/b=b", "/g/r/ns2/d=d"}},
			{"app in (db,web),!tier", "", []string{"/g/r/ns1/b=b", "/g/r/ns2/a=c"}},
			{"app", "", []string{"/g/r/ns1/a=a", "/g/r/ns1/b=b", "/g/r/ns2/a=c"}},
			{"", "metadata.name=a", []string{"/g/r/ns1/a=a", "/g/r/ns2/a=c"}},
			{"", "metadata.namespace!=ns1", []string{"/g/r/ns2/a=c", "/g/r/ns2/d=d"}},
			{"app=web", "metadata.namespace=ns2", []string{"/g/r/ns2/a=c"}},
			{"app=none", "", nil},
		}
		for _, tt := range tests {
			t.Run(tt.label+"|"+tt.field, func(t *testing.T) {
				r := list(t, s, "/g/r/", storage.ListOptions{Predicate: mustSelector(t, tt.label, tt.field)})
				if got := keys(r.Items); !eqStrings(got, tt.want) {
					t.Fatalf("got %q; want %q", got, tt.want)
				}
			})
		}
	}},
	{"Pages", func(t *testing.T, s storage.Interface) {
		fill(t, s, 10, nil)
		for _, limit := range []int64{1, 3, 9, 10, 11} {
			t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
				first := list(t, s, "/g/r/", storage.ListOptions{Limit: limit})
				if more := 10 - limit; more > 0 {
					if first.Continue == "" || first.Remaining == nil || *first.Remaining != more {
						t.Fatalf("first page: continue %q, remaining %v; want a token and %d", first.Continue, first.Remaining, more)
					}
				} else if first.Continue != "" || first.Remaining != nil {
					t.Fatalf("only page: continue %q, remaining %v; want neither", first.Continue, first.Remaining)
				}
				got, _ := pages(t, s, "/g/r/", storage.ListOptions{Limit: limit}, nil)
				if !eqStrings(got, names(10, nil)) {
					t.Fatalf("pages = %q; want %q", got, names(10, nil))
				}
			})
		}
		t.Run("remaining", func(t *testing.T) {
			o := storage.ListOptions{Limit: 3}
			for _, want := range []int64{7, 4, 1} {
				r := list(t, s, "/g/r/", o)
				if r.Remaining == nil || *r.Remaining != want {
					t.Fatalf("Remaining = %v; want %d", r.Remaining, want)
				}
				o.Continue = r.Continue
			}
			if r := list(t, s, "/g/r/", o); r.Continue != "" || r.Remaining != nil || len(r.Items) != 1 {
				t.Fatalf("last page: %d items, continue %q, remaining %v; want 1, none, nil", len(r.Items), r.Continue, r.Remaining)
			}
		})
	}},
	{"PagesSnapshot", func(t *testing.T, s storage.Interface) {
		fill(t, s, 10, nil)
		want := names(10, nil)
		step := 0
		got, rev := pages(t, s, "/g/r/", storage.ListOptions{Limit: 3}, func() {
			// writes between pages, ahead of and behind the cursor
			step++
			put(t, s, fmt.Sprintf("/g/r/ns/o%02d", 9-step), "changed")
			put(t, s, "/g/r/ns/o00", "changed")
			del(t, s, fmt.Sprintf("/g/r/ns/o%02d", 10-step))
			create(t, s, obj(fmt.Sprintf("/g/r/ns/o%02d.%d", 4+step, step), "new"))
			create(t, s, obj("/g/r/ns/o99", "new"))
			del(t, s, "/g/r/ns/o99")
		})
		if !eqStrings(got, want) {
			t.Fatalf("pages with writes between = %q; want the first page's snapshot %q", got, want)
		}
		if rev >= revision(t, s) {
			t.Fatalf("snapshot revision %d; want older than the store's %d", rev, revision(t, s))
		}
	}},
	{"PagesPredicate", func(t *testing.T, s storage.Interface) {
		web := func(i int) bool { return i%3 == 1 }
		fill(t, s, 20, func(i int) []string {
			if web(i) {
				return []string{"app=web"}
			}
			return []string{"app=db"}
		})
		for _, limit := range []int64{1, 2, 5, 50} {
			t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
				got, _ := pages(t, s, "/g/r/", storage.ListOptions{Limit: limit, Predicate: mustSelector(t, "app=web", "")}, nil)
				if want := names(20, web); !eqStrings(got, want) {
					t.Fatalf("pages = %q; want %q", got, want)
				}
			})
		}
	}},
	{"BadContinue", func(t *testing.T, s storage.Interface) {
		fill(t, s, 5, nil)
		create(t, s, obj("/g/r2/ns/x", "x"))
		r := list(t, s, "/g/r/", storage.ListOptions{Limit: 2})
		tok := r.Continue
		flip := []byte(tok) // another base64url character in the middle
		if flip[len(flip)/2] == 'A' {
			flip[len(flip)/2] = 'B'
		} else {
			flip[len(flip)/2] = 'A'
		}
		tests := []struct{ name, prefix, token string }{
			{"garbage", "/g/r/", "not a token"},
			{"base64 garbage", "/g/r/", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0"},
			{"altered", "/g/r/", string(flip)},
			{"truncated", "/g/r/", tok[:len(tok)-3]},
			{"other prefix", "/g/r2/", tok},
			{"narrower prefix", "/g/r/ns/", tok},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := s.List(t.Context(), tt.prefix, storage.ListOptions{Limit: 2, Continue: tt.token})
				wantErr(t, "List with a bad continue token", err, storage.ErrInvalid)
			})
		}
	}},
	{"Match", func(t *testing.T, s storage.Interface) {
		a1 := create(t, s, obj("/g/r/ns/a", "a1"))
		create(t, s, obj("/g/r/ns/b", "b1"))
		r1 := revision(t, s)
		put(t, s, "/g/r/ns/a", "a2")
		del(t, s, "/g/r/ns/b")
		create(t, s, obj("/g/r/ns/c", "c1"))
		create(t, s, obj("/g/r2/ns/z", "other resource"))
		cur := revision(t, s)
		now := []string{"/g/r/ns/a=a2", "/g/r/ns/c=c1"}
		tests := []struct {
			name string
			o    storage.ListOptions
			want []string
			rev  uint64 // 0: any revision from o.Revision to cur
		}{
			{"MostRecent", storage.ListOptions{}, now, cur},
			{"Exact old", storage.ListOptions{Match: rv.Exact, Revision: r1}, []string{"/g/r/ns/a=a1", "/g/r/ns/b=b1"}, r1},
			{"Exact old paged", storage.ListOptions{Match: rv.Exact, Revision: r1, Limit: 1}, []string{"/g/r/ns/a=a1"}, r1},
			{"Exact old filtered", storage.ListOptions{Match: rv.Exact, Revision: r1, Predicate: mustSelector(t, "", "metadata.name=b")}, []string{"/g/r/ns/b=b1"}, r1},
			{"Exact first", storage.ListOptions{Match: rv.Exact, Revision: a1.Revision}, []string{"/g/r/ns/a=a1"}, a1.Revision},
			{"Exact current", storage.ListOptions{Match: rv.Exact, Revision: cur}, now, cur},
			{"NotOlderThan current", storage.ListOptions{Match: rv.NotOlderThan, Revision: cur}, now, cur},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := list(t, s, "/g/r/", tt.o)
				if got := keys(r.Items); !eqStrings(got, tt.want) || r.Revision != tt.rev {
					t.Fatalf("got %q at %d; want %q at %d", got, r.Revision, tt.want, tt.rev)
				}
			})
		}
		t.Run("NotOlderThan old", func(t *testing.T) {
			r := list(t, s, "/g/r/", storage.ListOptions{Match: rv.NotOlderThan, Revision: r1})
			if r.Revision < r1 || r.Revision > cur {
				t.Fatalf("revision %d; want between %d and %d", r.Revision, r1, cur)
			}
			if r.Revision == cur && !eqStrings(keys(r.Items), now) {
				t.Fatalf("got %q at %d; want %q", keys(r.Items), cur, now)
			}
		})
		t.Run("Any", func(t *testing.T) {
			r := list(t, s, "/g/r/", storage.ListOptions{Match: rv.Any})
			if r.Revision > cur || (r.Revision == cur && !eqStrings(keys(r.Items), now)) {
				t.Fatalf("got %q at %d; want a consistent state no newer than %d", keys(r.Items), r.Revision, cur)
			}
		})
		t.Run("Exact paged continues at its revision", func(t *testing.T) {
			got, rev := pages(t, s, "/g/r/", storage.ListOptions{Match: rv.Exact, Revision: r1, Limit: 1}, nil)
			if want := []string{"/g/r/ns/a=a1", "/g/r/ns/b=b1"}; !eqStrings(got, want) || rev != r1 {
				t.Fatalf("pages = %q at %d; want %q at %d", got, rev, want, r1)
			}
		})
	}},
}

var compactTests = []test{
	{"Expired", func(t *testing.T, s storage.Interface) {
		a1 := create(t, s, obj("/g/r/ns/a", "a1"))
		create(t, s, obj("/g/r/ns/b", "b1"))
		old := revision(t, s)
		put(t, s, "/g/r/ns/a", "a2")
		at := revision(t, s)
		create(t, s, obj("/g/r/ns/c", "c1"))
		cur := revision(t, s)
		if err := s.Compact(t.Context(), at); err != nil {
			t.Fatalf("Compact(%d): %v", at, err)
		}
		_, err := s.List(t.Context(), "/g/r/", storage.ListOptions{Match: rv.Exact, Revision: old})
		wantErr(t, "List Exact older than the compaction", err, storage.ErrExpired)
		_, err = s.List(t.Context(), "/g/r/", storage.ListOptions{Match: rv.Exact, Revision: a1.Revision, Limit: 1})
		wantErr(t, "paged List Exact older than the compaction", err, storage.ErrExpired)
		_, err = s.Get(t.Context(), "/g/r/ns/a", storage.GetOptions{Match: rv.Exact, Revision: old})
		wantErr(t, "Get Exact older than the compaction", err, storage.ErrExpired)

		want := []string{"/g/r/ns/a=a2", "/g/r/ns/b=b1", "/g/r/ns/c=c1"}
		if r := list(t, s, "/g/r/", storage.ListOptions{Match: rv.Exact, Revision: at}); !eqStrings(keys(r.Items), want[:2]) || r.Revision != at {
			t.Fatalf("List Exact at the compacted revision %d: got %q at %d; want %q", at, keys(r.Items), r.Revision, want[:2])
		}
		for _, m := range []rv.Match{rv.MostRecent, rv.Any} {
			if r := list(t, s, "/g/r/", storage.ListOptions{Match: m}); !eqStrings(keys(r.Items), want) || r.Revision != cur {
				t.Fatalf("List %v after compaction: got %q at %d; want %q at %d", m, keys(r.Items), r.Revision, want, cur)
			}
		}
		if o := get(t, s, "/g/r/ns/a", rv.MostRecent, 0); string(o.Value) != "a2" {
			t.Fatalf("Get after compaction: %s; want a2", show(o))
		}
	}},
	{"DuringPages", func(t *testing.T, s storage.Interface) {
		fill(t, s, 6, nil)
		first := list(t, s, "/g/r/", storage.ListOptions{Limit: 2})
		put(t, s, "/g/r/ns/o03", "changed")
		del(t, s, "/g/r/ns/o04")
		create(t, s, obj("/g/r/ns/o02.5", "new"))
		cur := revision(t, s)
		if err := s.Compact(t.Context(), cur); err != nil {
			t.Fatalf("Compact(%d): %v", cur, err)
		}
		_, err := s.List(t.Context(), "/g/r/", storage.ListOptions{Limit: 2, Continue: first.Continue})
		se := wantErr(t, "continuing a list whose snapshot was compacted", err, storage.ErrExpired)
		if se.Continue == "" {
			t.Fatalf("ErrExpired for a continue token: Continue is empty; want a token to go on at the latest revision")
		}
		got, rev := pages(t, s, "/g/r/", storage.ListOptions{Limit: 2, Continue: se.Continue}, nil)
		want := []string{"/g/r/ns/o02=v", "/g/r/ns/o02.5=new", "/g/r/ns/o03=changed", "/g/r/ns/o05=v"}
		if !eqStrings(got, want) || rev != cur {
			t.Fatalf("inconsistent continuation: got %q at %d; want %q at %d", got, rev, want, cur)
		}
		if want := names(2, nil); !eqStrings(keys(first.Items), want) {
			t.Fatalf("first page %q; want %q", keys(first.Items), want)
		}
	}},
}
