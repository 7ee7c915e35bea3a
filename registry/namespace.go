package registry

import (
	"context"
	"errors"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/internal/table"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
)

// namespaceResource is the built-in core/v1 namespaces resource.
// A namespace is created Active with the "kubernetes" finalizer in its
// spec; deleting it marks it Terminating, removes every namespaced object
// in it, and removes the namespace once the last one is gone.
func namespaceResource() *Resource {
	return &Resource{
		Version: "v1", Kind: "Namespace", Plural: "namespaces", Singular: "namespace",
		ShortNames: []string{"ns"}, Status: true,
		SelectableFields: []string{"status.phase"},
		Protobuf:         protobuf.Namespace,
		Schema:           schema.Namespace(),
		Columns: []Column{
			{Name: "Status", Type: "string", JSONPath: ".status.phase", Description: "The status of the namespace"},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp", Description: table.Created.Description},
		},
		Strategy: Strategy{
			PrepareForCreate: func(_ context.Context, obj Object) {
				obj.set("spec.finalizers", []any{"kubernetes"})
				obj.set("status.phase", "Active")
			},
		},
	}
}

func (res *Resource) isNamespace() bool { return res.Group == "" && res.Plural == "namespaces" }

func (r *Registry) ensureDefaultNamespace() error {
	ctx := context.Background()
	obj := Object{"metadata": map[string]any{"name": "default"}}
	_, err := r.create(ctx, r.ns, "", obj, writeOptions{})
	if err != nil && ReasonOf(err) != "AlreadyExists" {
		return err
	}
	return nil
}

// emptyNamespace deletes every namespaced object in ns (objects with
// finalizers get deletionTimestamp and go when their finalizers do), then
// removes the namespace if nothing is left.
func (r *Registry) emptyNamespace(ctx context.Context, ns string) {
	for _, res := range r.all() {
		if !res.Namespaced {
			continue
		}
		list, err := r.store.List(ctx, res.collectionKey(ns), storage.ListOptions{})
		if err != nil {
			r.log.Error("emptying namespace", "namespace", ns, "resource", res.qualified(), "err", err)
			continue
		}
		for _, it := range list.Items {
			name := it.Key[len(res.collectionKey(ns)):]
			if _, _, err := r.delete(ctx, res, ns, name, deleteOptions{emptying: true}); err != nil && ReasonOf(err) != "NotFound" {
				r.log.Error("deleting in namespace", "namespace", ns, "key", it.Key, "err", err)
			}
		}
	}
	r.finalizeNamespace(ctx, ns)
}

// objectGone is called after an object of res in ns was removed: the last
// object of a terminating namespace lets the namespace go.
func (r *Registry) objectGone(ctx context.Context, res *Resource, ns string) {
	if !res.Namespaced || ns == "" {
		return
	}
	if terminating, err := r.namespaceTerminating(ctx, ns); err == nil && terminating {
		r.finalizeNamespace(ctx, ns)
	}
}

// namespaceTerminating reads a namespace's phase from its stored field
// attributes (status.phase is selectable), without decoding it. A missing
// namespace is storage.ErrNotFound.
func (r *Registry) namespaceTerminating(ctx context.Context, ns string) (bool, error) {
	cur, err := r.store.Get(ctx, r.ns.objectKey("", ns), storage.GetOptions{})
	if err != nil {
		return false, err
	}
	return cur.Fields["status.phase"] == "Terminating", nil
}

// finalizeNamespace removes a terminating namespace when it is empty.
func (r *Registry) finalizeNamespace(ctx context.Context, ns string) {
	for _, res := range r.all() {
		if !res.Namespaced {
			continue
		}
		list, err := r.store.List(ctx, res.collectionKey(ns), storage.ListOptions{Limit: 1})
		if err != nil || len(list.Items) > 0 {
			return
		}
	}
	_, err := r.store.Delete(ctx, r.ns.objectKey("", ns), storage.DeleteOptions{
		Validate: func(cur storage.Object) error {
			obj, err := decodeStored(cur.Value, cur.Revision)
			if err != nil || !obj.deleting() {
				return errNotTerminating
			}
			return nil
		},
	})
	if err != nil && !storage.IsNotFound(err) && !errors.Is(err, errNotTerminating) {
		r.log.Error("removing namespace", "namespace", ns, "err", err)
	}
}

var errNotTerminating = errors.New("registry: namespace is not terminating")
