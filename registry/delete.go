package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/internal/deleteopts"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

// Delete options as kube-apiserver reads them (endpoints/handlers/delete.go):
// a non-empty body is the whole of the options (the query is then not
// read); without one, the query parameters are.

// Propagation policies (meta/v1 DeletionPropagation).
const (
	PropagationOrphan     = "Orphan"
	PropagationBackground = "Background"
	PropagationForeground = "Foreground"
)

// The finalizers the garbage collector handles (meta/v1
// FinalizerOrphanDependents and FinalizerDeleteDependents).
const (
	FinalizerOrphan     = "orphan"
	FinalizerForeground = "foregroundDeletion"
)

// readDeleteOptionsBody reads a DELETE's body, in any format a DeleteOptions may
// come in; ok is false when there is none.
func (r *Registry) readDeleteOptionsBody(req *http.Request) (body deleteopts.Options, ok bool, err error) {
	f, err := bodyFormat(req, true)
	if err != nil {
		return body, false, err
	}
	b, err := r.readBody(req)
	if err != nil || len(b) == 0 {
		return body, false, err
	}
	if f != negotiate.JSON {
		m, err := decodeBody(f, protobuf.DeleteOptions, b)
		if err != nil {
			return body, false, errBadRequest("the DeleteOptions body is not valid %s: %v", f, err)
		}
		if b, err = json.Marshal(m); err != nil {
			return body, false, errBadRequest("the DeleteOptions body cannot be read: %v", err)
		}
	}
	body, err = deleteopts.Parse(b)
	if err != nil {
		return body, false, errBadRequest("%v", err)
	}
	return body, true, nil
}

// validateDeleteOptions is apimachinery's ValidateDeleteOptions (422).
func validateDeleteOptions(b deleteopts.Options) error {
	causes := deleteopts.Validate(b)
	errs := make([]StatusCause, len(causes))
	for i, c := range causes {
		errs[i] = StatusCause{Type: c.Type, Field: c.Field, Message: c.Message}
	}
	return deleteOptionsInvalid(errs)
}

// deleteOptionsInvalid is kube's 422 for invalid DeleteOptions (nil if
// causes is empty).
func deleteOptionsInvalid(causes []StatusCause) error {
	return errInvalidCauses(`DeleteOptions.meta.k8s.io ""`, &StatusDetails{Group: "meta.k8s.io", Kind: "DeleteOptions", Causes: causes})
}

