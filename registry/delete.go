package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/codec/protobuf"
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
	if len(causes) == 0 {
		return nil
	}
	msgs := make([]string, len(causes))
	for i, c := range causes {
		msgs[i] = c.Field + ": " + c.Message
	}
	all := msgs[0]
	if len(msgs) > 1 {
		all = "[" + strings.Join(msgs, ", ") + "]"
	}
	return newStatus(422, "Invalid", `DeleteOptions.meta.k8s.io "" is invalid: `+all,
		&StatusDetails{Group: "meta.k8s.io", Kind: "DeleteOptions", Causes: causes})
}

// toDeleteOptions turns valid DeleteOptions into the verb's options.
func toDeleteOptions(b deleteopts.Options, manager string) (deleteOptions, error) {
	o := deleteOptions{writeOptions: writeOptions{dryRun: len(b.DryRun) > 0, manager: manager}}
	if b.PropagationPolicy != nil {
		o.propagation = *b.PropagationPolicy
	}
	o.orphanDependents = b.OrphanDependents
	o.ignoreReadError = b.IgnoreStoreReadError != nil && *b.IgnoreStoreReadError
	if p := b.Preconditions; p != nil {
		o.precondUID, o.precondRV = p.UID, p.ResourceVersion
		if p.UID != nil {
			o.preconditions.UID = *p.UID
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != "" {
			v, err := rv.Parse(*p.ResourceVersion)
			if err != nil {
				return o, errBadRequest("preconditions.resourceVersion: %v", err)
			}
			o.preconditions.Revision = v
		}
	}
	return o, nil
}

// gcFinalizers is kube's deletionFinalizersForGarbageCollection: the
// finalizers obj gets when deleted with o, and whether they changed.
// Options win over the finalizers already there, which win over the
// default (Background: no finalizer).
func gcFinalizers(obj Object, o deleteOptions) ([]string, bool) {
	old := obj.Finalizers()
	orphan, foreground := false, false
	switch {
	case o.orphanDependents != nil:
		orphan = *o.orphanDependents
	case o.propagation != "":
		orphan, foreground = o.propagation == PropagationOrphan, o.propagation == PropagationForeground
	default:
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
