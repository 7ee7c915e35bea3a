package etcd3

import (
	"context"
	"crypto/rand"
	"errors"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/rv"
)

// SharedTokens returns continue-token keys whose secret is kept in etcd
// under key: the first caller stores a fresh random secret there, and
// every later caller (any replica on the same etcd) reads the same one,
// so that a list paginated on one replica continues on another. Keep key
// outside the Store's Prefix (e.g. Prefix+".continue-secret"), so that no
// list sees it.
func SharedTokens(ctx context.Context, c *clientv3.Client, key string) (rv.Tokens, error) {
	if key == "" {
		return rv.Tokens{}, errors.New("etcd3: SharedTokens: empty key")
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails (Go 1.24+)
	resp, err := c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(secret))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return rv.Tokens{}, err
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 || len(kvs[0].Value) == 0 {
			return rv.Tokens{}, errors.New("etcd3: SharedTokens: the secret at " + key + " is empty")
		}
		secret = kvs[0].Value
	}
	return rv.Tokens{Secret: secret}, nil
}
