package registry

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/request"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/internal/table"
	"github.com/kapi-dev/kapi/storage"
)

// namespaceResource is the built-in core/v1 namespaces resource of r,
// whose lifecycle is its Strategy's: a namespace is created Active with
// the "kubernetes" finalizer in its spec and a DNS label for a name;
// "default" may not be deleted; deleting one marks it Terminating (the
// spec's finalizer keeps it) and removes every namespaced object in it;
// once the last one is gone, the namespace controller's finalize write
// removes the spec's finalizer, and the namespace goes when it has no
// finalizer left.
func namespaceResource(r *Registry) *Resource {
	return &Resource{
		Version: "v1", Kind: "Namespace", Plural: "namespaces", Singular: "namespace",
		ShortNames: []string{"ns"}, Status: true,
		SelectableFields: []string{"status.phase"},
		Protobuf:         protobuf.Namespace,
		Schema:           sharedSchemas.namespace(),
		TypedZero:        Object{"spec": map[string]any{}, "status": map[string]any{}},
		// PUT namespaces/NAME/finalize changes spec.finalizers (the
		// namespace controller's write).
		UpdateSubresources: []string{"finalize"},
		SubresourceKinds:   map[string]SubresourceKind{"finalize": {Kind: "Namespace", Verbs: []string{"update"}}},
		Columns: []Column{
			{Name: "Status", Type: "string", JSONPath: ".status.phase", Description: "The status of the namespace"},
			{Name: "Age", Type: "date", DeclaredType: "string", JSONPath: ".metadata.creationTimestamp", Description: table.Created.Description},
		},
		Strategy: Strategy{
			// Kube's defaulting of a namespace (SetDefaults_Namespace):
			// the kubernetes.io/metadata.name label is its name, whatever
			// a write says; managedFields count it as the writer's.
			Default: func(_ context.Context, obj Object) error {
				setNameLabel(obj)
				// As kube decodes a typed Namespace: no finalizers is none
				// (omitempty), before managedFields see the write.
				if l, ok := obj.lookup("spec.finalizers"); ok {
					if l, _ := l.([]any); len(l) == 0 {
						delete(obj["spec"].(map[string]any), "finalizers")
					}
				}
				return nil
			},
			// A name made from generateName is not known to Default: the
			// label comes after, nobody's in managedFields (kube's
			// Canonicalize).
			Canonicalize: func(_ context.Context, obj Object) { setNameLabel(obj) },
			// The finalizers a create names are kept, and "kubernetes"
			// appended when missing (kube's PrepareForCreate).
			PrepareForCreate: func(_ context.Context, obj Object) error {
				fs, _ := obj.lookup("spec.finalizers")
				l, _ := fs.([]any)
				if !slices.Contains(specFinalizers(obj), finalizerKubernetes) {
					l = append(l, finalizerKubernetes)
				}
				obj.set("spec.finalizers", l)
				obj.set("status.phase", "Active")
				return nil
			},
			// The finalize subresource alone changes spec.finalizers (kube's
			// namespace and finalize strategies).
			PrepareForUpdate: func(ctx context.Context, obj, old Object) error {
				if info, ok := request.InfoFrom(ctx); ok && info.Resource == "namespaces" && info.Subresource == "finalize" {
					return nil
				}
				if v, ok := old.lookup("spec.finalizers"); ok {
					obj.set("spec.finalizers", deepCopy(v))
				} else if spec, ok := obj["spec"].(map[string]any); ok {
					delete(spec, "finalizers")
				}
				return nil
			},
			ValidateName:       func(_ context.Context, name string) []string { return validation.IsDNS1123Label(name) },
			NoDeleteCollection: true,
			ValidateCreate:     func(_ context.Context, obj Object) []FieldError { return validateSpecFinalizers(obj) },
			ValidateUpdate: func(ctx context.Context, obj, _ Object) []FieldError {
				errs := validateSpecFinalizers(obj)
				if info, ok := request.InfoFrom(ctx); ok && info.Subresource == "status" {
					errs = append(errs, validatePhase(obj)...)
				}
				return errs
			},
			ValidateDelete: func(_ context.Context, obj Object) error {
				if obj.Name() == "default" {
					return newStatus(403, "Forbidden", `namespaces "default" is forbidden: this namespace may not be deleted`,
						&StatusDetails{Name: "default", Kind: "namespaces"})
				}
				return nil
			},
			Finalizers: func(_ context.Context, obj Object) []string { return specFinalizers(obj) },
			PrepareForDelete: func(_ context.Context, obj Object) error {
				obj.set("status.phase", "Terminating")
				return nil
			},
			AfterDelete: func(ctx context.Context, obj Object, gone bool) {
				if !gone {
					r.emptyNamespace(ctx, obj.Name())
				}
			},
		},
	}
}

