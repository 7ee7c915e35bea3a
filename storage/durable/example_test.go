package durable_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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

// A data directory whose revision marker is lost is refused at Open:
// without the marker a log cut short would read as a crash. Adopt takes
// the database as it is, once checked that it reads whole.
func ExampleAdopt() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "kapi-example-")
	defer os.RemoveAll(dir)

	s, _ := durable.Open(dir, durable.Options{})
	s.Create(ctx, storage.Object{Key: "/widgets/default/a", Value: []byte(`{"v":1}`)})
	s.Close()
	os.Remove(filepath.Join(dir, durable.MarkerName))

	_, err := durable.Open(dir, durable.Options{})
	fmt.Println("refused:", errors.Is(err, durable.ErrCorrupt))
	if err := durable.Adopt(dir); err != nil {
		fmt.Println(err)
		return
	}
	s, _ = durable.Open(dir, durable.Options{})
	defer s.Close()
	a, _ := s.Get(ctx, "/widgets/default/a", storage.GetOptions{})
	fmt.Println("adopted:", string(a.Value), "at", a.Revision)
	// Output:
	// refused: true
	// adopted: {"v":1} at 2
}
