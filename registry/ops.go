package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

// The verbs, independent of HTTP: the handlers and Client both call these,
// so a Go caller gets exactly the semantics an HTTP client gets.

// writeOptions are the options every write takes.
type writeOptions struct {
	dryRun bool
	// manager is the field manager the write's managedFields entry names
	// (the fieldManager parameter, or the client's user agent).
	manager string
	// managerDefaulted marks a manager taken from the user agent, not
	// sent: admission's options name no fieldManager then, as kube's.
	managerDefaulted bool
	// applied marks a write made by server-side apply, whose Apply entry
	// is already in the object: no Update entry is added.
	applied bool
	// fieldValidation is the directive for unknown and duplicate fields
	// ("" is Warn); duplicates are the body's duplicate-field problems.
	fieldValidation string
	duplicates      []string
	// decodeErr is kube's 400 for a built-in kind's body of another kind
	// (kindMismatch) or that its Go types cannot hold (gojson.Check),
	// which normalise returns before anything else; order numbers the
	// body's fields (gojson.Positions), kept under Strict for a built-in
	// kind to list unknown and duplicate fields as kube does.
	decodeErr error
	order     map[string]int
	// fromProtobuf marks a body read from protobuf: its message carries
	// every value of it, so a create skips checkRepresentable unless
	// mutating admission changed the object.
	fromProtobuf bool
}

// toStorage is the storage form of obj.
func toStorage(res *Resource, obj Object) (storage.Object, error) {
	b, err := jsonobj.Encode(obj)
	if err != nil {
		return storage.Object{}, errBadRequest("cannot encode object: %v", err)
	}
	return storage.Object{
		Key:    res.objectKey(obj.Namespace(), obj.Name()),
		Value:  b,
		UID:    obj.UID(),
		Labels: obj.Labels(),
		Fields: res.fields(obj),
	}, nil
}

func (r *Registry) get(ctx context.Context, res *Resource, ns, name string, opts storage.GetOptions) (storage.Object, error) {
	o, err := r.storeFor(res).Get(ctx, res.objectKey(ns, name), opts)
	if err != nil {
		return o, toStatus(err, res, name)
	}
	if err := readable(o); err != nil {
		return o, err
	}
	return withDefaults(res, o), nil
}

func (r *Registry) list(ctx context.Context, res *Resource, ns string, opts storage.ListOptions) (storage.ListResult, error) {
	out, err := r.storeFor(res).List(ctx, res.collectionKey(ns), opts)
	if err != nil {
		return out, toStatus(err, res, "")
	}
	var corrupt []string
	for i, o := range out.Items {
		if readable(o) != nil {
			corrupt = append(corrupt, o.Key)
			continue
		}
		out.Items[i] = withDefaults(res, o)
	}
	if len(corrupt) > 0 {
		return out, errInternal(fmt.Errorf("StorageError: corrupt object, Code: 6, Keys: %s; delete them with ignoreStoreReadErrorWithClusterBreakingPotential=true", strings.Join(corrupt, ", ")))
	}
	return out, nil
}

const generateNameRetries = 8

func (r *Registry) create(ctx context.Context, res *Resource, ns string, obj Object, o writeOptions) (storage.Object, error) {
	out, _, err := r.createWritten(ctx, res, ns, obj, o)
	return out, err
}

// createWritten is create, which also returns the object as written
// (writeRequest.written; nil when unknown).
func (r *Registry) createWritten(ctx context.Context, res *Resource, ns string, obj Object, o writeOptions) (storage.Object, Object, error) {
	if err := normalise(ctx, res, obj, normalisation{ns: ns, o: o, refuse: cannotHandle(res)}); err != nil {
		return storage.Object{}, nil, err
	}
	if err := r.checkNamespaceActive(ctx, res, obj); err != nil {
		return storage.Object{}, nil, err
	}
	w := &writeRequest{res: res, op: admission.Create, ns: ns, name: obj.Name(), o: o, options: "CreateOptions", obj: obj}
	out, err := r.commitObject(ctx, w)
	return out, w.written, err
}

// normalisation says how normalise checks a request object.
type normalisation struct {
	ns   string // the request's namespace
	name string // the URL's name; "" on create
	o    writeOptions
	// refuse makes Strict's error for unknown or duplicate fields (nil:
	// the default one).
	refuse func(string) error
}

