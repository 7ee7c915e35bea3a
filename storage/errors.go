package storage

import "errors"

// Sentinels for errors.Is. Every error a backend returns wraps one of them
// in an *Error.
var (
	ErrNotFound = errors.New("storage: not found")
	ErrExists   = errors.New("storage: already exists")
	ErrConflict = errors.New("storage: conflict")
	// ErrExpired: the revision or continue token asked for was compacted.
	ErrExpired = errors.New("storage: resource version expired")
	// ErrTooLarge: the revision asked for is newer than the store's, even
	// after a bounded wait.
	ErrTooLarge = errors.New("storage: too large resource version")
	// ErrInvalid: the request itself is malformed (bad key or token).
	ErrInvalid = errors.New("storage: invalid request")
	// ErrUnavailable: the backend could not be reached or did not answer
	// in time, and nothing was changed: retrying is safe.
	ErrUnavailable = errors.New("storage: unavailable")
	// ErrTimeout: a write was sent but the backend did not confirm it in
	// time; it may or may not have happened.
	ErrTimeout = errors.New("storage: timeout")
)

// Error is a storage error with the key it concerns.
type Error struct {
	Err error  // one of the sentinels
	Key string // the key or prefix concerned
	Msg string // a readable detail, safe to show to clients
	// Continue is set on ErrExpired for an expired continue token: a token
	// that goes on with the rest of the list at the latest revision
	// (an inconsistent continuation, as Kubernetes offers).
	Continue string
	// Revision is the store's current revision, where it helps the client.
	Revision uint64
}

func (e *Error) Error() string {
	if e.Msg != "" {
		return e.Err.Error() + ": " + e.Key + ": " + e.Msg
	}
	return e.Err.Error() + ": " + e.Key
}

func (e *Error) Unwrap() error { return e.Err }

// NewError returns an *Error wrapping sentinel for key.
func NewError(sentinel error, key, msg string) *Error {
	return &Error{Err: sentinel, Key: key, Msg: msg}
}

// IsNotFound and friends are shorthands for errors.Is.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
func IsExists(err error) bool   { return errors.Is(err, ErrExists) }
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }
