package etcd3_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/storage/etcd3"
)

// TestSharedTokens: every caller gets the secret the first one stored.
func TestSharedTokens(t *testing.T) {
	srv := <-pool
	t.Cleanup(func() { pool <- srv })
	key := fmt.Sprintf("/test%d.continue-secret", stores.Add(1))
	a, err := etcd3.SharedTokens(ctx(t), srv.client, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := etcd3.SharedTokens(ctx(t), srv.client, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Secret) != 32 || !bytes.Equal(a.Secret, b.Secret) {
		t.Errorf("got secrets %x and %x; want one 32-byte secret", a.Secret, b.Secret)
	}
	if _, err := etcd3.SharedTokens(ctx(t), srv.client, ""); err == nil {
		t.Errorf("empty key: got no error; want one")
	}
}