// normalise is the one check of a request object before the pipeline's
// stages, for every verb: its apiVersion and kind (defaulted when
// missing), the type of its resourceVersion, unknown and duplicate fields
// (as n.o.fieldValidation says), its namespace (the request's) and its
// name (the URL's).
func normalise(ctx context.Context, res *Resource, obj Object, n normalisation) error {
	if n.o.decodeErr != nil {
		return n.o.decodeErr
	}
	if err := checkTypeMeta(res, obj); err != nil {
		return err
	}
	if err := checkMetadata(res, obj); err != nil {
		return err
	}
	if err := checkResourceVersionType(res, obj); err != nil {
		return err
	}
	if err := asDecoded(ctx, res, obj, n.o, n.refuse); err != nil {
		return err
	}
	if err := checkNamespace(res, obj, n.ns); err != nil {
		return err
	}
	if got := obj.Name(); n.name != "" && got != n.name {
		return errBadRequest("the name of the object (%s) does not match the name on the URL (%s)", got, n.name)
	}
	return nil
}

// checkNamespaceActive refuses objects in missing or terminating namespaces.
func (r *Registry) checkNamespaceActive(ctx context.Context, res *Resource, obj Object) error {
	if !res.Namespaced {
		return nil
	}
	ns := obj.Namespace()
	terminating, err := r.namespaceTerminating(ctx, ns)
	if storage.IsNotFound(err) {
		return errNotFound(r.ns, ns)
	}
	if err != nil {
		return toStatus(err, r.ns, ns)
	}
	if terminating {
		return errForbiddenNamespace(res, obj.Name(), ns, fmt.Sprintf("namespace %s is currently being deleted", ns))
	}
	return nil
}

// update replaces the object (PUT), or its status when sub is "status".
func (r *Registry) update(ctx context.Context, res *Resource, ns, name, sub string, obj Object, o writeOptions) (storage.Object, error) {
	if err := normalise(ctx, res, obj, normalisation{ns: ns, name: name, o: o, refuse: cannotHandle(res)}); err != nil {
		return storage.Object{}, err
	}
	want, err := rv.Parse(obj.metaString("resourceVersion"))
	if err != nil {
		return storage.Object{}, errBadRequest("metadata.resourceVersion: %v", err)
	}
	hooks := !r.opts.Admission.Empty()
	return r.commitObject(ctx, &writeRequest{res: res, op: admission.Update, ns: ns, name: name, sub: sub, o: o, options: "UpdateOptions",
		object: func(old Object, cur storage.Object) (Object, error) {
			if want == 0 && res.RequireResourceVersion {
				// kube's BeforeUpdate names the resource, not the kind, here.
				e := FieldError{Type: validation.TypeInvalid, Field: "metadata.resourceVersion", Value: int64(0), Detail: "must be specified for an update"}
				return nil, newStatus(http.StatusUnprocessableEntity, "Invalid", fmt.Sprintf("%s %q is invalid: %s", res.qualified(), name, e.Error()),
					&StatusDetails{Name: name, Group: res.Group, Kind: res.Plural, Causes: []StatusCause{{Type: e.Type, Message: e.ErrorBody(), Field: e.Field}}})
			}
			if want != 0 && want != cur.Revision {
				return nil, errConflict(res, name, "the object has been modified; please apply your changes to the latest version and try again")
			}
			if uid := obj.UID(); uid != "" && old != nil && uid != old.UID() {
				// A PUT's uid is kube's storage precondition (a patch's is
				// a field that may not change: prepareUpdate's 422).
				return nil, errConflict(res, name, fmt.Sprintf("StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s",
					res.kubeKey(ns, name), uid, old.UID()))
			}
			return attemptCopy(res, obj, hooks), nil
		}})
}

// attemptCopy is the request's object for one update attempt: each
// attempt (a conflict retries) must start from the object as sent. (A
// patch or an apply makes its object anew in each attempt: it needs no
// copy.) Hooks (the strategy's, admission's) may change anything in
// place, so a resource with an update hook, or a registry with admission
// hooks, gets a deep copy; otherwise an attempt changes only top-level
// keys (status) and metadata's keys (prepareUpdate, the field manager),
// and copying those two maps is enough: nested values are only read.
func attemptCopy(res *Resource, obj Object, hooks bool) Object {
	s := &res.Strategy
	if hooks || s.Default != nil || s.PrepareForUpdate != nil || s.ValidateUpdate != nil || s.WarningsOnUpdate != nil || s.Canonicalize != nil {
		return obj.deepCopy()
	}
	out := make(Object, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		c := make(map[string]any, len(md)+2)
		for k, v := range md {
			c[k] = v
		}
		out["metadata"] = c
	}
	return out
}

