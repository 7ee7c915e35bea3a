package etcd3_test

import (
	"context"
	"fmt"
	"log"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd3"
)

// A store on etcd: write, watch and page through a collection.
func Example() {
	ctx := context.Background()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint}, // e.g. "127.0.0.1:2379"
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	s, err := etcd3.New(ctx, etcd3.Options{Client: cli, Prefix: "/example"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	w1, err := s.Create(ctx, storage.Object{Key: "/apps/widgets/default/w1", Value: []byte(`{"size":1}`)})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := s.Create(ctx, storage.Object{Key: "/apps/widgets/default/w2", Value: []byte(`{"size":2}`)}); err != nil {
		log.Fatal(err)
	}
	// Every change after w1's revision, replayed from etcd's history.
	w, err := s.Watch(ctx, "/apps/widgets/", storage.WatchOptions{Recursive: true, Revision: w1.Revision})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Stop()
	ev := <-w.ResultChan()
	fmt.Println(ev.Type, string(ev.Object.(storage.Object).Value))

	page, err := s.List(ctx, "/apps/widgets/", storage.ListOptions{Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(page.Items[0].Key, *page.Remaining, "more")
	page, err = s.List(ctx, "/apps/widgets/", storage.ListOptions{Limit: 1, Continue: page.Continue})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(page.Items[0].Key, page.Continue == "")
	// Output:
	// ADDED {"size":2}
	// /apps/widgets/default/w1 1 more
	// /apps/widgets/default/w2 true
}
