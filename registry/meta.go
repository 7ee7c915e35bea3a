package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
)

// newUID returns an RFC 4122 version 4 UUID.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	// 8-4-4-4-12 hex digits, as fmt's "%x-%x-%x-%x-%x" of the five parts.
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}

func (r *Registry) timestamp() string {
	return r.opts.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
}

// checkTypeMeta defaults apiVersion and kind and refuses other values.
func checkTypeMeta(res *Resource, obj Object) error {
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	custom := !res.typedList() // kube decodes a custom resource as unstructured
	switch {
	case av == "" && !custom:
		obj["apiVersion"] = res.GroupVersion()
	case av != res.GroupVersion():
		return errBadRequest("the API version in the data (%s) does not match the expected API version (%s)", av, res.GroupVersion())
	}
	switch {
	case kind == "":
		obj["kind"] = res.Kind
	case kind != res.Kind && custom:
		// kube validates a custom resource's kind as a field: 422.
		return errInvalid(&Resource{Group: res.Group, Kind: kind}, obj.Name(), []FieldError{{Type: "FieldValueInvalid", Field: "kind", Value: kind, Detail: "must be " + res.Kind}})
	case kind != res.Kind:
		return errBadRequest("the kind in the data (%s) does not match the expected kind (%s)", kind, res.Kind)
	}
	return nil
}

// checkMetadata refuses a metadata that is not an object, as kube's
// decoder: a built-in kind's body has been checked whole by then
// (writeOptions.decodeErr); a custom resource's metadata is decoded into
// ObjectMeta on its own.
func checkMetadata(res *Resource, obj Object) error {
	if m, ok := obj["metadata"]; ok {
		if _, ok := m.(map[string]any); !ok {
			if m == nil {
				return errBadRequest("metadata must be a JSON object")
			}
			return cannotHandle(res)("json: cannot unmarshal " + jsonobj.Kind(m) + " into Go value of type v1.ObjectMeta")
		}
	}
	return nil
}