// patchObject applies a JSON or merge patch to the object or its status.
func (r *Registry) patchObject(ctx context.Context, res *Resource, ns, name, sub, patchType string, body []byte, o writeOptions) (storage.Object, error) {
	return r.commitObject(ctx, &writeRequest{res: res, op: admission.Update, ns: ns, name: name, sub: sub, o: o, options: "PatchOptions",
		object: func(old Object, cur storage.Object) (Object, error) {
			patched, err := applyPatch(res, patchType, jsonobj.WithRV(cur.Value, cur.Revision), body, o)
			if err != nil {
				return nil, err
			}
			obj, dups, err := decodeJSON(patched, true)
			if err != nil {
				return nil, newStatus(422, "Invalid", "the patched object is not a JSON object: "+err.Error(), nil)
			}
			po := o
			po.duplicates = append(slices.Clip(o.duplicates), dups...)
			check := func() error { return checkPatched(ctx, res, obj, po, patchType, body) }
			if patchType == patchSMP { // kube converts a strategic merge's result instead
				check = func() error { return checkStrategicPatched(res, obj, body) }
			}
			if err := check(); err != nil {
				return nil, err
			}
			var refuse func(string) error // Strict's, which quotes the patched object
			if o.fieldValidation == fieldStrict {
				refuse = patchedInvalid(obj)
			}
			if err := normalise(ctx, res, obj, normalisation{ns: ns, name: name, o: po, refuse: refuse}); err != nil {
				return nil, err
			}
			if s := obj.metaString("resourceVersion"); s != "" && s != rv.Format(cur.Revision) {
				return nil, errConflict(res, name, "the object has been modified; please apply your changes to the latest version and try again")
			}
			return obj, nil // this attempt's own
		}})
}

// track records a create (old nil) or update of obj by manager in its
// managedFields, as kube's field manager does for every write.
func (r *Registry) track(ctx context.Context, res *Resource, old, obj Object, manager, sub string) (Object, error) {
	out, err := res.manager.Update(old, obj, patch.UpdateOptions{Manager: manager, Subresource: sub, Now: r.opts.Now(), Convert: r.converterFor(ctx, res, old, obj)})
	if err != nil {
		// As kube: tracking never fails a write. The object keeps the
		// managedFields it had.
		r.log.Warn("managedFields not updated", "resource", res.qualified(), "name", obj.Name(), "err", err)
		if out == nil {
			return obj, nil
		}
	}
	return res.ownGroupManagers(Object(out)), nil
}

// converterFor is r.converter(ctx, res) when a managedFields entry of old
// or obj is at another version than res's, nil otherwise (the field
// manager then compares at res's version alone, with nothing to
// convert).
func (r *Registry) converterFor(ctx context.Context, res *Resource, old, obj Object) patch.ConvertFunc {
	for _, o := range [2]Object{old, obj} {
		md, _ := o["metadata"].(map[string]any)
		entries, _ := md["managedFields"].([]any)
		for _, e := range entries {
			m, _ := e.(map[string]any)
			if av, ok := m["apiVersion"].(string); ok && !res.isGroupVersion(av) {
				return r.converter(ctx, res)
			}
		}
	}
	return nil
}

// isGroupVersion reports whether apiVersion is res.GroupVersion(), without
// building it.
func (res *Resource) isGroupVersion(apiVersion string) bool {
	if res.Group == "" {
		return apiVersion == res.Version
	}
	g, v, ok := strings.Cut(apiVersion, "/")
	return ok && g == res.Group && v == res.Version
}

