package memory_test

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// A paginated list keeps showing the collection as of its first page,
// and an Exact read serves an older revision from history.
func Example() {
	ctx := context.Background()
	s := memory.New(memory.Options{})
	defer s.Close()

	for _, name := range []string{"a", "b", "c"} {
		s.Create(ctx, storage.Object{Key: "/widgets/default/" + name, Value: []byte(`{"v":1}`)})
	}
	first, _ := s.List(ctx, "/widgets/default/", storage.ListOptions{Limit: 2})
	fmt.Println("page 1:", len(first.Items), "items at", first.Revision, "remaining", *first.Remaining)

	s.Delete(ctx, "/widgets/default/c", storage.DeleteOptions{})

	second, _ := s.List(ctx, "/widgets/default/", storage.ListOptions{Limit: 2, Continue: first.Continue})
	fmt.Println("page 2:", second.Items[0].Key, "at", second.Revision)

	now, _ := s.List(ctx, "/widgets/default/", storage.ListOptions{})
	old, _ := s.Get(ctx, "/widgets/default/c", storage.GetOptions{Match: rv.Exact, Revision: first.Revision})
	fmt.Println("now:", len(now.Items), "items at", now.Revision, "; c at", first.Revision, "was", string(old.Value))
	// Output:
	// page 1: 2 items at 4 remaining 1
	// page 2: /widgets/default/c at 4
	// now: 2 items at 5 ; c at 4 was {"v":1}
}