// checkNamespace makes obj's namespace the request's, or refuses a
// different one, as kube's EnsureObjectNamespaceMatchesRequestNamespace.
func checkNamespace(res *Resource, obj Object, ns string) error {
	meta := obj.Meta()
	got := obj.Namespace()
	if !res.Namespaced { // kube clears a cluster-scoped object's namespace
		delete(meta, "namespace")
		return nil
	}
	if got != "" && got != ns {
		return errBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	meta["namespace"] = ns
	return nil
}

// prepareCreate sets the server-owned fields of a new object and validates
// it. track, unless nil, records the write in managedFields between the
// strategy's Default and PrepareForCreate: as in kube, where the field
// manager sees the decoded, defaulted object and not what the strategy
// then sets (a namespace's "kubernetes" finalizer is nobody's). generated,
// unless empty, is the name made from generateName, set after tracking
// (kube makes it in BeforeCreate): the hooks before see no name. The
// strategy's Canonicalize runs last, on the valid object. representable
// skips checkRepresentable, for an object known to fit the resource's
// protobuf message (read from it).
func (r *Registry) prepareCreate(ctx context.Context, res *Resource, obj Object, track func(Object) (Object, error), generated string, representable bool) (Object, error) {
	meta := obj.Meta()
	if s, _ := meta["resourceVersion"].(string); s != "" {
		return nil, errBadRequest("resourceVersion should not be set on objects to be created")
	}
	delete(meta, "resourceVersion")
	meta["uid"] = newUID()
	meta["creationTimestamp"] = r.timestamp()
	delete(meta, "generation")
	if res.Generation {
		meta["generation"] = int64(1)
	}
	delete(meta, "deletionTimestamp")
	delete(meta, "deletionGracePeriodSeconds")
	if res.Status {
		delete(obj, "status")
	}
	if res.Strategy.Default != nil {
		if err := res.Strategy.Default(ctx, obj); err != nil {
			return nil, err
		}
	}
	if track != nil {
		var err error
		if obj, err = track(obj); err != nil {
			return nil, err
		}
	}
	if generated != "" {
		obj.Meta()["name"] = generated
	}
	if res.Strategy.PrepareForCreate != nil {
		if err := res.Strategy.PrepareForCreate(ctx, obj); err != nil {
			return nil, err
		}
	}
	if !representable {
		if err := checkRepresentable(res, obj); err != nil {
			return nil, err
		}
	}
	errs := r.validateMeta(ctx, res, obj)
	errs = append(errs, validateSchema(ctx, res, obj, nil, "")...)
	errs = append(errs, validateScale(res, obj, false)...)
	if res.Strategy.ValidateCreate != nil {
		errs = append(errs, res.Strategy.ValidateCreate(ctx, obj)...)
	}
	if len(errs) > 0 {
		return nil, errInvalid(res, obj.Name(), errs)
	}
	if res.Strategy.WarningsOnCreate != nil {
		for _, w := range res.Strategy.WarningsOnCreate(ctx, obj) {
			Warn(ctx, w)
		}
	}
	if res.Strategy.Canonicalize != nil {
		res.Strategy.Canonicalize(ctx, obj)
	}
	if res.Strategy.Admit != nil {
		if err := res.Strategy.Admit(ctx, obj, nil); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

func (r *Registry) validateMeta(ctx context.Context, res *Resource, obj Object) []FieldError {
	o := validation.MetaOptions{Namespaced: res.Namespaced, StandardFinalizers: !res.Custom && !res.Strategy.GenericMeta}
	if f := res.Strategy.ValidateName; f != nil {
		o.NameFunc = func(name string) []string { return f(ctx, name) }
	}
	return validation.ValidateObjectMeta(obj.Meta(), o)
}

// prepareUpdate makes obj the next state of old: server-owned fields come
// from old, the spec/status split is applied for subresource sub ("" or
// "status"), generation moves when the spec changes, and the result is
// validated. track, unless nil, records the write in managedFields between
// the strategy's Default and PrepareForUpdate (see prepareCreate).
func (r *Registry) prepareUpdate(ctx context.Context, res *Resource, obj, old Object, sub string, track func(Object) (Object, error)) (Object, error) {
	if direct(ctx) { // managedFields and generation stay (DirectWrite)
		track = nil
		obj.Meta()["managedFields"] = deepCopy(old.Meta()["managedFields"])
		if old.Meta()["managedFields"] == nil {
			delete(obj.Meta(), "managedFields")
		}
	}
	if res.writesStatus(sub) {
		// A status write changes the status alone (kube's status strategy).
		next := old.deepCopy()
		if st, ok := obj["status"]; ok {
			next["status"] = st
		} else {
			delete(next, "status")
		}
		if md, ok := obj["metadata"].(map[string]any); ok && res.Strategy.StatusWritesMetadata {
			next["metadata"] = md
		}
		if mf, ok := obj.Meta()["managedFields"]; ok && track == nil {
			// An apply to /status: its field manager has recorded it.
			next.Meta()["managedFields"] = mf
		}
		obj = next
	} else if res.Status {
		if st, ok := old["status"]; ok {
			obj["status"] = deepCopy(st)
		} else {
			delete(obj, "status")
		}
	}
	meta, oldMeta := obj.Meta(), old.Meta()
	if uid := obj.UID(); uid != "" && uid != old.UID() {
		// kube checks a custom resource's metadata twice, in its generic
		// BeforeUpdate and in the custom resource strategy's
		// ValidateUpdate: the error is named once in the message, twice
		// in the causes.
		errs := []FieldError{{Type: "FieldValueInvalid", Field: "metadata.uid", Value: uid, Detail: "field is immutable"}}
		if res.Custom {
			errs = append(errs, errs[0])
		}
		return nil, errInvalid(res, obj.Name(), errs)
	}
	for _, k := range []string{"uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		if v, ok := oldMeta[k]; ok {
			meta[k] = v
		} else {
			delete(meta, k)
		}
	}
	if old.deleting() {
		var added []string
		oldF := old.Finalizers()
		for _, f := range obj.Finalizers() {
			if !slices.Contains(oldF, f) {
				added = append(added, f)
			}
		}
		if len(added) > 0 {
			return nil, errInvalid(res, obj.Name(), []FieldError{{Type: "FieldValueForbidden", Field: "metadata.finalizers",
				Detail: fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %#v", added)}})
		}
	}
	if res.Strategy.Default != nil {
		if err := res.Strategy.Default(ctx, obj); err != nil {
			return nil, err
		}
	}
	if track != nil {
		var err error
		if obj, err = track(obj); err != nil {
			return nil, err
		}
		meta = obj.Meta()
	}
	if res.Strategy.PrepareForUpdate != nil {
		if err := res.Strategy.PrepareForUpdate(ctx, obj, old); err != nil {
			return nil, err
		}
	}
	if res.Generation && specChanged(obj, old) && !direct(ctx) {
		meta["generation"] = generation(old) + 1
	}
	if err := checkRepresentable(res, obj); err != nil {
		return nil, err
	}
	errs := r.validateMeta(ctx, res, obj)
	errs = append(errs, validateSchema(ctx, res, obj, old, sub)...)
	errs = append(errs, validateScale(res, obj, res.writesStatus(sub))...)
	if res.Strategy.ValidateUpdate != nil {
		errs = append(errs, res.Strategy.ValidateUpdate(ctx, obj, old)...)
	}
	if len(errs) > 0 {
		return nil, errInvalid(res, obj.Name(), errs)
	}
	if res.Strategy.WarningsOnUpdate != nil {
		for _, w := range res.Strategy.WarningsOnUpdate(ctx, obj, old) {
			Warn(ctx, w)
		}
	}
	if res.Strategy.Canonicalize != nil {
		res.Strategy.Canonicalize(ctx, obj)
	}
	if res.Strategy.Admit != nil {
		if err := res.Strategy.Admit(ctx, obj, old); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// specChanged reports whether anything outside metadata and status differs.
func specChanged(a, b Object) bool {
	for k, v := range a {
		if k == "metadata" || k == "status" {
			continue
		}
		if !deepEqual(v, b[k]) {
			return true
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && k != "metadata" && k != "status" {
			return true
		}
	}
	return false
}

// deepEqual is reflect.DeepEqual for JSON-form values, without
// reflection for maps, lists and the usual scalars (a nil map or list
// differs from an empty one, as there).
func deepEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !deepEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !deepEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case string:
		b, ok := b.(string)
		return ok && a == b
	case json.Number:
		b, ok := b.(json.Number)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case int64:
		b, ok := b.(int64)
		return ok && a == b
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

func generation(o Object) int64 { return intAt(o, "metadata.generation") }
