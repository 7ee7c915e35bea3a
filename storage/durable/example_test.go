package durable_test

import (
	"context"
	"fmt"
	"os"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/durable"
)

// Objects, the revision counter and the history survive a restart: a
// read at a revision written before it is served after it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "kapi-example-")
	defer os.RemoveAll(dir)

	s, err := durable.Open(dir, durable.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	a, _ := s.Create(ctx, storage.Object{Key: "/widgets/default/a", Value: []byte(`{"v":1}`)})
	s.GuaranteedUpdate(ctx, "/widgets/default/a", storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
		cur.Value = []byte(`{"v":2}`)
		return cur, nil
	})
	s.Close()

	s, _ = durable.Open(dir, durable.Options{})
	defer s.Close()
	now, _ := s.Get(ctx, "/widgets/default/a", storage.GetOptions{})
	old, _ := s.Get(ctx, "/widgets/default/a", storage.GetOptions{Match: rv.Exact, Revision: a.Revision})
	b, _ := s.Create(ctx, storage.Object{Key: "/widgets/default/b", Value: []byte(`{"v":1}`)})
	fmt.Println("now:", string(now.Value), "at", now.Revision)
	fmt.Println("at", a.Revision, "it was", string(old.Value))
	fmt.Println("next write at", b.Revision)
	// Output:
	// now: {"v":2} at 3
	// at 2 it was {"v":1}
	// next write at 4
}
