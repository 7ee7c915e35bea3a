package keytree_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
	"github.com/kapi-dev/kapi/watch"
)

// changes renders changes as "TYPE key@rev".
func changes(seq func(func(watch.Change) bool)) []string {
	var out []string
	for c := range seq {
		o := c.Object.(storage.Object)
		out = append(out, fmt.Sprintf("%s %s@%d", c.Type, o.Key, c.Revision))
	}
	return out
}

// TestInitial walks the example of Initial's doc: one key read at once,
// or every key under it from a clone taken at once, both unaffected by
// later writes to the live tree.
func TestInitial(t *testing.T) {
	tests := []struct {
		key       string
		recursive bool
		want      string // the changes, joined by ", "
	}{
		{"/a/1", false, "ADDED /a/1@1"},
		{"/a/", false, ""}, // no item at /a/ itself
		{"/z", false, ""},
		{"/a/", true, "ADDED /a/1@1, ADDED /a/2@2"},
		{"/a", true, "ADDED /a/1@1, ADDED /a/2@2, ADDED /a0@3"},
		{"/z/", true, ""},
		{"", true, "ADDED /a/1@1, ADDED /a/2@2, ADDED /a0@3, ADDED /b/1@4"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q recursive=%v", tt.key, tt.recursive), func(t *testing.T) {
			live := liveOf("/a/1", "/a/2", "/a0", "/b/1")
			seq := keytree.Initial(live, tt.key, tt.recursive)
			// Writes after the call, before the changes are drawn.
			live.Tree.Delete(&keytree.Item{Key: "/a/1"})
			live.Tree.ReplaceOrInsert(&keytree.Item{Key: "/a/3", Obj: storage.Object{Key: "/a/3", Revision: 9}})
			if got := strings.Join(changes(seq), ", "); got != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

// TestInitialStops: a consumer that stops early stops the walk.
func TestInitialStops(t *testing.T) {
	seq := keytree.Initial(liveOf("/a/1", "/a/2", "/a/3"), "/a/", true)
	var got []string
	for c := range seq {
		got = append(got, c.Object.(storage.Object).Key)
		if len(got) == 2 {
			break
		}
	}
	if want := []string{"/a/1", "/a/2"}; !slices.Equal(got, want) {
		t.Fatalf("got %q; want %q", got, want)
	}
}

func TestMatch(t *testing.T) {
	prod := storage.Predicate{Label: storage.Selector{{Key: "env", Op: storage.Equals, Values: []string{"prod"}}}}
	obj := func(key, env string) storage.Object {
		return storage.Object{Key: key, Labels: map[string]string{"env": env}}
	}
	tests := []struct {
		key       string
		recursive bool
		p         storage.Predicate
		obj       storage.Object
		want      bool
	}{
		{"/a/1", false, storage.Predicate{}, obj("/a/1", "dev"), true},
		{"/a/1", false, storage.Predicate{}, obj("/a/10", "dev"), false}, // not a prefix match
		{"/a/1", false, storage.Predicate{}, obj("/a/2", "dev"), false},
		{"/a/", true, storage.Predicate{}, obj("/a/2", "dev"), true},
		{"/a/", true, storage.Predicate{}, obj("/a0", "dev"), false},
		{"/a", true, storage.Predicate{}, obj("/a0", "dev"), true}, // a key prefix, not a directory
		{"", true, storage.Predicate{}, obj("/b/1", "dev"), true},
		{"/a/1", false, prod, obj("/a/1", "prod"), true},
		{"/a/1", false, prod, obj("/a/1", "dev"), false},
		{"/a/", true, prod, obj("/a/2", "prod"), true},
		{"/a/", true, prod, obj("/a/2", "dev"), false},
		{"/a/", true, prod, obj("/b/2", "prod"), false}, // the key decides first
	}
	for _, tt := range tests {
		if got := keytree.Match(tt.key, tt.recursive, tt.p)(tt.obj); got != tt.want {
			t.Errorf("Match(%q, recursive=%v, env=prod:%v)(%s env=%s): got %v; want %v",
				tt.key, tt.recursive, !tt.p.Empty(), tt.obj.Key, tt.obj.Labels["env"], got, tt.want)
		}
	}
}

// TestMatchTransitions: in a watch, Match turns label changes across the
// predicate into ADDED and DELETED events, and leaves out other keys.
func TestMatchTransitions(t *testing.T) {
	prod := storage.Predicate{Label: storage.Selector{{Key: "env", Op: storage.Equals, Values: []string{"prod"}}}}
	state := func(key, env string, rev uint64) any {
		return storage.Object{Key: key, Revision: rev, Labels: map[string]string{"env": env}}
	}
	log := []watch.Change{
		{Type: watch.Added, Revision: 2, Object: state("/a/1", "dev", 2)},                                    // not matched
		{Type: watch.Modified, Revision: 3, Object: state("/a/1", "prod", 3), Prev: state("/a/1", "dev", 2)}, // enters: ADDED
		{Type: watch.Modified, Revision: 4, Object: state("/a/1", "prod", 4), Prev: state("/a/1", "prod", 3)},
		{Type: watch.Added, Revision: 5, Object: state("/b/1", "prod", 5)},                                   // other key
		{Type: watch.Modified, Revision: 6, Object: state("/a/1", "dev", 6), Prev: state("/a/1", "prod", 4)}, // leaves: DELETED
		{Type: watch.Deleted, Revision: 7, Prev: state("/a/1", "dev", 6)},                                    // not matched
		{Type: watch.Added, Revision: 8, Object: state("/a/2", "prod", 8)},
		{Type: watch.Deleted, Revision: 9, Prev: state("/a/2", "prod", 8)},
	}
	tests := []struct {
		key       string
		recursive bool
		want      []string
	}{
		{"/a/1", false, []string{"ADDED /a/1@3", "MODIFIED /a/1@4", "DELETED /a/1@6"}},
		{"/a/", true, []string{"ADDED /a/1@3", "MODIFIED /a/1@4", "DELETED /a/1@6", "ADDED /a/2@8", "DELETED /a/2@9"}},
		{"/b/", true, []string{"ADDED /b/1@5"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q recursive=%v", tt.key, tt.recursive), func(t *testing.T) {
			b := watch.NewBroadcaster(watch.Options{Revision: 1})
			defer b.Close()
			for _, c := range log {
				if err := b.Publish(c); err != nil {
					t.Fatal(err)
				}
			}
			// A last change each watch matches (at its key) marks the end.
			if err := b.Publish(watch.Change{Type: watch.Added, Revision: 10, Object: state(tt.key, "prod", 10)}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			w, err := b.Watch(ctx, 1, watch.WatcherOptions{Match: keytree.Match(tt.key, tt.recursive, prod)})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var got []string
			for ev := range w.ResultChan() {
				o := ev.Object.(storage.Object)
				if ev.Revision == 10 {
					break
				}
				got = append(got, fmt.Sprintf("%s %s@%d", ev.Type, o.Key, ev.Revision))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestWatcherOptions(t *testing.T) {
	prod := storage.Predicate{Label: storage.Selector{{Key: "env", Op: storage.Equals, Values: []string{"prod"}}}}
	tests := []struct {
		name    string
		opts    storage.WatchOptions
		initial []string // nil: no Start
	}{
		{"live only", storage.WatchOptions{Recursive: true, Bookmarks: true}, nil},
		{"initial, one key", storage.WatchOptions{Initial: true, InitialEnd: true}, []string{"ADDED /a/1@1"}},
		{"initial, recursive, with a predicate (the watcher applies it, not Start)", storage.WatchOptions{Initial: true, Recursive: true, Predicate: prod},
			[]string{"ADDED /a/1@1", "ADDED /a/2@2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := liveOf("/a/1", "/a/2")
			key := "/a/"
			if !tt.opts.Recursive {
				key = "/a/1"
			}
			wo := keytree.WatcherOptions(live, key, tt.opts)
			if wo.InitialEventsEnd != tt.opts.InitialEnd || wo.Bookmarks != tt.opts.Bookmarks {
				t.Errorf("got InitialEventsEnd %v, Bookmarks %v; want %v, %v", wo.InitialEventsEnd, wo.Bookmarks, tt.opts.InitialEnd, tt.opts.Bookmarks)
			}
			if (wo.Start == nil) != (tt.initial == nil) {
				t.Fatalf("got Start set %v; want %v", wo.Start != nil, tt.initial != nil)
			}
			if wo.Start != nil {
				if got := changes(wo.Start); !slices.Equal(got, tt.initial) {
					t.Errorf("got initial %q; want %q", got, tt.initial)
				}
			}
			match := func(key, env string) bool {
				return wo.Match(storage.Object{Key: key, Labels: map[string]string{"env": env}})
			}
			wantDev := tt.opts.Predicate.Empty()
			if !match("/a/1", "prod") || match("/a/1", "dev") != wantDev || match("/b/1", "prod") {
				t.Errorf("Match(/a/1 prod, /a/1 dev, /b/1 prod): got %v %v %v; want true %v false",
					match("/a/1", "prod"), match("/a/1", "dev"), match("/b/1", "prod"), wantDev)
			}
		})
	}
}
