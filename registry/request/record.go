package request

import "context"

// Record is what the handler serving a request found out about it, for
// the middleware outside that handler (a server's request log and
// metrics): the registry fills it in when the request's context carries
// one (WithRecord). Only the goroutine serving the request writes it; read
// it once the handler has returned.
type Record struct {
	// User is who the authenticator found; nil until then (or when the
	// request was refused before).
	User *User
	// Err is the error the response was made from, with its cause, when
	// the handler answered with an error.
	Err error
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

// Fail records err as the request's error; it does nothing on a nil
// Record, so a handler calls it whether or not a Record was asked for.
func (rec *Record) Fail(err error) {
	if rec != nil {
		rec.Err = err
	}
}
