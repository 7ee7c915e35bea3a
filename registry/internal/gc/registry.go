package gc

import (
	"context"
	"log/slog"

	"github.com/kapi-dev/kapi/storage"
)

// Registry is what the collector needs of the registry whose objects it
// collects. Its writes are the registry's own (admission, managedFields,
// finalizers, watch events), as kube's collector goes through the API.
type Registry interface {
	// Resources lists the served resources.
	Resources() []Resource
	// Resource is the served resource of an ownerReference's apiVersion
	// and kind, or of the kind in another version of the same group; nil
	// if none.
	Resource(apiVersion, kind string) Resource
	// Decode decodes a stored object, resourceVersion set.
	Decode(o storage.Object) (map[string]any, error)
	// Delete deletes an object as the kube-controller-manager field
	// manager. An object that went or changed meanwhile (NotFound,
	// Conflict) is not an error.
	Delete(ctx context.Context, res Resource, namespace, name string, o DeleteOptions) error
	// Update writes the change edit makes to a deep copy of the current
	// object, as the kube-controller-manager field manager; edit returns
	// false for no change, and nothing is written. An object that went or
	// changed meanwhile (NotFound, Conflict) is not an error.
	Update(ctx context.Context, res Resource, namespace, name string, edit func(obj map[string]any) bool) error
}

// Resource is a served resource, as the collector sees it.
type Resource interface {
	// Prefix is the storage key prefix of all its objects.
	Prefix() string
	// Key is the storage key of an object.
	Key(namespace, name string) string
	// Namespaced reports whether its objects live in namespaces.
	Namespaced() bool
}

// DeleteOptions are the collector's deletes' options.
type DeleteOptions struct {
	Preconditions storage.Preconditions
	// Foreground deletes with propagationPolicy Foreground (the
	// dependent's own dependents go first); otherwise the registry's
	// default for the resource.
	Foreground bool
}

// The finalizers of orphan and foreground deletion.
const (
	finalizerOrphan     = "orphan"
	finalizerForeground = "foregroundDeletion"
)

// Start starts the collector of reg, whose objects are in store; log
// receives the failures it retries.
func Start(reg Registry, store storage.Interface, log *slog.Logger) *Collector {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Collector{reg: reg, store: store, log: log, cancel: cancel, done: make(chan struct{}), kick: make(chan struct{}, 1), graph: newGraph()}
	go c.run(ctx) // owned by c; ends with Close
	return c
}

// Close stops the collector and waits for it to end.
func (c *Collector) Close() {
	c.cancel()
	<-c.done
}

// object is a decoded object.
type object map[string]any

// meta is the object's metadata, added if missing.
func (o object) meta() map[string]any {
	m, ok := o["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		o["metadata"] = m
	}
	return m
}

func (o object) metaString(k string) string {
	m, _ := o["metadata"].(map[string]any)
	s, _ := m[k].(string)
	return s
}

func (o object) name() string      { return o.metaString("name") }
func (o object) namespace() string { return o.metaString("namespace") }
func (o object) uid() string       { return o.metaString("uid") }
func (o object) deleting() bool    { return o.metaString("deletionTimestamp") != "" }
