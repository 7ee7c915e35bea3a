package request

import (
	"context"
	"sync"
)

// Record is what the handler serving a request found out about it, for
// the middleware outside that handler (a server's request log and
// metrics): the registry fills it in when the request's context carries
// one (WithRecord). It is safe for concurrent use: a handler that
// outlives its request's deadline may still write it while the
// middleware reads it.
type Record struct {
	mu   sync.Mutex
	user *User
	err  error
}

type recordKey struct{}

// WithRecord returns ctx carrying rec.
func WithRecord(ctx context.Context, rec *Record) context.Context {
	return context.WithValue(ctx, recordKey{}, rec)
}

// RecordFrom returns the Record in ctx, or nil.
func RecordFrom(ctx context.Context) *Record {
	rec, _ := ctx.Value(recordKey{}).(*Record)
	return rec
}

// SetUser records who the authenticator found. It does nothing on a nil
// Record, so a handler calls it whether or not a Record was asked for.
func (rec *Record) SetUser(u *User) {
	if rec != nil {
		rec.mu.Lock()
		rec.user = u
		rec.mu.Unlock()
	}
}

// Fail records err, the error the response was made from, with its
// cause. It does nothing on a nil Record.
func (rec *Record) Fail(err error) {
	if rec != nil {
		rec.mu.Lock()
		rec.err = err
		rec.mu.Unlock()
	}
}

// User is who the authenticator found; nil until then (or when the
// request was refused before).
func (rec *Record) User() *User {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.user
}

// Err is the error the handler answered with, or nil.
func (rec *Record) Err() error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.err
}