// converter is the field manager's conversion for a write to res
// (patch.ConvertFunc): an object at res's version converted to another
// version of res's group and plural, as the versions' reads convert it
// (convert.go: res's Convert, or the other version's when only it
// converts, or None), with that version's field manager. kube's field
// manager converts the same way, through its scheme for a built-in kind
// and the CRD's conversion (a webhook's included) for a custom resource,
// so that a managedFields entry of another version is compared there:
//
//	HPA at autoscaling/v2 by "a" {spec: {metrics, …}}; a PUT at autoscaling/v1
//	  → a's entry is compared at v2 (the v1 object converted), not at v1
//
// A CRD's version listed in spec.versions but not served is converted
// to as a served one, with its schema and field manager
// (unservedVersions), as kube's CR converter converts to it. Any other
// version res's group and plural do not serve is missing (its managers
// are dropped, as kube drops those its scheme does not know) for a
// built-in kind and an error for a custom resource (kube's CR converter:
// "request to convert CR to an invalid group/version"). Another group's
// version is missing too: kube's scheme converts within a group (see
// ownGroupManagers).
func (r *Registry) converter(ctx context.Context, res *Resource) patch.ConvertFunc {
	return func(obj map[string]any, apiVersion string) (map[string]any, *patch.FieldManager, error) {
		group, version, ok := strings.Cut(apiVersion, "/")
		if !ok {
			group, version = "", apiVersion
		}
		var to *Resource
		if group == res.Group {
			to = r.resource(group, version, res.Plural)
			if to == nil {
				var err error
				if to, err = res.unserved.resource(version); err != nil {
					return nil, nil, err
				}
			}
		}
		if to == nil || to.Kind != res.Kind || to.manager == nil {
			if res.Custom && group == res.Group {
				return nil, nil, fmt.Errorf("request to convert CR to an invalid group/version: %s", apiVersion)
			}
			return nil, nil, fmt.Errorf("%w: %s", patch.ErrMissingVersion, apiVersion)
		}
		by := res
		if !res.converts() && to.converts() {
			by = to
		}
		out, err := by.convert(ctx, []Object{Object(obj)}, apiVersion)
		if err != nil {
			return nil, nil, err
		}
		if to.Custom && to.Schema != nil {
			to.Schema.Prune(map[string]any(out[0])) // as a read at that version
		}
		return out[0], to.manager, nil
	}
}

// ownGroupManagers is obj without the managedFields entries of another
// group's apiVersion, which a write drops as kube's field manager does
// (it cannot convert the object to that version, and a manager it cannot
// convert for goes): an events.k8s.io Event updated as a core Event
// loses its events.k8s.io/v1 managers, and an apply there conflicts
// with none of them. obj itself is not changed; it is returned as it is
// when it has none.
func (res *Resource) ownGroupManagers(obj Object) Object {
	if obj == nil {
		return nil
	}
	entries, _ := obj.Meta()["managedFields"].([]any)
	var kept []any
	for i, e := range entries {
		m, ok := e.(map[string]any)
		switch {
		case (!ok || sameGroup(res, m["apiVersion"])) && kept != nil:
			kept = append(kept, e)
		case ok && !sameGroup(res, m["apiVersion"]) && kept == nil:
			kept = append(make([]any, 0, len(entries)), entries[:i]...)
		}
	}
	if kept == nil {
		return obj
	}
	out := Object(maps.Clone(map[string]any(obj)))
	meta := maps.Clone(obj.Meta())
	meta["managedFields"] = kept
	if len(kept) == 0 {
		delete(meta, "managedFields") // none left, not a reset ([])
	}
	out["metadata"] = meta
	return out
}

// sameGroup reports whether apiVersion is of res's group.
func sameGroup(res *Resource, apiVersion any) bool {
	s, _ := apiVersion.(string)
	group, _, ok := strings.Cut(s, "/")
	if !ok {
		group = ""
	}
	return group == res.Group
}

