package registry

import (
	"context"
	"errors"
	"strings"

	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/internal/gc"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage"
)

// The built-in garbage collector of ownerReferences (DEL-3) is package
// gc; the registry gives it its resources, and its deletes and writes go
// through the registry's own (gcRegistry).

// controllerManager is the field manager of the writes of kapi's
// controllers (the garbage collector, the namespace controller), as
// kube's.
const controllerManager = "kube-controller-manager"

func (r *Registry) startGC() *gc.Collector {
	return gc.Start(gcRegistry{r}, r.store, r.log)
}

// Close stops the registry's background work (the garbage collector, the
// RBAC feeds) and waits for it to end. The registry still serves requests
// afterwards.
func (r *Registry) Close() error {
	if r.gc != nil {
		r.gc.Close()
	}
	r.stopRBAC()
	r.crds.close()
	r.webhooks.Close()
	return nil
}

// gcRegistry is the registry as the collector sees it.
type gcRegistry struct{ r *Registry }

// gcResource is a resource as the collector sees it.
type gcResource struct{ res *Resource }

func (g gcResource) Prefix() string             { return g.res.keyPrefix() }
func (g gcResource) Key(ns, name string) string { return g.res.objectKey(ns, name) }
func (g gcResource) Namespaced() bool           { return g.res.Namespaced }
func (g gcRegistry) Decode(o storage.Object) (map[string]any, error) {
	return decodeStored(o.Value, o.Revision)
}

func (g gcRegistry) Resources() []gc.Resource {
	all := g.r.all()
	out := make([]gc.Resource, len(all))
	for i, res := range all {
		out[i] = gcResource{res}
	}
	return out
}

func (g gcRegistry) Resource(apiVersion, kind string) gc.Resource {
	if res := g.r.resourceForKind(apiVersion, kind); res != nil {
		return gcResource{res}
	}
	return nil
}

// Delete and Update are the pipeline's, as the garbage collector's user.
func (g gcRegistry) Delete(ctx context.Context, res gc.Resource, ns, name string, o gc.DeleteOptions) error {
	ctx = request.WithUser(ctx, gcUser)
	do := deleteOptions{writeOptions: writeOptions{manager: controllerManager}, preconditions: o.Preconditions,
		// kube's collector: the dependent's finalizers decide, else
		// Background (never the kind's OrphanByDefault).
		backgroundByDefault: true}
	if o.Foreground {
		do.propagation = PropagationForeground
	}
	_, _, err := g.r.delete(ctx, res.(gcResource).res, ns, name, do)
	return ignoreGone(err)
}

func (g gcRegistry) Update(ctx context.Context, res gc.Resource, ns, name string, edit func(obj map[string]any) bool) error {
	return g.r.edit(ctx, res.(gcResource).res, ns, name, gcUser, edit)
}

// edit is a write kapi makes itself, as user: edit changes a copy of the
// stored object, or reports that it has nothing to change. A missing
// object is not an error.
func (r *Registry) edit(ctx context.Context, res *Resource, ns, name string, user *request.User, edit func(obj map[string]any) bool) error {
	ctx = request.WithUser(ctx, user)
	_, _, err := r.commit(ctx, &writeRequest{res: res, op: admission.Update, ns: ns, name: name,
		o: writeOptions{manager: controllerManager}, options: "PatchOptions",
		object: func(old Object, _ storage.Object) (Object, error) {
			next := old.deepCopy()
			if !edit(next) {
				return nil, errUnchanged
			}
			return next, nil
		}})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return ignoreGone(err)
}

// resourceForKind finds the served resource of an apiVersion and kind, or
// of the kind in another version of the same group.
func (r *Registry) resourceForKind(apiVersion, kind string) *Resource {
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	var other *Resource
	for _, res := range r.all() {
		if res.Kind != kind {
			continue
		}
		if res.GroupVersion() == apiVersion {
			return res
		}
		if res.Group == group {
			other = res
		}
	}
	return other
}

// ignoreGone drops the errors of an object that went or was replaced
// meanwhile: the next scan sees the new state.
func ignoreGone(err error) error {
	if storage.IsNotFound(err) || storage.IsConflict(err) {
		return nil
	}
	return err
}
