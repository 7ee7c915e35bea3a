package registry

import (
	"bytes"
	"context"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/admission/webhook"
	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage"
)

// The write pipeline. Every write — create, update, each patch type,
// apply, status, scale, delete, deletecollection, and the writes kapi
// makes itself (the garbage collector's, namespace emptying and
// finalization) — goes through commit, and through the same stages in
// the same order:
//
//	mutating admission → strategy defaults → managedFields → strategy
//	prepare → validation (schema, CEL, strategy) → validating admission →
//	storage (unless dry run)
//
// managedFields record the object as the writer sent it, defaulted, not
// what the strategy's Prepare hooks then set (kube's field manager runs
// in the handler, before its strategies' PrepareForCreate and
// PrepareForUpdate), nor what mutating admission changed (kube's runs
// before admission too): with admission, they are computed on the object
// as it was before admission (sentForTracking) and set on the admitted
// one.
//
//	POST {metadata: {name: a}, data: {k: v}}
//	  → a mutating webhook adds annotation defaulted-by
//	  → managedFields own f:data.f:k, not f:metadata.f:annotations
//
// A verb's own work is to make the request object: decode and normalise
// the body (create, update), apply a patch or an apply configuration to
// the stored object (patch, apply, scale; once per storage attempt), or
// edit the stored object (the garbage collector, namespace finalization).
// A DELETE has no new object: its stages are admission with the stored
// object as OldObject, the strategy's ValidateDelete, and, when the object
// stays to be finalized, PrepareForDelete (commitDelete, delete.go).
// Errors keep their type: where the pipeline gives one its Status (the
// in-process Client returns *StatusError), the StatusError unwraps to the
// error it was made from, so errors.Is and errors.As still see a storage
// error or an *admission.Error.