// apply is server-side apply (PATCH-4): config, an apply configuration,
// is merged into the object by the resource's field manager, which
// creates the object when it does not exist yet.
func (r *Registry) apply(ctx context.Context, res *Resource, ns, name, sub string, config Object, o writeOptions, force bool) (out storage.Object, created bool, err error) {
	opts := patch.ApplyOptions{Manager: o.manager, Force: force, Subresource: sub, Now: r.opts.Now()}
	o.applied = true // the field manager tracks the write
	n := normalisation{ns: ns, name: name, o: writeOptions{fieldValidation: fieldIgnore}}
	w := &writeRequest{res: res, op: admission.Update, ns: ns, name: name, sub: sub, o: o, options: "PatchOptions",
		object: func(old Object, cur storage.Object) (Object, error) {
			base := res.ownGroupManagers(old)
			if _, ok := base.Meta()["managedFields"]; !ok {
				// Only other groups' entries: kube's field manager saw
				// some (no before-first-apply manager) and dropped them.
				base = old
			}
			opts := opts
			opts.Convert = r.converterFor(ctx, res, base, nil)
			merged, err := res.manager.Apply(base, config, opts)
			if err != nil {
				return nil, applyStatus(res, name, err)
			}
			obj := res.ownGroupManagers(Object(merged))
			return obj, normalise(ctx, res, obj, n) // obj is this attempt's own
		}}
	out, _, err = r.commit(ctx, w)
	if !storage.IsNotFound(err) || sub != "" {
		return out, false, err
	}
	w.op = admission.Create
	w.object = func(Object, storage.Object) (Object, error) {
		merged, err := res.manager.Apply(nil, config, opts)
		if err != nil {
			return nil, applyStatus(res, name, err)
		}
		obj := Object(merged)
		if res.Namespaced && obj.Namespace() == "" {
			obj.Meta()["namespace"] = ns
		}
		if err := normalise(ctx, res, obj, n); err != nil {
			return nil, err
		}
		return obj, r.checkNamespaceActive(ctx, res, obj)
	}
	out, _, err = r.commit(ctx, w)
	return out, err == nil, err
}

// applyStatus maps a field manager error: conflicts are 409 with one cause
// per field, as kube answers.
func applyStatus(res *Resource, name string, err error) error {
	if cv := (*patch.ConversionError)(nil); errors.As(err, &cv) {
		// kube's field manager returns the converter's error as it is,
		// which kube answers as any error that is no API status: 500 with
		// its text alone (a failed webhook's "conversion webhook for …
		// failed: …", which res.convert wraps as an internal error).
		msg := cv.Err.Error()
		if se := (*StatusError)(nil); errors.As(cv.Err, &se) {
			if se.Status.Reason != "InternalError" {
				return se
			}
			if d := se.Status.Details; d != nil && len(d.Causes) == 1 {
				msg = d.Causes[0].Message
			}
		}
		return newStatus(http.StatusInternalServerError, "", msg, nil)
	}
	var ce *patch.ConflictError
	if !errors.As(err, &ce) {
		return patchStatus(err)
	}
	causes := make([]StatusCause, len(ce.Conflicts))
	for i, c := range ce.Conflicts {
		causes[i] = StatusCause{Type: patch.CauseTypeFieldManagerConflict, Message: c.Message(), Field: c.Field}
	}
	// kube's apply conflict (errors.NewApplyConflict) names only the causes.
	return newStatus(http.StatusConflict, "Conflict", ce.Error(), &StatusDetails{Causes: causes})
}

// msgJSONPatchNotApplied is kube's message for a JSON patch that does not
// apply.
const msgJSONPatchNotApplied = "the server rejected our request due to an error in our request"

// applyPatch applies a JSON, merge or strategic merge patch, mapping
// failures as kube's patch handler does.
func applyPatch(res *Resource, patchType string, original, body []byte, o writeOptions) ([]byte, error) {
	var out []byte
	var err error
	opts := patch.Options{IgnoreFieldValidation: o.fieldValidation == fieldIgnore}
	switch patchType {
	case patchJSON:
		out, err = patch.JSONPatch(original, body, opts)
		var pe *patch.Error
		switch {
		case errors.As(err, &pe) && pe.Kind == patch.ErrApply && pe.Patched != nil && !bytes.Equal(pe.Patched, []byte("null")):
			// Applied, but not to an object: kube cannot read its
			// apiVersion and kind, and quotes it.
			c := FieldError{Type: "FieldValueInvalid", Field: "patch", Value: string(pe.Patched),
				Detail: "couldn't get version/kind; json parse error: json: cannot unmarshal " + jsonKind(pe.Patched) + ` into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }`}
			return nil, newStatus(http.StatusUnprocessableEntity, "Invalid", ` "" is invalid: `+c.Error(),
				&StatusDetails{Causes: []StatusCause{{Type: c.Type, Message: c.ErrorBody(), Field: c.Field}}})
		case errors.Is(err, patch.ErrApply):
			// kube's answer to a JSON patch that does not apply, whatever
			// the reason (a failed test, a missing path, an unknown op):
			// NewGenericServerResponse(422), a fixed text, empty details.
			return nil, newStatus(http.StatusUnprocessableEntity, "Invalid", msgJSONPatchNotApplied, &StatusDetails{})
		}
	case patchSMP:
		out, err = patch.StrategicMerge(original, body, res.merge, opts)
	default:
		out, err = patch.MergePatch(original, body, opts)
	}
	if err != nil {
		return nil, patchStatus(err)
	}
	return out, nil
}

