package compare

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ErrConflict is what Peer.Update returns when the object's
// resourceVersion is no longer current.
var ErrConflict = errors.New("compare: conflict")

// ErrUnsupported marks a scenario a peer cannot run.
var ErrUnsupported = errors.New("compare: unsupported")

// Peer is one store under test, as a Go caller sees it: objects go in and
// come out as *unstructured.Unstructured (decoded), whatever the store
// keeps inside. Methods are safe for concurrent use.
type Peer interface {
	// Create stores obj (a new name) and returns the stored object.
	Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// Get reads one object.
	Get(ctx context.Context, ns, name string) (*unstructured.Unstructured, error)
	// Update replaces the object if obj's resourceVersion is still the
	// current one, and fails with ErrConflict otherwise; a peer without
	// resourceVersions writes unconditionally.
	Update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// List reads one page of every namespace's objects.
	List(ctx context.Context, opts ListOptions) (Page, error)
	// Watch streams the changes after resourceVersion rv ("" when the
	// peer has no resourceVersions: from now).
	Watch(ctx context.Context, rv string) (Watcher, error)
	// Close releases the peer.
	Close()
}

// ListOptions select a page.
type ListOptions struct {
	LabelSelector string
	Limit         int64
	Continue      string
}

// Page is one page of a list.
type Page struct {
	Items           []unstructured.Unstructured
	ResourceVersion string
	Continue        string
}

// Watcher is one watch. Next blocks for the next change; ok is false once
// the watch has ended (by Stop, the context, or the store).
type Watcher interface {
	Next() (obj *unstructured.Unstructured, ok bool)
	Stop()
}

// PeerInfo names a peer and says how to start it.
type PeerInfo struct {
	Name string
	// What says what a row measures for this peer.
	What string
	// Start builds a fresh, empty peer; etcd is the shared embedded etcd
	// (nil for in-memory peers).
	Start func(ctx context.Context, etcd *Etcd) (Peer, error)
	// NeedsEtcd marks peers that run on the embedded etcd.
	NeedsEtcd bool
}
