package etcd3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// Defaults for Options.
const (
	DefaultWait        = 3 * time.Second
	DefaultWatchBuffer = 256
	DefaultPageSize    = 1000
	DefaultTimeout     = 10 * time.Second
)

// maxPage bounds the batches a filtered list or the initial events of a
// watch read from etcd at once, as kube-apiserver does.
const maxPage = 10000

// Options configure a Store. Client is required; the rest has defaults.
type Options struct {
	// Client is the etcd client. The Store does not own it: close it
	// after the Store.
	Client *clientv3.Client
	// Prefix is prepended to every key in etcd (e.g. "/kapi"), so
	// several stores can share one etcd. A trailing "/" is dropped.
	Prefix string
	// Tokens encode continue tokens (zero: a fresh random secret).
	// Replicas serving the same etcd must share the secret, or a page's
	// token is refused by the next replica.
	Tokens rv.Tokens
	// Wait is how long a read or watch at a revision newer than etcd's
	// waits for it before failing with ErrTooLarge (default 3s; the
	// request's ctx bounds it too).
	Wait time.Duration
	// BookmarkInterval is the period of bookmarks for watches that ask
	// for them (default watch.DefaultBookmarkInterval, 1 minute).
	BookmarkInterval time.Duration
	// WatchBuffer is the capacity of a watch's result channel (default
	// 256). A watcher whose consumer lets it fill stops reading etcd and
	// resumes from etcd's history once the consumer catches up, so a
	// slow consumer costs at most this many events of memory.
	WatchBuffer int
	// PageSize is how many keys the initial events of a watch read from
	// etcd at once (default 1000).
	PageSize int64
	// Timeout bounds every call to etcd (default 10s; the request's ctx
	// bounds it too): when etcd is down or has no leader, a read fails
	// with storage.ErrUnavailable and a write with storage.ErrTimeout
	// instead of waiting for etcd to come back. Watches are not bound:
	// they resume from their last revision once etcd answers again.
	Timeout time.Duration
}

// Store is a storage.Interface on etcd v3. All methods are safe for
// concurrent use; the Store keeps no state of its own besides its
// options, so any number of Stores (in one process or many) may serve
// the same etcd keys.
//
// Mapping: a key k is the etcd key Prefix+k; its value is an envelope of
// the Object's UID, labels, fields and bytes (see value.go); its revision
// is etcd's mod revision, and the store's revision is etcd's. Every write
// is one transaction guarded on the key's create or mod revision.
type Store struct {
	c      *clientv3.Client
	prefix string
	opts   Options

	done      chan struct{} // closed by Close
	closeOnce sync.Once
	closeMu   sync.Mutex // orders Watch's Add before Close's Wait
	watchers  sync.WaitGroup

	memos  memos  // the Memos of the latest writes, shared with their reads and watch events
	states states // the last known state of the latest keys, for writes without a read first
}

var _ storage.Interface = (*Store)(nil)

// Tokens returns the keys of the Store's continue tokens, for a cache in
// front of it (storage/cache) to issue tokens the Store accepts.
func (s *Store) Tokens() rv.Tokens { return s.opts.Tokens }

