package etcd3

import (
	"context"
	"errors"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

// Paginated lists. etcd keeps every revision until compaction, so a page
// is a range read at the first page's revision, and a continue token
// names that revision and the next key (rv.Tokens, relative to the
// list's prefix and MAC'd):
//
//	first page, limit 2, at rev 7:  a b | c d e   → token {7, "b\x00"}
//	a write at rev 8 deletes c:     etcd at rev 7 still holds c
//	second page with {7, "b\x00"}:  range [b\x00, end) at rev 7 → c d | e
//
// remainingItemCount is etcd's count of the range read minus the page.
// With a predicate, a page reads batches of keys (doubling, up to
// maxPage) until it holds limit matches or the range ends, and the token
// names the first key it did not look at. Once the token's revision is
// compacted it fails with ErrExpired and offers a token at revision 0,
// which goes on from the same key at the latest revision.

// List reads the keys under prefix.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	start, m, rev := prefix, opts.Match, opts.Revision
	var offset int64
	var tok rv.Token
	if opts.Continue != "" {
		var err error
		tok, err = s.opts.Tokens.Decode(prefix, opts.Continue)
		if err != nil {
			return storage.ListResult{}, &storage.Error{Err: storage.ErrInvalid, Key: prefix, Msg: err.Error()}
		}
		start, offset = prefix+tok.Key, tok.Offset
		m, rev = rv.MostRecent, 0
		if tok.Revision != 0 {
			m, rev = rv.Exact, tok.Revision
		}
	}
	res, err := s.page(ctx, prefix, start, offset, m, rev, opts, opts.Continue == "")
	if err == nil || opts.Continue == "" || tok.Revision == 0 {
		return res, err
	}
	var se *storage.Error
	switch {
	case errors.As(err, &se) && errors.Is(err, storage.ErrExpired):
		se.Msg = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
		se.Continue = s.opts.Tokens.Encode(prefix, rv.Token{Key: tok.Key, Offset: tok.Offset})
	case errors.As(err, &se) && errors.Is(err, storage.ErrTooLarge):
		return storage.ListResult{}, &storage.Error{Err: storage.ErrInvalid, Key: prefix, Revision: se.Revision,
			Msg: "continue token is newer than the store; start the list again without continue"}
	}
	return storage.ListResult{}, err
}

// page reads one page of the keys under prefix from key start on, at
// the revision m and rev choose. offset counts the items of earlier
// pages. wait tells whether a revision etcd has not reached is waited
// for.
func (s *Store) page(ctx context.Context, prefix, start string, offset int64, m rv.Match, rev uint64, opts storage.ListOptions, wait bool) (storage.ListResult, error) {
	key, end := s.rangeOf(prefix)
	if start != prefix {
		key = s.prefix + start
	}
	limit, p := opts.Limit, opts.Predicate
	all := p.Empty()
	batch := limit
	var res storage.ListResult
	for {
		ops := []clientv3.OpOption{clientv3.WithRange(end)}
		if limit > 0 {
			ops = append(ops, clientv3.WithLimit(batch))
		}
		resp, err := s.read(ctx, prefix, key, m, rev, wait, ops...)
		if err != nil {
			return storage.ListResult{}, err
		}
		if res.Revision == 0 { // later batches read at the first one's revision
			res.Revision = uint64(resp.Header.Revision)
			if m == rv.Exact && rev != 0 {
				res.Revision = rev
			}
			m, rev = rv.Exact, res.Revision
			if res.Items == nil {
				res.Items = make([]storage.Object, 0, len(resp.Kvs))
			}
		}
		next := ""
		for _, kv := range resp.Kvs {
			if limit > 0 && int64(len(res.Items)) == limit {
				next = string(kv.Key) // the first key not looked at
				break
			}
			o, err := s.object(kv)
			if err != nil {
				return storage.ListResult{}, err
			}
			if all || p.Matches(o) {
				res.Items = append(res.Items, o)
			}
		}
		if next == "" && resp.More {
			next = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		}
		if next == "" { // the range is done
			return res, nil
		}
		if int64(len(res.Items)) == limit {
			offset += int64(len(res.Items))
			res.Continue = s.opts.Tokens.Encode(prefix, rv.Token{Revision: res.Revision, Key: next[len(s.prefix)+len(prefix):], Offset: offset})
			if all {
				n := resp.Count - int64(len(resp.Kvs))
				res.Remaining = &n
			}
			return res, nil
		}
		key, batch = next, min(2*batch, max(maxPage, limit))
	}
}

// rangeOf returns the etcd range [key, end) of the keys under prefix.
func (s *Store) rangeOf(prefix string) (key, end string) {
	key = s.prefix + prefix
	if key == "" {
		return "\x00", "\x00" // every key
	}
	return key, clientv3.GetPrefixRangeEnd(key)
}
