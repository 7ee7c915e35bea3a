package storage

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/watch"
)

// Object is one stored state of a key: encoded bytes plus what filters and
// preconditions need. Values are immutable once stored: callers must not
// modify Value, Labels or Fields of an Object they passed in or got back.
type Object struct {
	Key      string
	Value    []byte            // the encoded object, without resourceVersion
	Revision uint64            // revision of the write that produced this state (Delete: the delete's); ignored on write
	UID      string            // checked by Preconditions
	Labels   map[string]string // matched by label selectors
	Fields   map[string]string // matched by field selectors, e.g. "metadata.name"
	// Memo is shared by every reader of this state (see Memo); the store
	// sets it on write, ignoring the caller's. Nil when the backend keeps
	// none.
	Memo *Memo
}

// Preconditions must hold on the current state for a write to happen;
// otherwise the write fails with ErrConflict. Empty fields are not checked.
type Preconditions struct {
	UID      string
	Revision uint64
}

// Check tests p on cur, the current state of key: nil, or an *Error
// wrapping ErrConflict with kube-apiserver's message.
func (p Preconditions) Check(key string, cur Object) error {
	if p.UID != "" && p.UID != cur.UID {
		return &Error{Err: ErrConflict, Key: key, Revision: cur.Revision,
			Msg: fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", p.UID, cur.UID)}
	}
	if p.Revision != 0 && p.Revision != cur.Revision {
		return &Error{Err: ErrConflict, Key: key, Revision: cur.Revision,
			Msg: fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", p.Revision, cur.Revision)}
	}
	return nil
}

// GetOptions choose the revision a Get reads at.
type GetOptions struct {
	Match    rv.Match
	Revision uint64 // for NotOlderThan and Exact
}

// ListOptions choose the snapshot, page and filter of a List.
type ListOptions struct {
	Match     rv.Match
	Revision  uint64    // for NotOlderThan and Exact
	Limit     int64     // page size; 0 is everything
	Continue  string    // token from a previous page; wins over Match
	Predicate Predicate // zero value matches everything
}

// ListResult is one page.
type ListResult struct {
	Items    []Object
	Revision uint64 // the snapshot the page was read at
	Continue string // empty on the last page
	// Remaining counts the items after this page; set only when more
	// items remain and the predicate is empty.
	Remaining *int64
}

// UpdateFunc computes the next state from the current one. It may be
// called several times when writers race; it must not have side effects
// that cannot be repeated. Returning an error aborts the update with it.
// The returned Object's Key and Revision are ignored.
type UpdateFunc func(cur Object) (Object, error)

// UpdateOptions tune GuaranteedUpdate.
type UpdateOptions struct {
	Preconditions Preconditions
}

// DeleteOptions tune Delete.
type DeleteOptions struct {
	Preconditions Preconditions
	// Validate, when set, sees the current state and may refuse the delete
	// by returning an error, which Delete returns unchanged. It may be
	// called more than once when writers race.
	Validate func(cur Object) error
}

// WatchOptions choose what a watch sees and where it starts.
type WatchOptions struct {
	// Recursive watches every key under the prefix; otherwise the key alone.
	Recursive bool
	// Revision: the stream carries every change after it. 0 starts at the
	// current revision.
	Revision uint64
	// Initial sends the state at the start revision as ADDED events first;
	// InitialEnd then sends a BOOKMARK with InitialEventsEnd set.
	Initial    bool
	InitialEnd bool
	// Bookmarks asks for periodic BOOKMARK events.
	Bookmarks bool
	Predicate Predicate
}

// Interface is a storage backend. All methods are safe for concurrent use.
//
// Errors are *Error values wrapping one of the sentinels below; test them
// with errors.Is.
type Interface interface {
	// Create stores obj under obj.Key; ErrExists if the key is taken.
	Create(ctx context.Context, obj Object) (Object, error)
	// Get reads one key; ErrNotFound if absent at the chosen revision.
	Get(ctx context.Context, key string, opts GetOptions) (Object, error)
	// List reads the keys under prefix, in key order.
	List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error)
	// GuaranteedUpdate reads key, calls fn, and compare-and-swaps the
	// result, retrying on conflict; ErrNotFound if the key is absent.
	GuaranteedUpdate(ctx context.Context, key string, opts UpdateOptions, fn UpdateFunc) (Object, error)
	// Delete removes key and returns its last state with Revision set to
	// the delete's revision (etcd3's rule, which kube answers a DELETE
	// with): deleting "a", written at 7, as the store's 9th write returns
	// a's value at Revision 9, and a watch sees DELETED at 9 carrying the
	// state of 7.
	Delete(ctx context.Context, key string, opts DeleteOptions) (Object, error)
	// Watch streams changes to key, or under it when opts.Recursive.
	// Events carry Object values; a Deleted event carries the last state.
	Watch(ctx context.Context, key string, opts WatchOptions) (watch.Interface, error)
	// Revision is the store's current revision.
	Revision(ctx context.Context) (uint64, error)
	// Compact forgets history before rev (etcd's rule): reads and watches
	// at revisions older than rev then fail with ErrExpired; rev itself
	// stays readable.
	Compact(ctx context.Context, rev uint64) error
}
