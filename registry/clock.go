package registry

import (
	"context"
	"time"
)

// Now is the registry's clock (Options.Now) as a strategy reads it: the
// time, on the clock of the registry serving the request ctx belongs to,
// to stamp a status with (a condition's lastTransitionTime, a
// PersistentVolume's lastPhaseTransitionTime), as the registry stamps
// creationTimestamp, deletionTimestamp and managedFields. Outside a
// request of a registry (a hook called by other code), it is time.Now.
//
// The clock travels in the request's own state (what Warn also reads), put
// in its context once by ServeHTTP, so reading it allocates nothing; a
// Client's writes carry it in their context too. A registry built with
//
//	registry.Options{Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }}
//
// has its hooks' registry.Now(ctx) answer 2030-01-01T00:00:00Z.
func Now(ctx context.Context) time.Time {
	if w, _ := ctx.Value(warningsKey{}).(*warnings); w != nil && w.now != nil {
		return w.now()
	}
	if now, _ := ctx.Value(clockKey{}).(func() time.Time); now != nil {
		return now()
	}
	return time.Now()
}

// clockKey is the context key of the clock of a write made outside
// ServeHTTP (a Client's).
type clockKey struct{}

// withClock gives ctx the registry's clock, unless it has one (a Client
// called by a hook of a request keeps the request's).
func (r *Registry) withClock(ctx context.Context) context.Context {
	if w, _ := ctx.Value(warningsKey{}).(*warnings); w != nil && w.now != nil {
		return ctx
	}
	return context.WithValue(ctx, clockKey{}, r.opts.Now)
}
