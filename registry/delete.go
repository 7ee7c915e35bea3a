package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/codec/protobuf"
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

// deleteBody is meta/v1 DeleteOptions.
type deleteBody struct {
	Kind               string   `json:"kind"`
	APIVersion         string   `json:"apiVersion"`
	GracePeriodSeconds *int64   `json:"gracePeriodSeconds"`
	PropagationPolicy  *string  `json:"propagationPolicy"`
	OrphanDependents   *bool    `json:"orphanDependents"`
	DryRun             []string `json:"dryRun"`
	Preconditions      *struct {
		UID             *string `json:"uid"`
		ResourceVersion *string `json:"resourceVersion"`
	} `json:"preconditions"`
	IgnoreStoreReadError *bool `json:"ignoreStoreReadErrorWithClusterBreakingPotential"`
}

// metaSchemeName is how kube's meta scheme names itself in decoding errors.
const metaSchemeName = "pkg/runtime/scheme.go:111"

// unversionedMetaKinds are the kinds kube's meta scheme knows in every
// group/version, by Go type: decoding one as DeleteOptions is a conversion
// error. metaKinds are those it knows in the meta.k8s.io versions only.
var (
	unversionedMetaKinds = map[string]string{
		"Status": "v1.Status", "APIVersions": "v1.APIVersions", "APIGroupList": "v1.APIGroupList",
		"APIGroup": "v1.APIGroup", "APIResourceList": "v1.APIResourceList",
		"CreateOptions": "v1.CreateOptions", "UpdateOptions": "v1.UpdateOptions",
	}
	metaKinds = map[string]map[string]string{
		"meta.k8s.io/v1": {"GetOptions": "v1.GetOptions", "ListOptions": "v1.ListOptions", "PatchOptions": "v1.PatchOptions",
			"WatchEvent": "v1.WatchEvent", "Table": "v1.Table", "TableOptions": "v1.TableOptions",
			"PartialObjectMetadata": "v1.PartialObjectMetadata", "PartialObjectMetadataList": "v1.PartialObjectMetadataList"},
		"meta.k8s.io/v1beta1": {"Table": "v1.Table", "TableOptions": "v1.TableOptions",
			"PartialObjectMetadata": "v1.PartialObjectMetadata", "PartialObjectMetadataList": "v1beta1.PartialObjectMetadataList"},
	}
)

// checkDeleteOptionsKind refuses a body that is not DeleteOptions with the
// error kube's meta codec gives (400). DeleteOptions is an unversioned kind
// there: any apiVersion is accepted with it, as kube does.
func checkDeleteOptionsKind(apiVersion, kind string) error {
	if strings.Count(apiVersion, "/") > 1 {
		return errBadRequest("unexpected GroupVersion string: %s", apiVersion)
	}
	if apiVersion == "" {
		apiVersion = "meta.k8s.io/v1"
	}
	if kind == "" || kind == "DeleteOptions" {
		return nil
	}
	typ, ok := unversionedMetaKinds[kind]
	if !ok {
		typ, ok = metaKinds[apiVersion][kind]
	}
	if ok {
		return errBadRequest("converting (%s) to (v1.DeleteOptions): unknown conversion", typ)
	}
	return errBadRequest("no kind %q is registered for version %q in scheme %q", kind, apiVersion, metaSchemeName)
}

// readDeleteOptionsBody reads a DELETE's body, in any format a DeleteOptions may
// come in; ok is false when there is none.
func (r *Registry) readDeleteOptionsBody(req *http.Request) (body deleteBody, ok bool, err error) {
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
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] != '{' && !bytes.Equal(t, []byte("null")) {
		var v any
		if err := json.Unmarshal(t, &v); err != nil {
			return body, false, errBadRequest("couldn't get version/kind; json parse error: %v", err)
		}
		return body, false, errBadRequest("couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }", jsonKind(v))
	}
	var tm struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	if err := json.Unmarshal(b, &tm); err != nil {
		return body, false, errBadRequest("couldn't get version/kind; json parse error: %v", err)
	}
	av, _ := tm.APIVersion.(string)
	kind, _ := tm.Kind.(string)
	if err := checkDeleteOptionsKind(av, kind); err != nil {
		return body, false, err
	}
	if err := json.Unmarshal(b, &body); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return body, false, errBadRequest("json: cannot unmarshal %s into Go struct field DeleteOptions.%s of type %s", te.Value, te.Field, te.Type)
		}
		return body, false, errBadRequest("the DeleteOptions body is not valid JSON: %v", err)
	}
	return body, true, nil
}

// deleteQuery reads the options of a DELETE without a body from its query.
func deleteQuery(q url.Values) (deleteBody, error) {
	var body deleteBody
	body.DryRun = q["dryRun"]
	if s := q.Get("gracePeriodSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return body, errBadRequest("invalid gracePeriodSeconds %q: must be an integer", s)
		}
		body.GracePeriodSeconds = &n
	}
	if v, ok := q["propagationPolicy"]; ok {
		body.PropagationPolicy = &v[0]
	}
	for _, p := range []struct {
		name string
		dst  **bool
	}{{"orphanDependents", &body.OrphanDependents}, {"ignoreStoreReadErrorWithClusterBreakingPotential", &body.IgnoreStoreReadError}} {
		if v, ok := q[p.name]; ok {
			b, err := strconv.ParseBool(v[0])
			if err != nil {
				return body, errBadRequest("invalid %s %q: must be true or false", p.name, v[0])
			}
			*p.dst = &b
		}
	}
	return body, nil
}

// validateDeleteOptions is apimachinery's ValidateDeleteOptions (422).
func validateDeleteOptions(b deleteBody) error {
	var errs []StatusCause
	add := func(typ, field, msg string) { errs = append(errs, StatusCause{Type: typ, Field: field, Message: msg}) }
	if p := b.PropagationPolicy; p != nil {
		if b.OrphanDependents != nil {
			add("FieldValueInvalid", "propagationPolicy", "Invalid value: "+strconv.Quote(*p)+": orphanDependents and deletionPropagation cannot be both set")
		}
		if *p != PropagationForeground && *p != PropagationBackground && *p != PropagationOrphan {
			add("FieldValueNotSupported", "propagationPolicy", "Unsupported value: "+strconv.Quote(*p)+`: supported values: "Foreground", "Background", "Orphan", "nil"`)
		}
	}
	for _, v := range b.DryRun {
		if v != "All" {
			q := make([]string, len(b.DryRun))
			for i, s := range b.DryRun {
				q[i] = strconv.Quote(s)
			}
			add("FieldValueNotSupported", "dryRun", "Unsupported value: ["+strings.Join(q, ", ")+`]: supported values: "All"`)
			break
		}
	}
	if b.IgnoreStoreReadError != nil && *b.IgnoreStoreReadError {
		const f = "ignoreStoreReadErrorWithClusterBreakingPotential"
		for _, c := range []struct {
			set  bool
			name string
		}{{b.PropagationPolicy != nil, "propagationPolicy"}, {b.OrphanDependents != nil, "orphanDependents"},
			{b.GracePeriodSeconds != nil, "gracePeriodSeconds"}, {b.Preconditions != nil, "preconditions"}} {
			if c.set {
				add("FieldValueInvalid", f, "Invalid value: true: cannot be set together with ."+c.name)
			}
		}
	}
	// A negative gracePeriodSeconds is valid: kube reads it as 1s, and
	// kapi, which has no graceful deletion, deletes at once whatever it is.
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
func toDeleteOptions(b deleteBody, manager string) (deleteOptions, error) {
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