// New returns a Store on opts.Client. It reads etcd's revision once to
// check that etcd answers.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Client == nil {
		return nil, errors.New("etcd3: Options.Client is nil")
	}
	if opts.Wait <= 0 {
		opts.Wait = DefaultWait
	}
	if opts.Tokens.Secret == nil {
		opts.Tokens = rv.NewTokens()
	}
	if opts.BookmarkInterval <= 0 {
		opts.BookmarkInterval = watch.DefaultBookmarkInterval
	}
	if opts.WatchBuffer <= 0 {
		opts.WatchBuffer = DefaultWatchBuffer
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	s := &Store{
		c:      opts.Client,
		prefix: strings.TrimSuffix(opts.Prefix, "/"),
		opts:   opts,
		done:   make(chan struct{}),
	}
	if _, err := s.Revision(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Close ends every watch of the Store and waits for their goroutines.
// The Store stays readable and writable; the client stays open.
func (s *Store) Close() {
	s.closeMu.Lock()
	s.closeOnce.Do(func() { close(s.done) })
	s.closeMu.Unlock()
	s.watchers.Wait()
}

// Revision returns etcd's current revision (a linearizable read).
func (s *Store) Revision(ctx context.Context) (uint64, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	// Any key will do: a count-only read of one key returns the header.
	resp, err := s.c.Get(ctx, s.prefix+"/", clientv3.WithCountOnly())
	if err != nil {
		return 0, s.failed(ctx, "revision", "", err)
	}
	return uint64(resp.Header.Revision), nil
}

// Create stores obj under obj.Key if the key does not exist in etcd.
func (s *Store) Create(ctx context.Context, obj storage.Object) (storage.Object, error) {
	if obj.Key == "" {
		return storage.Object{}, storage.NewError(storage.ErrInvalid, "", "empty key")
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	k := s.prefix + obj.Key
	val := encode(obj)
	resp, err := s.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, string(val))).
		Commit()
	if err != nil {
		return storage.Object{}, s.writeFailed(ctx, "create", obj.Key, err)
	}
	if !resp.Succeeded {
		return storage.Object{}, &storage.Error{Err: storage.ErrExists, Key: obj.Key, Revision: uint64(resp.Header.Revision)}
	}
	obj.Revision = uint64(resp.Header.Revision)
	obj.Memo = s.memos.remember(obj.Key, obj.Revision)
	s.states.put(&mvccpb.KeyValue{Key: []byte(k), ModRevision: resp.Header.Revision, Value: val})
	return obj, nil
}

// Get reads key at the revision opts choose: MostRecent is a
// linearizable read, Any a serializable one (served by the member the
// client talks to, possibly behind), NotOlderThan a linearizable read
// after waiting for the revision, Exact a read at that revision.
func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions) (storage.Object, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	resp, err := s.read(ctx, key, s.prefix+key, opts.Match, opts.Revision, true)
	if err != nil {
		return storage.Object{}, err
	}
	if len(resp.Kvs) == 0 {
		rev := uint64(resp.Header.Revision)
		if opts.Match == rv.Exact && opts.Revision != 0 {
			rev = opts.Revision
		}
		return storage.Object{}, &storage.Error{Err: storage.ErrNotFound, Key: key, Revision: rev}
	}
	if opts.Match != rv.Exact {
		s.states.put(resp.Kvs[0])
	}
	return s.object(resp.Kvs[0])
}

// GuaranteedUpdate calls fn on the current state of key and writes its
// result in a transaction guarded on the mod revision fn saw; when
// another writer got there first, the transaction returns the newer state
// and fn is called again on it. The first state is the one the Store
// remembers of key (see states), else a read. A result that encodes to
// the stored bytes is not written: the current state is returned and no
// event is sent, as kube-apiserver does for no-op updates.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, opts storage.UpdateOptions, fn storage.UpdateFunc) (storage.Object, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	k := s.prefix + key
	st, err := s.start(ctx, "update", key, k)
	if err != nil {
		return storage.Object{}, err
	}
	for {
		cur, raw, err := s.current(key, st.kvs, st.hdr, opts.Preconditions)
		var next storage.Object
		if err == nil {
			next, err = fn(cur)
		}
		var val []byte
		if err == nil {
			next.Key = key
			val = encode(next)
		}
		if err != nil || bytes.Equal(val, raw) {
			if !st.confirmed { // decide on the current state
				if st, err = s.reread(ctx, "update", key, k); err != nil {
					return storage.Object{}, err
				}
				continue
			}
			if err != nil {
				return storage.Object{}, err
			}
			return cur, nil
		}
		txn, err := s.c.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", int64(cur.Revision))).
			Then(clientv3.OpPut(k, string(val))).
			Else(clientv3.OpGet(k)).
			Commit()
		if err != nil {
			return storage.Object{}, s.writeFailed(ctx, "update", key, err)
		}
		if txn.Succeeded {
			next.Revision = uint64(txn.Header.Revision)
			next.Memo = s.memos.remember(key, next.Revision)
			s.states.put(&mvccpb.KeyValue{Key: []byte(k), ModRevision: txn.Header.Revision, Value: val})
			return next, nil
		}
		st = s.confirmed(k, txn)
	}
}