// validateSpecFinalizers is kube's check of a namespace's spec.finalizers:
// qualified names, or kube's own.
func validateSpecFinalizers(obj Object) []FieldError {
	var errs []FieldError
	for _, f := range specFinalizers(obj) {
		for _, msg := range validation.IsQualifiedName(f) {
			errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: "spec.finalizers", Value: f, Detail: msg})
		}
		if !strings.Contains(f, "/") && f != finalizerKubernetes && f != "orphan" && f != "foregroundDeletion" {
			errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: "spec.finalizers", Value: f, Detail: "name is neither a standard finalizer name nor is it fully qualified"})
		}
	}
	return errs
}

// validatePhase is kube's check of a namespace status write: Active
// until deletion, Terminating after.
func validatePhase(obj Object) []FieldError {
	phase, _ := obj.lookup("status.phase")
	if !obj.deleting() {
		if phase != "Active" {
			return []FieldError{{Type: validation.TypeInvalid, Field: "status.Phase", Value: phase, Detail: "may only be 'Active' if `deletionTimestamp` is empty"}}
		}
	} else if phase != "Terminating" {
		return []FieldError{{Type: validation.TypeInvalid, Field: "status.Phase", Value: phase, Detail: "may only be 'Terminating' if `deletionTimestamp` is not empty"}}
	}
	return nil
}

// setNameLabel sets a named namespace's kubernetes.io/metadata.name label
// to its name.
func setNameLabel(obj Object) {
	name := obj.Name()
	if name == "" {
		return
	}
	labels, _ := obj.Meta()["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		obj.Meta()["labels"] = labels
	}
	labels[labelMetadataName] = name
}

// labelMetadataName is the label every namespace has, its name.
const labelMetadataName = "kubernetes.io/metadata.name"

// finalizerKubernetes is the spec finalizer of a namespace that its
// controller removes once the namespace is empty.
const finalizerKubernetes = "kubernetes"

// specFinalizers is a namespace's spec.finalizers.
func specFinalizers(obj Object) []string {
	v, _ := obj.lookup("spec.finalizers")
	return stringList(v)
}

func (r *Registry) ensureDefaultNamespace() error {
	ctx := request.WithUser(context.Background(), apiserverUser)
	obj := Object{"metadata": map[string]any{"name": "default"}}
	_, err := r.create(ctx, r.ns, "", obj, writeOptions{})
	if err != nil && !storage.IsExists(err) {
		return err
	}
	return nil
}

// emptyNamespace deletes every namespaced object in ns, as the namespace
// controller (objects with finalizers get deletionTimestamp and go when
// their finalizers do), then finalizes the namespace if nothing is left.
func (r *Registry) emptyNamespace(ctx context.Context, ns string) {
	ctx = request.WithUser(ctx, namespaceControllerUser)
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
			if _, _, err := r.delete(ctx, res, ns, name, deleteOptions{writeOptions: writeOptions{manager: controllerManager}, propagation: PropagationBackground, emptying: true}); err != nil && !storage.IsNotFound(err) {
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

// finalizeNamespace is the namespace controller's finalize write
// (namespaces/NAME/finalize): once a terminating namespace is empty, its
// spec's "kubernetes" finalizer goes, and with its last finalizer the
// namespace (the pipeline's update deletes an object being deleted that
// has none left).
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
	ctx = request.WithUser(ctx, namespaceControllerUser)
	ctx = request.WithInfo(ctx, &request.Info{IsResourceRequest: true, Verb: "update", APIPrefix: "api", APIVersion: "v1",
		Resource: "namespaces", Name: ns, Subresource: "finalize", Path: "/api/v1/namespaces/" + ns + "/finalize", Parts: []string{"namespaces", ns, "finalize"}})
	_, _, err := r.commit(ctx, &writeRequest{res: r.ns, op: admission.Update, name: ns, sub: "finalize",
		o: writeOptions{manager: controllerManager}, options: "UpdateOptions",
		object: func(old Object, _ storage.Object) (Object, error) {
			before := specFinalizers(old)
			after := slices.DeleteFunc(slices.Clone(before), func(f string) bool { return f == finalizerKubernetes })
			if !old.deleting() || len(after) == len(before) {
				return nil, errUnchanged
			}
			next := old.deepCopy()
			l := make([]any, len(after))
			for i, f := range after {
				l[i] = f
			}
			next.set("spec.finalizers", l)
			return next, nil
		}})
	if err != nil && !storage.IsNotFound(err) && !errors.Is(err, errUnchanged) {
		r.log.Error("finalizing namespace", "namespace", ns, "err", err)
	}
}
