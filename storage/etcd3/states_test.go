package etcd3_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd3"
)

// TestWriteOnStaleState: a Store tries an update or a delete on the
// state it remembers of the key (it wrote it); when another replica wrote
// the key since, the outcome is the one of a write on the current state:
// preconditions, the update function's errors and no-ops are decided on
// it, and the update function's last call sees it.
func TestWriteOnStaleState(t *testing.T) {
	errStale := errors.New("stale state")
	tests := []struct {
		name string
		// write runs on s (which remembers the state at old) after the
		// other replica moved the key to cur (cur.Key == "": deleted).
		write   func(s *etcd3.Store, old, cur storage.Object) (storage.Object, error)
		wantErr error
		want    func(old, cur storage.Object) string // the Value the key then has, "" if gone
	}{
		{"update", func(s *etcd3.Store, old, cur storage.Object) (storage.Object, error) {
			return s.GuaranteedUpdate(ctx(t), "/k", storage.UpdateOptions{}, func(o storage.Object) (storage.Object, error) {
				o.Value = append([]byte("+"), o.Value...)
				return o, nil
			})
		}, nil, func(_, cur storage.Object) string { return "+" + string(cur.Value) }},
		{"update, precondition on the current revision", func(s *etcd3.Store, old, cur storage.Object) (storage.Object, error) {
			return s.GuaranteedUpdate(ctx(t), "/k", storage.UpdateOptions{Preconditions: storage.Preconditions{Revision: cur.Revision}},
				func(o storage.Object) (storage.Object, error) { o.Value = []byte("mine"); return o, nil })
		}, nil, func(_, _ storage.Object) string { return "mine" }},
		{"update, precondition on the stale revision", func(s *etcd3.Store, old, cur storage.Object) (storage.Object, error) {
			return s.GuaranteedUpdate(ctx(t), "/k", storage.UpdateOptions{Preconditions: storage.Preconditions{Revision: old.Revision}},
				func(o storage.Object) (storage.Object, error) { o.Value = []byte("mine"); return o, nil })
		}, storage.ErrConflict, func(_, cur storage.Object) string { return string(cur.Value) }},
		{"update function refusing the stale state", func(s *etcd3.Store, old, cur storage.Object) (storage.Object, error) {
			return s.GuaranteedUpdate(ctx(t), "/k", storage.UpdateOptions{}, func(o storage.Object) (storage.Object, error) {
				if o.Revision != cur.Revision {
					return o, errStale
				}
				o.Value = []byte("mine")
				return o, nil
			})
		}, nil, func(_, _ storage.Object) string { return "mine" }},
		{"no-op on the current state", func(s *etcd3.Store, old, cur storage.Object) (storage.Object, error) {
			return s.GuaranteedUpdate(ctx(t), "/k", storage.UpdateOptions{}, func(o storage.Object) (storage.Object, error) {
				o.Value = cur.Value // a change of the stale state, none of the current one
				return o, nil
			})
		}, nil, func(_, cur storage.Object) string { return string(cur.Value) }},
		{"no-op on the stale state only", func(s *etcd3.Store, old, cur storage.Object) (storage.Object, error) {
			return s.GuaranteedUpdate(ctx(t), "/k", storage.UpdateOptions{}, func(o storage.Object) (storage.Object, error) {
				o.Value = old.Value // a change of the current state
				return o, nil
			})
		}, nil, func(old, _ storage.Object) string { return string(old.Value) }},
		{"delete, precondition on the current revision", func(s *etcd3.Store, old, cur storage.Object) (storage.Object, error) {
			return s.Delete(ctx(t), "/k", storage.DeleteOptions{Preconditions: storage.Preconditions{Revision: cur.Revision}})
		}, nil, func(_, _ storage.Object) string { return "" }},
		{"delete, precondition on the stale revision", func(s *etcd3.Store, old, cur storage.Object) (storage.Object, error) {
			return s.Delete(ctx(t), "/k", storage.DeleteOptions{Preconditions: storage.Preconditions{Revision: old.Revision}})
		}, storage.ErrConflict, func(_, cur storage.Object) string { return string(cur.Value) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, other := replicaPair(t)
			old := mustCreate(t, s, "/k") // s remembers it
			cur, err := other.GuaranteedUpdate(ctx(t), "/k", storage.UpdateOptions{}, func(o storage.Object) (storage.Object, error) {
				o.Value = []byte("theirs")
				return o, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.write(s, old, cur)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got error %v; want %v", err, tc.wantErr)
			}
			want := tc.want(old, cur)
			stored, gerr := other.Get(ctx(t), "/k", storage.GetOptions{})
			switch {
			case want == "" && !errors.Is(gerr, storage.ErrNotFound):
				t.Errorf("the key after the write: got %q (%v); want it deleted", stored.Value, gerr)
			case want != "" && (gerr != nil || string(stored.Value) != want):
				t.Errorf("the key after the write: got %q (%v); want %q", stored.Value, gerr, want)
			}
			if err == nil && want != "" && (got.Revision != stored.Revision || string(got.Value) != want) {
				t.Errorf("got %q at %d; want the stored %q at %d", got.Value, got.Revision, want, stored.Revision)
			}
		})
	}

	t.Run("update of a key deleted meanwhile", func(t *testing.T) {
		s, other := replicaPair(t)
		mustCreate(t, s, "/k")
		if _, err := other.Delete(ctx(t), "/k", storage.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := s.GuaranteedUpdate(ctx(t), "/k", storage.UpdateOptions{}, func(o storage.Object) (storage.Object, error) { return o, nil })
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("got %v; want ErrNotFound", err)
		}
	})
}

// replicaPair returns two Stores on one prefix of a server of the pool.
func replicaPair(t *testing.T) (*etcd3.Store, *etcd3.Store) {
	t.Helper()
	srv := <-pool
	t.Cleanup(func() { pool <- srv })
	prefix := fmt.Sprintf("/test%d", stores.Add(1))
	var ss [2]*etcd3.Store
	for i := range ss {
		s, err := etcd3.New(t.Context(), etcd3.Options{Client: srv.client, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		ss[i] = s
	}
	return ss[0], ss[1]
}