// Delete removes key in a transaction guarded on the mod revision of the
// state the preconditions and opts.Validate were checked on, retrying on
// a newer state, and returns that last state at the delete's revision. The first state is the one
// the Store remembers of key, else a read; a refusal is decided on a
// state etcd confirmed.
func (s *Store) Delete(ctx context.Context, key string, opts storage.DeleteOptions) (storage.Object, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	k := s.prefix + key
	st, err := s.start(ctx, "delete", key, k)
	if err != nil {
		return storage.Object{}, err
	}
	for {
		cur, _, err := s.current(key, st.kvs, st.hdr, opts.Preconditions)
		if err == nil && opts.Validate != nil {
			err = opts.Validate(cur)
		}
		if err != nil {
			if st.confirmed {
				return storage.Object{}, err
			}
			if st, err = s.reread(ctx, "delete", key, k); err != nil {
				return storage.Object{}, err
			}
			continue
		}
		txn, err := s.c.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", int64(cur.Revision))).
			Then(clientv3.OpDelete(k)).
			Else(clientv3.OpGet(k)).
			Commit()
		if err != nil {
			return storage.Object{}, s.writeFailed(ctx, "delete", key, err)
		}
		if txn.Succeeded {
			s.states.forget(k, txn.Header.Revision)
			cur.Revision = uint64(txn.Header.Revision) // the delete's, as storage.Interface.Delete says
			return cur, nil
		}
		st = s.confirmed(k, txn)
	}
}

// writeState is the state a write is tried on: the key-values of a read
// (none: the key does not exist) at header revision hdr, and whether etcd
// confirmed it as current (a read, or a failed transaction) rather than
// the Store remembering it.
type writeState struct {
	kvs       []*mvccpb.KeyValue
	hdr       int64
	confirmed bool
}

// start is the first state of a write of key (etcd key k): the
// remembered one, else a read.
func (s *Store) start(ctx context.Context, op, key, k string) (writeState, error) {
	if kv := s.states.get(k); kv != nil {
		return writeState{kvs: []*mvccpb.KeyValue{kv}, hdr: kv.ModRevision}, nil
	}
	return s.reread(ctx, op, key, k)
}

// reread reads key's current state.
func (s *Store) reread(ctx context.Context, op, key, k string) (writeState, error) {
	resp, err := s.c.Get(ctx, k)
	if err != nil {
		return writeState{}, s.failed(ctx, op, key, err)
	}
	if len(resp.Kvs) > 0 {
		s.states.put(resp.Kvs[0])
	} else {
		s.states.forget(k, resp.Header.Revision)
	}
	return writeState{kvs: resp.Kvs, hdr: resp.Header.Revision, confirmed: true}, nil
}

// confirmed is the current state a failed transaction returned.
func (s *Store) confirmed(k string, txn *clientv3.TxnResponse) writeState {
	kvs := txn.Responses[0].GetResponseRange().Kvs
	if len(kvs) > 0 {
		s.states.put(kvs[0])
	} else {
		s.states.forget(k, txn.Header.Revision)
	}
	return writeState{kvs: kvs, hdr: txn.Header.Revision, confirmed: true}
}

// Compact compacts etcd's history at rev: reads and watches at older
// revisions then fail with ErrExpired. Note that etcd's compaction is
// global: it applies to every key of the cluster, not only to Prefix.
// Compacting at or below an earlier compaction does nothing.
func (s *Store) Compact(ctx context.Context, rev uint64) error {
	if rev == 0 {
		return nil
	}
	cctx, cancel := s.bound(ctx)
	defer cancel()
	_, err := s.c.Compact(cctx, int64(rev))
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return nil
	case errors.Is(err, rpctypes.ErrFutureRev):
		cur := s.revisionNow(ctx)
		return &storage.Error{Err: storage.ErrTooLarge, Revision: cur,
			Msg: fmt.Sprintf("cannot compact at %d: the current revision is %d", rev, cur)}
	case err != nil:
		return s.writeFailed(cctx, "compact", "", err)
	}
	return nil
}

