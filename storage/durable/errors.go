package durable

import (
	"errors"
	"fmt"
)

// Sentinels of the errors Open and Restore return, for errors.Is.
var (
	// ErrNotWritable: the data directory or its file cannot be written
	// (read-only, not permitted, or full).
	ErrNotWritable = errors.New("durable: data directory not writable")
	// ErrCorrupt: the file is damaged (truncated, overwritten) or is not
	// a kapi database. Nothing was read from it: restore a backup.
	ErrCorrupt = errors.New("durable: data file damaged")
	// ErrLocked: another process (or another Store of this one) has the
	// file open.
	ErrLocked = errors.New("durable: data file in use by another store")
)

// OpenError is the error of Open and Restore: what went wrong (one of
// the sentinels above) with which path, and the underlying cause.
type OpenError struct {
	Path  string
	Err   error // ErrNotWritable, ErrCorrupt, ErrLocked or ErrDataExists
	Cause error
}

func (e *OpenError) Error() string {
	return fmt.Sprintf("%v: %s: %v", e.Err, e.Path, e.Cause)
}

// Unwrap gives both the sentinel and the cause to errors.Is and As.
func (e *OpenError) Unwrap() []error { return []error{e.Err, e.Cause} }
