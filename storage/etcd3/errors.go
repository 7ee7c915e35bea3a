package etcd3

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kapi-dev/kapi/storage"
)

// Faults. The etcd client waits for a connection and retries reads for
// as long as its ctx lets it, so every call of the Store runs under
// bound: at most Options.Timeout, or less if the caller's ctx says so.
// What a failed call returns depends on whose deadline it was:
//
//	caller's ctx done                 ctx.Err() (context.Canceled, DeadlineExceeded)
//	Options.Timeout, or etcd says     a read:  storage.ErrUnavailable (nothing changed)
//	  unavailable (no leader, …)      a write: storage.ErrTimeout (outcome unknown)
//	anything else                     the client's error, wrapped
//
// A write's transaction may have reached etcd before the connection
// broke, so only reads (including the read that starts an update or a
// delete) are ErrUnavailable.

// errDeadline is the cause of a ctx that Options.Timeout ended.
var errDeadline = errors.New("etcd3: no answer from etcd within Options.Timeout")

// bound returns ctx limited to Options.Timeout.
func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, s.opts.Timeout, errDeadline)
}

// unavailable tells whether err says etcd could not serve the request
// now (no connection, no leader, its own timeout), as opposed to a
// refusal.
func unavailable(err error) bool {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code() == codes.Unavailable || ee.Code() == codes.DeadlineExceeded
	}
	if st, ok := status.FromError(err); ok {
		return st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// failed wraps an error of a read of the etcd client; ctx is the bound
// ctx of the call. Errors of a cancelled or expired caller's ctx are the
// ctx's own, so errors.Is(err, context.Canceled) holds.
func (s *Store) failed(ctx context.Context, op, key string, err error) error {
	return s.fault(ctx, storage.ErrUnavailable, op, key, err)
}

// writeFailed wraps an error of a write transaction.
func (s *Store) writeFailed(ctx context.Context, op, key string, err error) error {
	return s.fault(ctx, storage.ErrTimeout, op, key, err)
}

func (s *Store) fault(ctx context.Context, sentinel error, op, key string, err error) error {
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errDeadline) {
		err = ctx.Err()
	} else if ctx.Err() != nil || unavailable(err) {
		msg := fmt.Sprintf("etcd did not answer the %s within %v: %v", op, s.opts.Timeout, err)
		if !errors.Is(context.Cause(ctx), errDeadline) {
			msg = fmt.Sprintf("etcd cannot serve the %s: %v", op, err)
		}
		if sentinel == storage.ErrTimeout {
			msg += "; the write may or may not have been applied"
		}
		return &storage.Error{Err: sentinel, Key: key, Msg: msg}
	}
	if key == "" {
		return fmt.Errorf("etcd3: %s: %w", op, err)
	}
	return fmt.Errorf("etcd3: %s %s: %w", op, key, err)
}

// tooLarge is the error for a revision etcd has not reached.
func (s *Store) tooLarge(ctx context.Context, key string, rev uint64) error {
	cur := s.revisionNow(ctx)
	return &storage.Error{Err: storage.ErrTooLarge, Key: key, Revision: cur,
		Msg: fmt.Sprintf("Too large resource version: %d, current: %d", rev, cur)}
}

// expired is the error for a read at a compacted revision.
func (s *Store) expired(ctx context.Context, key string, rev uint64) *storage.Error {
	cur := s.revisionNow(ctx)
	return &storage.Error{Err: storage.ErrExpired, Key: key, Revision: cur,
		Msg: fmt.Sprintf("too old resource version: %d", rev)}
}

// revisionNow is etcd's revision for an error's detail, or 0 if etcd
// does not say within a second (ctx may be done already).
func (s *Store) revisionNow(ctx context.Context) uint64 {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	cur, _ := s.Revision(rctx)
	return cur
}

// readErr maps the error of a read at rev.
func (s *Store) readErr(ctx context.Context, key string, rev uint64, err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return s.expired(ctx, key, rev)
	case errors.Is(err, rpctypes.ErrFutureRev):
		return s.tooLarge(ctx, key, rev)
	}
	return s.failed(ctx, "read", key, err)
}