// current decodes the state a read or a failed transaction returned and
// checks the preconditions on it; raw is its envelope.
func (s *Store) current(key string, kvs []*mvccpb.KeyValue, hdr int64, p storage.Preconditions) (storage.Object, []byte, error) {
	if len(kvs) == 0 {
		return storage.Object{}, nil, &storage.Error{Err: storage.ErrNotFound, Key: key, Revision: uint64(hdr)}
	}
	cur, err := s.object(kvs[0])
	if err != nil {
		return storage.Object{}, nil, err
	}
	if err := p.Check(key, cur); err != nil {
		return storage.Object{}, nil, err
	}
	return cur, kvs[0].Value, nil
}

// object decodes one etcd key-value read, with the Memo of its state if
// the Store remembers one, else a fresh one (see memos).
func (s *Store) object(kv *mvccpb.KeyValue) (storage.Object, error) {
	return s.decodeKV(kv, s.memos.get)
}

// event decodes one etcd key-value of a watch event, with the Memo its
// state shares with the write and with other watches (see memos).
func (s *Store) event(kv *mvccpb.KeyValue) (storage.Object, error) {
	return s.decodeKV(kv, s.memos.remember)
}

func (s *Store) decodeKV(kv *mvccpb.KeyValue, memo func(key string, rev uint64) *storage.Memo) (storage.Object, error) {
	key := string(kv.Key[len(s.prefix):])
	o := storage.Object{
		Key:      key,
		Revision: uint64(kv.ModRevision),
		Memo:     memo(key, uint64(kv.ModRevision)),
	}
	if err := decode(kv.Value, &o); err != nil {
		return storage.Object{}, fmt.Errorf("etcd3: %s at revision %d: %w", o.Key, kv.ModRevision, err)
	}
	return o, nil
}

// read runs a range read of etcd key k (with ops, e.g. WithRange) at the
// revision m and rev choose. key names the request in errors. A revision
// newer than etcd's is waited for when wait is set; otherwise, and after
// the wait, it fails with ErrTooLarge. A compacted one fails with
// ErrExpired.
func (s *Store) read(ctx context.Context, key, k string, m rv.Match, rev uint64, wait bool, ops ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	switch {
	case m == rv.Any:
		ops = append(ops, clientv3.WithSerializable())
	case m == rv.Exact && rev != 0:
		ops = append(ops, clientv3.WithRev(int64(rev)))
	}
	for waited := !wait; ; waited = true {
		resp, err := s.c.Get(ctx, k, ops...)
		switch {
		case errors.Is(err, rpctypes.ErrCompacted):
			return nil, s.expired(ctx, key, rev)
		case errors.Is(err, rpctypes.ErrFutureRev):
			if waited {
				return nil, s.tooLarge(ctx, key, rev)
			}
		case err != nil:
			return nil, s.failed(ctx, "read", key, err)
		case m != rv.NotOlderThan || uint64(resp.Header.Revision) >= rev:
			return resp, nil
		case waited:
			return nil, s.tooLarge(ctx, key, rev)
		}
		if err := s.waitFor(ctx, key, rev); err != nil {
			return nil, err
		}
	}
}

// waitFor waits until etcd reaches rev, up to opts.Wait and ctx, polling
// its revision with a growing delay (etcd offers no cheaper way to learn
// that a revision outside the watched keys was reached).
func (s *Store) waitFor(ctx context.Context, key string, rev uint64) error {
	wctx, cancel := context.WithTimeout(ctx, s.opts.Wait)
	defer cancel()
	t := time.NewTimer(0)
	defer t.Stop()
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		select {
		case <-wctx.Done():
			return s.tooLarge(ctx, key, rev)
		case <-t.C:
		}
		cur, err := s.Revision(wctx)
		if err == nil && cur >= rev {
			return nil
		}
		if err != nil && wctx.Err() == nil {
			return err
		}
		t.Reset(delay)
	}
}