// jsonKind is how encoding/json names the kind of the JSON value b in a
// type error ("array", "string", "number", "bool").
func jsonKind(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return "value"
	}
	return jsonobj.Kind(v)
}

func patchStatus(err error) error {
	var pe *patch.Error
	switch {
	case errors.Is(err, patch.ErrTooLarge):
		return errTooLarge(err.Error())
	case errors.Is(err, patch.ErrBadPatch):
		return errBadRequest("%s", err.Error())
	case errors.As(err, &pe):
		return newStatus(422, "Invalid", err.Error(), nil)
	}
	return newStatus(422, "Invalid", err.Error(), nil)
}

// write is the read-modify-write loop shared by update, patch and scale:
// next computes the new state from the current one. As in kube, a write
// that empties the finalizers of an object being deleted is not stored:
// the object is deleted instead (watchers see DELETED, not MODIFIED).
func (r *Registry) write(ctx context.Context, res *Resource, ns, name string, o writeOptions,
	next func(old Object, cur storage.Object) (Object, error)) (storage.Object, error) {
	key := res.objectKey(ns, name)
	for {
		var emptied storage.Object // set when the write would empty the finalizers
		fn := func(cur storage.Object) (storage.Object, error) {
			old, err := decodeStored(cur.Value, cur.Revision)
			if err != nil {
				return storage.Object{}, errInternal(fmt.Errorf("object %s cannot be decoded: %w", key, err))
			}
			obj, err := next(old, cur)
			if err != nil {
				return storage.Object{}, err
			}
			so, err := toStorage(res, obj)
			// kube's ShouldDeleteDuringUpdate: an object being deleted,
			// with no grace period left, goes with the write that leaves
			// it no finalizer. The write that marks it (markDeleting)
			// never does: its old state is not being deleted.
			if err == nil && old.deleting() && intAt(old, "metadata.deletionGracePeriodSeconds") == 0 &&
				len(obj.Finalizers()) == 0 && !res.ownFinalizers(ctx, obj) {
				so.Revision = cur.Revision
				emptied = so
				return so, errEmptiedFinalizers
			}
			return so, err
		}
		var out storage.Object
		var err error
		if o.dryRun {
			var cur storage.Object
			if cur, err = r.storeFor(res).Get(ctx, key, storage.GetOptions{}); err != nil {
				return cur, toStatus(err, res, name)
			}
			out, err = fn(cur)
			out.Revision = cur.Revision
		} else {
			out, err = r.storeFor(res).GuaranteedUpdate(ctx, key, storage.UpdateOptions{}, fn)
		}
		switch {
		case errors.Is(err, errEmptiedFinalizers):
			if o.dryRun {
				return emptied, nil
			}
			_, err := r.storeFor(res).Delete(ctx, key, storage.DeleteOptions{Preconditions: storage.Preconditions{UID: emptied.UID, Revision: emptied.Revision}})
			if storage.IsConflict(err) {
				continue // changed meanwhile: compute the write again
			}
			if err != nil {
				return out, toStatus(err, res, name)
			}
			r.objectGone(ctx, res, ns)
			return emptied, nil // kube answers the update's object, at the revision it was read at
		case errors.Is(err, errUnchanged):
			return out, err
		case err != nil:
			return out, toStatus(err, res, name)
		}
		return out, nil
	}
}

// errEmptiedFinalizers aborts a write that turns into a delete.
var errEmptiedFinalizers = errors.New("registry: finalizers emptied")

func toStatusOrNil(err error, res *Resource, name string) error {
	if err == nil {
		return nil
	}
	return toStatus(err, res, name)
}

// kubeKey is the key kube-apiserver's storage errors name for an object,
// below its etcd prefix: /<resource>/<namespace>/<name> for a built-in
// kind (one with a protobuf message), with the group first for others
// (kube serves them as custom resources).
func (res *Resource) kubeKey(ns, name string) string {
	key := "/" + res.Plural + "/"
	if res.Protobuf == nil && res.Group != "" {
		key = "/" + res.Group + key
	}
	if res.Namespaced {
		key += ns + "/"
	}
	return key + name
}