// The users kapi's own writes are made as: kube's (the loopback client's
// that creates the default namespace, the controllers').
var (
	apiserverUser = &request.User{Name: "system:apiserver", Groups: []string{request.SystemPrivileged, request.AllAuthenticated}}
	gcUser        = &request.User{Name: "system:serviceaccount:kube-system:generic-garbage-collector",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", request.AllAuthenticated}}
	namespaceControllerUser = &request.User{Name: "system:serviceaccount:kube-system:namespace-controller",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", request.AllAuthenticated}}
)

// writeRequest is one write through the pipeline.
type writeRequest struct {
	res           *Resource
	op            admission.Operation // Create, Update or Delete
	ns, name, sub string
	o             writeOptions
	// options is the kind of the write's options for admission:
	// "CreateOptions", "UpdateOptions" or "PatchOptions".
	options string
	// obj is a create's object, when object is nil.
	obj Object
	// view, when set, is how admission sees the write's objects (a
	// /scale write's: Scales).
	view *admissionView
	// object makes the request's object: once on create (old is nil),
	// from the stored state in each attempt of an update. It is the
	// pipeline's to change.
	object func(old Object, cur storage.Object) (Object, error)
	// del are a delete's options (o is then unused).
	del deleteOptions
	// written is the object a create stored, set by commitCreate when
	// the store kept the bytes it was given and no string lost invalid
	// UTF-8 to them (jsonobj.MayHaveReplaced): what the stored Value
	// decodes to, but for its resourceVersion. The response is encoded
	// from it (seedEnveloped), not decoded again from the stored bytes.
	written Object
}

// commit runs a write through the pipeline: the one function every write
// goes through. gone reports whether a delete removed the object (false
// when it only marked it for deletion, and for creates and updates).
func (r *Registry) commit(ctx context.Context, w *writeRequest) (out storage.Object, gone bool, err error) {
	switch w.op {
	case admission.Create:
		out, err = r.commitCreate(ctx, w)
	case admission.Delete:
		out, gone, err = r.commitDelete(ctx, w)
	default:
		out, err = r.commitUpdate(ctx, w)
	}
	if after := w.res.Strategy.AfterWrite; after != nil && err == nil && w.op != admission.Delete && !w.o.dryRun {
		if obj, derr := decodeStored(out.Value, out.Revision); derr == nil {
			after(ctx, obj, out.Revision)
		}
	}
	return out, gone, err
}

// commitObject is commit for a create or update.
func (r *Registry) commitObject(ctx context.Context, w *writeRequest) (storage.Object, error) {
	out, _, err := r.commit(ctx, w)
	return out, err
}

func (r *Registry) commitUpdate(ctx context.Context, req *writeRequest) (storage.Object, error) {
	w := *req // the attempts' closure keeps its own copy: req stays on the caller's stack
	return r.write(ctx, w.res, w.ns, w.name, w.o, func(old Object, cur storage.Object) (Object, error) {
		obj, err := w.object(old, cur)
		if err != nil {
			return nil, err
		}
		a := r.attributes(ctx, &w, obj, old)
		sent := r.sentForTracking(a, w.o.applied)
		if err := r.admit(ctx, a); err != nil {
			return nil, err
		}
		switch {
		case a != nil && w.view != nil:
			if obj, err = w.view.back(obj, a.Object); err != nil {
				return nil, err
			}
		case a != nil:
			obj = Object(a.Object)
		}
		var track func(Object) (Object, error)
		if !w.o.applied {
			track = func(obj Object) (Object, error) { return r.trackSent(ctx, w.res, old, obj, sent, w.o.manager, w.sub) }
		}
		next, err := r.prepareUpdate(ctx, w.res, obj, old, w.sub, track)
		if err != nil {
			return nil, err
		}
		if a != nil {
			a.Object = next
			if w.view != nil {
				a.Object = w.view.of(next)
			}
		}
		return next, r.validate(ctx, a)
	})
}

func (r *Registry) commitCreate(ctx context.Context, w *writeRequest) (storage.Object, error) {
	res, obj := w.res, w.obj
	if w.object != nil {
		var err error
		if obj, err = w.object(nil, storage.Object{}); err != nil {
			return storage.Object{}, err
		}
	}
	a := r.attributes(ctx, w, obj, nil)
	sent := r.sentForTracking(a, w.o.applied)
	if err := r.admit(ctx, a); err != nil {
		return storage.Object{}, toStatus(err, res, obj.Name())
	}
	if a != nil {
		obj = Object(a.Object)
	}
	generate, _ := obj.Meta()["generateName"].(string)
	generated := obj.Name() == "" && generate != ""
	base := obj
	for attempt := 0; ; attempt++ {
		var name string
		if generated {
			// Each attempt prepares the object as it was, nameless.
			obj, name = base.deepCopy(), validation.GenerateName(generate)
		}
		var track func(Object) (Object, error)
		if !w.o.applied {
			track = func(obj Object) (Object, error) { return r.trackSent(ctx, res, nil, obj, sent, w.o.manager, "") }
		}
		// A protobuf body's object is representable unless mutating
		// admission may have changed it: what the server adds
		// (defaults, managedFields, the strategy's fields) is of the
		// message's types.
		representable := w.o.fromProtobuf && !r.mutates()
		prepared, err := r.prepareCreate(ctx, res, obj, track, name, representable)
		if err != nil {
			return storage.Object{}, err
		}
		obj = prepared
		if a != nil {
			a.Object, a.Name = obj, obj.Name()
		}
		if err := r.validate(ctx, a); err != nil {
			return storage.Object{}, toStatus(err, res, obj.Name())
		}
		so, err := toStorage(res, obj)
		if err != nil {
			return so, err
		}
		if w.o.dryRun {
			if _, err := r.storeFor(res).Get(ctx, so.Key, storage.GetOptions{}); err == nil {
				return so, toStatus(storage.NewError(storage.ErrExists, so.Key, ""), res, obj.Name())
			}
			return so, nil
		}
		out, err := r.storeFor(res).Create(ctx, so)
		if storage.IsExists(err) && generated && attempt < generateNameRetries {
			continue
		}
		if err != nil {
			return out, toStatus(err, res, obj.Name())
		}
		if bytes.Equal(out.Value, so.Value) && !jsonobj.MayHaveReplaced(so.Value) {
			w.written = obj
		}
		return out, nil
	}
}

// attributes are the admission attributes of a create or update of obj,
// or nil when the registry has no admission hook (the chain then costs
// nothing).
func (r *Registry) attributes(ctx context.Context, w *writeRequest, obj, old Object) *admission.Attributes {
	if r.noAdmission() {
		return nil
	}
	// A patch's admission sees UpdateOptions (CreateOptions when an apply
	// creates), without force, as kube's patchToUpdateOptions makes them.
	kind := w.options
	if kind == "PatchOptions" {
		kind = "UpdateOptions"
		if w.op == admission.Create {
			kind = "CreateOptions"
		}
	}
	opts := map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": kind}
	if w.o.dryRun {
		opts["dryRun"] = []any{"All"}
	}
	if w.o.manager != "" && !w.o.managerDefaulted {
		opts["fieldManager"] = w.o.manager
	}
	if w.o.fieldValidation != "" {
		opts["fieldValidation"] = w.o.fieldValidation
	}
	a := r.newAttributes(ctx, w.res, w.op, w.ns, w.name, w.sub)
	a.Object, a.DryRun, a.Options = obj, w.o.dryRun, opts
	if old != nil {
		a.OldObject = old
	}
	if v := w.view; v != nil {
		a.KindGroup, a.KindVersion, a.Kind = v.group, v.version, v.kind
		a.Object = v.of(obj)
		if old != nil {
			a.OldObject = v.of(old)
		}
	}
	return a
}

// admissionView is how admission sees the objects of a write whose
// request is not the stored kind (kube's admission of a subresource with
// a kind of its own):
//
//	PUT …/widgets/w/scale {spec: {replicas: 4}}
//	  → admission sees autoscaling/v1 Scales, old and new
//	  → a webhook's patch of the Scale's spec.replicas is written to the
//	    widget's replicas path (back)
type admissionView struct {
	group, version, kind string
	// of is obj as admission sees it.
	of func(obj Object) map[string]any
	// back is obj with what admission changed in viewed.
	back func(obj Object, viewed map[string]any) (Object, error)
}

func (r *Registry) newAttributes(ctx context.Context, res *Resource, op admission.Operation, ns, name, sub string) *admission.Attributes {
	u, _ := request.UserFrom(ctx)
	if !res.Namespaced {
		ns = ""
	}
	return &admission.Attributes{User: u, Operation: op, Group: res.Group, Version: res.Version, Kind: res.Kind,
		Resource: res.Plural, Subresource: sub, Namespace: ns, Name: name}
}

// admit runs the mutating hooks, then the mutating webhooks (a nil:
// none), and sends their warnings. When a webhook changed the object,
// both run again, as kube reinvokes its mutating admission plugins: the
// hooks all, the webhooks those with reinvocationPolicy IfNeeded
// (webhook.Reinvocation).
func (r *Registry) admit(ctx context.Context, a *admission.Attributes) error {
	if a == nil {
		return nil
	}
	var rounds webhook.Reinvocation
	err := r.opts.Admission.Admit(ctx, a)
	if err == nil {
		err = r.webhooks.AdmitRound(ctx, a, &rounds)
	}
	if err == nil && rounds.Again() { // a webhook changed the object: kube's second round
		if err = r.opts.Admission.Admit(ctx, a); err == nil {
			err = r.webhooks.AdmitRound(ctx, a, &rounds)
		}
	}
	warnAll(ctx, a)
	return err
}

// noAdmission reports whether there is no admission hook and no webhook:
// writes then build no admission.Attributes.
func (r *Registry) noAdmission() bool {
	return r.opts.Admission.Empty() && r.webhooks.Empty()
}

// mutates reports whether a mutating hook or webhook may change a write's
// object.
func (r *Registry) mutates() bool {
	return len(r.opts.Admission.Mutating) > 0 || r.webhooks.Mutates()
}

// validate runs the validating hooks, then the validating webhooks (a
// nil: none), and sends their warnings.
func (r *Registry) validate(ctx context.Context, a *admission.Attributes) error {
	if a == nil {
		return nil
	}
	err := r.opts.Admission.Validate(ctx, a)
	if err == nil {
		err = r.webhooks.Validate(ctx, a)
	}
	warnAll(ctx, a)
	return err
}

// warnAll sends a's warnings (Warn sends each once).
func warnAll(ctx context.Context, a *admission.Attributes) {
	for _, w := range a.Warnings() {
		Warn(ctx, w)
	}
}

// sentForTracking is a copy of the request's object before admission, for
// its managedFields (see the pipeline's doc); nil without a mutating hook
// or webhook, or for an apply, whose field manager has tracked it
// already.
func (r *Registry) sentForTracking(a *admission.Attributes, applied bool) Object {
	if a == nil || applied || a.Object == nil || !r.mutates() {
		return nil
	}
	return Object(a.Object).deepCopy()
}

// trackSent is r.track of obj, a prepared object, with managedFields
// computed on sent (the object before admission; nil: obj itself) as
// prepareCreate and prepareUpdate prepare it for tracking: its status
// the old one's (a status write: the old object with sent's status), and
// defaulted.
func (r *Registry) trackSent(ctx context.Context, res *Resource, old, obj, sent Object, manager, sub string) (Object, error) {
	if sent == nil {
		return r.track(ctx, res, old, obj, manager, sub)
	}
	switch {
	case res.writesStatus(sub) && old != nil:
		next := old.deepCopy()
		next["status"] = sent["status"]
		if _, ok := sent["status"]; !ok {
			delete(next, "status")
		}
		if md, ok := sent["metadata"].(map[string]any); ok && res.Strategy.StatusWritesMetadata {
			next["metadata"] = md
		}
		sent = next
	case res.Status && old != nil:
		sent["status"] = deepCopy(old["status"])
		if _, ok := old["status"]; !ok {
			delete(sent, "status")
		}
	case res.Status:
		delete(sent, "status")
	}
	if res.Strategy.Default != nil {
		if err := res.Strategy.Default(ctx, sent); err != nil {
			return nil, err
		}
	}
	tracked, err := r.track(ctx, res, old, sent, manager, sub)
	if err != nil {
		return nil, err
	}
	if mf, ok := tracked.Meta()["managedFields"]; ok {
		obj.Meta()["managedFields"] = mf
	} else {
		delete(obj.Meta(), "managedFields")
	}
	return obj, nil
}
