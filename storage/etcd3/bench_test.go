package etcd3_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd3"
)

// benchValue is a 2 KiB JSON object, as in the bench module's widgets.
var benchValue = []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"pad":"` +
	string(bytes.Repeat([]byte("x"), 2000)) + `"}}`)

// BenchmarkWrite puts kapi's writes beside the bare etcd transactions
// they are made of, one caller at a time: the difference is the Store's
// own cost per write.
//
//	go test -run '^$' -bench Write -count 5 .
func BenchmarkWrite(b *testing.B) {
	srv := <-pool
	defer func() { pool <- srv }()
	c := srv.client
	ctx := context.Background()
	// A fresh prefix per run of a sub-benchmark (which may run more than once).
	fresh := func(b *testing.B) (*etcd3.Store, string) {
		p := fmt.Sprintf("/bench%d", stores.Add(1))
		st, err := etcd3.New(ctx, etcd3.Options{Client: c, Prefix: p})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(st.Close)
		return st, p
	}
	obj := func(key string) storage.Object {
		return storage.Object{Key: key, Value: benchValue, UID: "u", Labels: map[string]string{"app": "w"},
			Fields: map[string]string{"metadata.name": "w", "metadata.namespace": "default"}}
	}

	b.Run("create/etcd txn", func(b *testing.B) {
		_, p := fresh(b)
		for i := 0; b.Loop(); i++ {
			k := p + "/bare/" + strconv.Itoa(i)
			if _, err := c.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
				Then(clientv3.OpPut(k, string(benchValue))).Commit(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("create/kapi Create", func(b *testing.B) {
		st, _ := fresh(b)
		for i := 0; b.Loop(); i++ {
			if _, err := st.Create(ctx, obj("/c/"+strconv.Itoa(i))); err != nil {
				b.Fatal(err)
			}
		}
	})

	// Update: the caller read the object before (a GET, then a PUT with
	// its resourceVersion), as the bench module's update scenario does.
	b.Run("update/etcd txn", func(b *testing.B) {
		_, p := fresh(b)
		k := p + "/bare"
		resp, err := c.Put(ctx, k, string(benchValue))
		if err != nil {
			b.Fatal(err)
		}
		rev := resp.Header.Revision
		for b.Loop() {
			t, err := c.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", rev)).
				Then(clientv3.OpPut(k, string(benchValue))).Else(clientv3.OpGet(k)).Commit()
			if err != nil || !t.Succeeded {
				b.Fatal(err)
			}
			rev = t.Header.Revision
		}
	})
	b.Run("update/kapi GuaranteedUpdate", func(b *testing.B) {
		st, _ := fresh(b)
		cur, err := st.Create(ctx, obj("/u"))
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			next := obj("/u")
			next.Labels = map[string]string{"app": "w", "i": strconv.Itoa(i)} // not a no-op
			cur, err = st.GuaranteedUpdate(ctx, "/u", storage.UpdateOptions{Preconditions: storage.Preconditions{Revision: cur.Revision}},
				func(storage.Object) (storage.Object, error) { return next, nil })
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update/kapi Get+GuaranteedUpdate", func(b *testing.B) {
		st, _ := fresh(b)
		if _, err := st.Create(ctx, obj("/u")); err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			cur, err := st.Get(ctx, "/u", storage.GetOptions{Match: rv.MostRecent})
			if err != nil {
				b.Fatal(err)
			}
			next := obj("/u")
			next.Labels = map[string]string{"app": "w", "i": strconv.Itoa(i)}
			if _, err := st.GuaranteedUpdate(ctx, "/u", storage.UpdateOptions{Preconditions: storage.Preconditions{Revision: cur.Revision}},
				func(storage.Object) (storage.Object, error) { return next, nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