// toDeleteOptions turns valid DeleteOptions into the verb's options.
func toDeleteOptions(b deleteopts.Options, manager string) (deleteOptions, error) {
	o := deleteOptions{writeOptions: writeOptions{dryRun: len(b.DryRun) > 0, manager: manager}}
	if b.PropagationPolicy != nil {
		o.propagation = *b.PropagationPolicy
	}
	o.orphanDependents = b.OrphanDependents
	o.gracePeriod = b.GracePeriodSeconds
	o.ignoreReadError = b.IgnoreStoreReadError != nil && *b.IgnoreStoreReadError
	if p := b.Preconditions; p != nil {
		o.precondUID, o.precondRV = p.UID, p.ResourceVersion
		if p.UID != nil {
			o.preconditions.UID = *p.UID
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != "" {
			// One that is not a revision ("abc") matches no object:
			// checkPreconditions, comparing strings as kube does, answers
			// kube's 409 before the store is asked.
			if v, err := rv.Parse(*p.ResourceVersion); err == nil {
				o.preconditions.Revision = v
			}
		}
	}
	return o, nil
}

// gcFinalizers is kube's deletionFinalizersForGarbageCollection: the
// finalizers obj gets when deleted with o, and whether they changed.
// Options win over the finalizers already there, which win over the
// kind's default (Strategy.OrphanByDefault; otherwise Background: no
// finalizer).
func gcFinalizers(obj Object, o deleteOptions) ([]string, bool) {
	old := obj.Finalizers()
	orphan, foreground := false, false
	switch {
	case o.orphanDependents != nil:
		orphan = *o.orphanDependents
	case o.propagation != "":
		orphan, foreground = o.propagation == PropagationOrphan, o.propagation == PropagationForeground
	default:
		orphan = o.orphanByDefault
		for _, f := range old {
			if f == FinalizerOrphan || f == FinalizerForeground {
				orphan, foreground = f == FinalizerOrphan, f == FinalizerForeground
				break
			}
		}
	}
	next := make([]string, 0, len(old)+1)
	for _, f := range old {
		if f != FinalizerOrphan && f != FinalizerForeground {
			next = append(next, f)
		}
	}
	if orphan {
		next = append(next, FinalizerOrphan)
	}
	if foreground {
		next = append(next, FinalizerForeground)
	}
	return next, !sameSet(old, next)
}

func sameSet(a, b []string) bool {
	in := func(s string, l []string) bool {
		for _, x := range l {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, s := range a {
		if !in(s, b) {
			return false
		}
	}
	for _, s := range b {
		if !in(s, a) {
			return false
		}
	}
	return true
}

// corruptError is kube's error for stored bytes that do not decode.
func corruptError(key string, err error) *StatusError {
	return errInternal(fmt.Errorf("StorageError: corrupt object, Code: 6, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %v", key, err))
}

// deleteCorrupt is kube's unsafe deletion of an object whose stored bytes
// do not decode (ignoreStoreReadErrorWithClusterBreakingPotential): no
// preconditions, hooks or finalizers; refused (409) for decodable objects.
func (r *Registry) deleteCorrupt(ctx context.Context, res *Resource, ns, name string, o deleteOptions) (storage.Object, error) {
	key := res.objectKey(ns, name)
	decodable := func(c storage.Object) error {
		if _, err := decodeStored(c.Value, c.Revision); err == nil {
			return errDecodable
		}
		return nil
	}
	cur, err := r.store.Get(ctx, key, storage.GetOptions{})
	if err == nil {
		err = decodable(cur)
	}
	if err == nil && !o.dryRun {
		cur, err = r.store.Delete(ctx, key, storage.DeleteOptions{Validate: decodable})
	}
	switch {
	case errors.Is(err, errDecodable):
		return cur, errConflict(res, name, fmt.Sprintf("StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage", key))
	case err != nil:
		return cur, toStatus(err, res, name)
	}
	if !o.dryRun {
		r.objectGone(ctx, res, ns)
	}
	return cur, nil
}

var errDecodable = errors.New("registry: object is decodable")

// deleteOptions are the options of a delete.
type deleteOptions struct {
	writeOptions
	preconditions storage.Preconditions
	// precondUID and precondRV are the preconditions as given: kube
	// compares even "" and "0", which preconditions cannot express.
	precondUID, precondRV *string
	// propagation is "" (the object's finalizers or the default decide),
	// or one of the Propagation constants.
	propagation string
	// orphanDependents is the deprecated form of propagation.
	orphanDependents *bool
	// gracePeriod is the gracePeriodSeconds asked for (nil: none), which
	// a kind with Strategy.GracePeriod reads.
	gracePeriod *int64
	// backgroundByDefault: with no propagation nor orphanDependents,
	// the object's finalizers decide, else Background, whatever the
	// kind's Strategy.OrphanByDefault (the garbage collector's deletes).
	backgroundByDefault bool
	// orphanByDefault is the kind's Strategy.OrphanByDefault unless
	// backgroundByDefault (set by delete).
	orphanByDefault bool
	// ignoreReadError removes an object whose stored bytes do not decode
	// (ignoreStoreReadErrorWithClusterBreakingPotential).
	ignoreReadError bool
	emptying        bool // called by emptyNamespace, which finalizes once at the end
	// collection: a deletecollection's, whose admission sees no name
	// (kube's admission attributes of a DELETE of a collection).
	collection bool
}

// errHasFinalizers makes Delete re-read: a finalizer appeared meanwhile.
var errHasFinalizers = errors.New("registry: object has finalizers")

// delete removes an object, or starts its deletion when it has
// finalizers, including those the propagation policy adds (orphan,
// foregroundDeletion) and the kind's own (Strategy.Finalizers): it then
// gets deletionTimestamp and stays until the update that removes its last
// finalizer. gone reports which happened. It is the pipeline's DELETE
// (pipeline.go, commitDelete): admission sees the stored object as
// OldObject, once per attempt (an attempt is repeated when a finalizer
// appears meanwhile).
func (r *Registry) delete(ctx context.Context, res *Resource, ns, name string, o deleteOptions) (obj storage.Object, gone bool, err error) {
	o.orphanByDefault = res.Strategy.OrphanByDefault && !o.backgroundByDefault
	return r.commit(ctx, &writeRequest{res: res, op: admission.Delete, ns: ns, name: name, del: o})
}

// commitDelete is the pipeline's DELETE.
func (r *Registry) commitDelete(ctx context.Context, w *writeRequest) (obj storage.Object, gone bool, err error) {
	res, ns, name, o := w.res, w.ns, w.name, w.del
	key := res.objectKey(ns, name)
	if o.ignoreReadError {
		if err := r.admitDelete(ctx, res, ns, name, nil, o); err != nil {
			return storage.Object{}, false, toStatus(err, res, name)
		}
		out, err := r.deleteCorrupt(ctx, res, ns, name, o)
		return out, err == nil, err
	}
	for {
		cur, err := r.storeFor(res).Get(ctx, key, storage.GetOptions{})
		if err != nil {
			return cur, false, toStatus(err, res, name)
		}
		old, err := decodeStored(cur.Value, cur.Revision)
		if err != nil {
			return cur, false, corruptError(key, err)
		}
		if err := checkPreconditions(res, name, o, cur); err != nil {
			return cur, false, err
		}
		if err := r.admitDelete(ctx, res, ns, name, old, o); err != nil {
			return cur, false, toStatus(err, res, name)
		}
		g := r.deletionGrace(ctx, res, old, o)
		if g.pending {
			return cur, false, nil
		}
		if g.graceful || r.finalizing(ctx, res, old, o) {
			out, now, err := r.markDeleting(ctx, res, ns, name, o)
			if err != nil || !now {
				return out, false, err
			}
			// a graceful delete with a period of 0: the marked state goes
			cur = out
			if o.preconditions.Revision != 0 {
				o.preconditions.Revision = out.Revision
			}
			if old, err = decodeStored(cur.Value, cur.Revision); err != nil {
				return cur, false, corruptError(key, err)
			}
		}
		if o.dryRun {
			return cur, true, nil
		}
		out, err := r.storeFor(res).Delete(ctx, key, storage.DeleteOptions{
			Preconditions: o.preconditions,
			Validate: func(c storage.Object) error {
				if c.Revision != cur.Revision {
					if x, err := decodeStored(c.Value, c.Revision); err == nil && (len(x.Finalizers()) > 0 || res.ownFinalizers(ctx, x)) {
						return errHasFinalizers
					}
				}
				return nil
			},
		})
		if errors.Is(err, errHasFinalizers) {
			continue
		}
		if err != nil {
			return out, false, toStatus(err, res, name)
		}
		if !o.emptying {
			r.objectGone(ctx, res, ns)
		}
		if res.Strategy.AfterDelete != nil {
			res.Strategy.AfterDelete(ctx, old, true)
		}
		return out, true, nil
	}
}

// admitDelete runs a delete's stages before storage: mutating admission,
// the strategy's ValidateDelete, validating admission. old is the stored
// object (nil when it cannot be decoded).
func (r *Registry) admitDelete(ctx context.Context, res *Resource, ns, name string, old Object, o deleteOptions) error {
	var a *admission.Attributes
	if !r.noAdmission() {
		an := name
		if o.collection {
			an = ""
		}
		a = r.newAttributes(ctx, res, admission.Delete, ns, an, "")
		a.DryRun, a.Options = o.dryRun, o.admissionOptions()
		if old != nil {
			a.OldObject = old
		}
	}
	if err := r.admit(ctx, a); err != nil {
		return err
	}
	if res.Strategy.ValidateDelete != nil && old != nil {
		if err := res.Strategy.ValidateDelete(ctx, old); err != nil {
			return err
		}
	}
	return r.validate(ctx, a)
}

// admissionOptions are o as the DeleteOptions admission hooks see.
func (o deleteOptions) admissionOptions() map[string]any {
	m := map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions"}
	if o.dryRun {
		m["dryRun"] = []any{"All"}
	}
	if o.propagation != "" {
		m["propagationPolicy"] = o.propagation
	}
	if o.orphanDependents != nil {
		m["orphanDependents"] = *o.orphanDependents
	}
	if o.precondUID != nil || o.precondRV != nil {
		p := map[string]any{}
		if o.precondUID != nil {
			p["uid"] = *o.precondUID
		}
		if o.precondRV != nil {
			p["resourceVersion"] = *o.precondRV
		}
		m["preconditions"] = p
	}
	return m
}

// finalizing reports whether deleting obj with o leaves it in place:
// it has finalizers, or the kind's own (Strategy.Finalizers).
func (r *Registry) finalizing(ctx context.Context, res *Resource, obj Object, o deleteOptions) bool {
	finalizers, _ := r.deletionFinalizers(obj, o)
	return len(finalizers) > 0 || res.ownFinalizers(ctx, obj)
}

// ownFinalizers reports whether obj has finalizers of its kind's own.
func (res *Resource) ownFinalizers(ctx context.Context, obj Object) bool {
	return res.Strategy.Finalizers != nil && len(res.Strategy.Finalizers(ctx, obj)) > 0
}

// deletionFinalizers are the finalizers obj has once deleted with o: the
// garbage collector's are added or removed as the options say (when it
// runs).
func (r *Registry) deletionFinalizers(obj Object, o deleteOptions) ([]string, bool) {
	if r.opts.DisableGarbageCollection {
		return obj.Finalizers(), false
	}
	return gcFinalizers(obj, o)
}

// warnOrphanByDefault sends the kind's OrphanWarning with a delete whose
// options name no propagation policy, as kube's Job REST does.
func warnOrphanByDefault(ctx context.Context, res *Resource, o deleteOptions) {
	if res.Strategy.OrphanByDefault && res.Strategy.OrphanWarning != "" && o.propagation == "" && o.orphanDependents == nil {
		Warn(ctx, res.Strategy.OrphanWarning)
	}
}

// checkPreconditions is kube's early check (rest.BeforeDelete): given
// preconditions are compared as strings, so "" and "0" conflict too.
func checkPreconditions(res *Resource, name string, o deleteOptions, cur storage.Object) error {
	conflict := func(why string) error {
		return newStatus(409, "Conflict", fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", res.qualifiedKind(), name, why),
			&StatusDetails{Name: name, Group: res.Group, Kind: res.Kind})
	}
	if p := o.precondUID; p != nil && *p != cur.UID {
		return conflict(fmt.Sprintf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p, cur.UID))
	}
	if p := o.precondRV; p != nil && *p != rv.Format(cur.Revision) {
		return conflict(fmt.Sprintf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p, rv.Format(cur.Revision)))
	}
	return toStatusOrNil(o.preconditions.Check(cur.Key, cur), res, name)
}

// markDeleting sets deletionTimestamp on an object with finalizers (once)
// or deleted gracefully (graceful.go), and the garbage collector's
// finalizers the options ask for; deleting an object already being
// deleted may still change those (as kube). now reports that the marked
// object is to be removed at once: a graceful delete with a period of 0
// and no finalizer.
func (r *Registry) markDeleting(ctx context.Context, res *Resource, ns, name string, o deleteOptions) (_ storage.Object, now bool, _ error) {
	out, err := r.write(ctx, res, ns, name, o.writeOptions, func(old Object, cur storage.Object) (Object, error) {
		if err := checkPreconditions(res, name, o, cur); err != nil {
			return nil, err
		}
		g := r.deletionGrace(ctx, res, old, o)
		if g.pending {
			return nil, errUnchanged
		}
		finalizers, changed := r.deletionFinalizers(old, o)
		finalizing := len(finalizers) > 0 || res.ownFinalizers(ctx, old)
		if !g.graceful && !finalizing {
			return nil, errDeleteNow
		}
		now = g.graceful && g.period == 0 && !finalizing
		if old.deleting() && !changed && !g.graceful {
			return nil, errUnchanged
		}
		next := old.deepCopy()
		meta := next.Meta()
		if changed {
			l := make([]any, len(finalizers))
			for i, f := range finalizers {
				l[i] = f
			}
			meta["finalizers"] = l
		}
		switch {
		case g.graceful:
			meta["deletionTimestamp"] = g.timestamp
			meta["deletionGracePeriodSeconds"] = g.period
		case !old.deleting():
			meta["deletionTimestamp"] = r.timestamp()
			meta["deletionGracePeriodSeconds"] = int64(0)
		}
		if !old.deleting() {
			if g := generation(old); g > 0 { // as kube's BeforeDelete
				meta["generation"] = g + 1
			}
		}
		if res.Strategy.PrepareForDelete != nil {
			if err := res.Strategy.PrepareForDelete(ctx, next); err != nil {
				return nil, err
			}
		}
		return next, nil
	})
	switch {
	case errors.Is(err, errUnchanged):
		cur, err := r.storeFor(res).Get(ctx, res.objectKey(ns, name), storage.GetOptions{})
		return cur, false, toStatusOrNil(err, res, name)
	case errors.Is(err, errDeleteNow): // no longer graceful nor finalizing
		cur, err := r.storeFor(res).Get(ctx, res.objectKey(ns, name), storage.GetOptions{})
		return cur, err == nil, toStatusOrNil(err, res, name)
	}
	if err != nil || now || o.dryRun || res.Strategy.AfterDelete == nil {
		return out, now, err
	}
	if obj, err := decodeStored(out.Value, out.Revision); err == nil {
		res.Strategy.AfterDelete(ctx, obj, false)
	}
	return out, false, nil
}

// errDeleteNow ends markDeleting: the object is to be removed at once.
var errDeleteNow = errors.New("registry: delete now")

// errUnchanged aborts a write that has nothing to change.
var errUnchanged = errors.New("registry: unchanged")
