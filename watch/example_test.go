package watch_test

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/watch"
)

// A watcher started from revision 1 replays what the log holds after it,
// then receives live changes; a selector that stops matching turns a
// modification into a DELETED event carrying the last matching state.
func ExampleBroadcaster() {
	b := watch.NewBroadcaster(watch.Options{})
	defer b.Close()

	b.Publish(watch.Change{Type: watch.Added, Revision: 1, Object: "red apple"})
	b.Publish(watch.Change{Type: watch.Added, Revision: 2, Object: "red cherry"})

	red := func(o any) bool { return len(o.(string)) > 3 && o.(string)[:3] == "red" }
	w, err := b.Watch(context.Background(), 1, watch.WatcherOptions{Match: red})
	if err != nil {
		panic(err)
	}
	defer w.Stop()

	b.Publish(watch.Change{Type: watch.Modified, Revision: 3, Object: "green apple", Prev: "red apple"})
	b.Publish(watch.Change{Type: watch.Modified, Revision: 4, Object: "red apple", Prev: "green apple"})

	for range 3 {
		ev := <-w.ResultChan()
		fmt.Println(ev.Type, ev.Revision, ev.Object)
	}
	// Output:
	// ADDED 2 red cherry
	// DELETED 3 red apple
	// ADDED 4 red apple
}
