package registry

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/registry/internal/deleteopts"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

const (
	patchJSON  = "application/json-patch+json"
	patchMerge = "application/merge-patch+json"
	patchSMP   = "application/strategic-merge-patch+json"
	patchApply = "application/apply-patch+yaml"
	// patchApplyCBOR is apply with a CBOR body (kube 1.32+).
	patchApplyCBOR = "application/apply-patch+cbor"
)

// writeOpts reads dryRun, which must be absent or "All", and the field
// manager (422 otherwise, as kube answers).
func writeOpts(req *http.Request, q url.Values, kind string) (writeOptions, error) {
	vals := q["dryRun"]
	for _, v := range vals {
		if v != "All" {
			l, _ := json.Marshal(vals)
			return writeOptions{}, optionsInvalid(kind, "dryRun", "FieldValueNotSupported", `Unsupported value: `+string(l)+`: supported values: "All"`)
		}
	}
	manager := q.Get("fieldManager")
	if len(manager) > 128 {
		return writeOptions{}, optionsInvalid(kind, "fieldManager", "FieldValueTooLong", "Too long: may not be more than 128 bytes")
	}
	defaulted := manager == ""
	if defaulted {
		manager = managerFromUserAgent(req.UserAgent())
	}
	fv, err := fieldValidation(kind, q["fieldValidation"])
	if err != nil {
		return writeOptions{}, err
	}
	return writeOptions{dryRun: len(vals) > 0, manager: manager, managerDefaulted: defaulted, fieldValidation: fv}, nil
}

// optionsInvalid is kube's 422 for a bad request option.
func optionsInvalid(kind, field, cause, msg string) *StatusError {
	return newStatus(422, "Invalid", kind+`.meta.k8s.io "" is invalid: `+field+`: `+msg,
		&StatusDetails{Group: "meta.k8s.io", Kind: kind, Causes: []StatusCause{{Type: cause, Message: msg, Field: field}}})
}

// managerFromUserAgent is kube's default field manager: the user agent up
// to its first '/', printable characters only, at most 128 bytes
// ("kubectl/v1.37.2 (linux/amd64)" manages as "kubectl").
func managerFromUserAgent(ua string) string {
	ua, _, _ = strings.Cut(ua, "/")
	ua = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, ua)
	if len(ua) > 128 {
		ua = ua[:128]
	}
	return ua
}

// writeJSON answers with a value that only has a JSON form (discovery,
// OpenAPI, /version).
func (r *Registry) writeJSON(w http.ResponseWriter, req *http.Request, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		r.writeError(w, req, errInternal(err))
		return
	}
	writeBody(w, req, code, negotiate.JSON, b)
}

func (r *Registry) serveGet(w http.ResponseWriter, rq *routed) error {
	t, err := negotiateFor(rq.Request, rq.res, negotiate.Item)
	if err != nil {
		return err
	}
	opts, err := getOptions(rq.URL.Query())
	if err != nil {
		return err
	}
	o, err := r.get(rq.Context(), rq.res, rq.namespace, rq.name, opts)
	if err != nil {
		return err
	}
	r.writeStored(w, rq.Request, http.StatusOK, rq.res, t, o)
	return nil
}

// getOptions applies the get table: unset MostRecent, "0" Any, N NotOlderThan.
func getOptions(q url.Values) (storage.GetOptions, error) {
	s := q.Get("resourceVersion")
	v, err := rv.Parse(s)
	if err != nil {
		return storage.GetOptions{}, err
	}
	switch {
	case s == "":
		return storage.GetOptions{Match: rv.MostRecent}, nil
	case v == 0:
		return storage.GetOptions{Match: rv.Any}, nil
	}
	return storage.GetOptions{Match: rv.NotOlderThan, Revision: v}, nil
}

// listQuery is the parsed query of a list or watch.
type listQuery struct {
	req       rv.Request
	pred      storage.Predicate
	bookmarks bool
	timeout   int64 // timeoutSeconds, 0 when absent
}

// unsupportedField is kube's answer to a field selector on a field res
// cannot select by: a built-in kind without field selectors of its own
// answers with the default field label conversion's message, the others
// (custom resources, namespaces) with their own conversion's.
func unsupportedField(res *Resource, field string) error {
	if res.typedList() && len(res.SelectableFields) == 0 {
		return errBadRequest("%q is not a known field selector: only %q, %q", field, "metadata.name", "metadata.namespace")
	}
	return errBadRequest("field label not supported: %s", field)
}

func parseListQuery(res *Resource, q url.Values, watch bool, name string) (listQuery, error) {
	var lq listQuery
	o := rv.Options{
		ResourceVersion:      q.Get("resourceVersion"),
		ResourceVersionMatch: q.Get("resourceVersionMatch"),
		Continue:             q.Get("continue"),
		Watch:                watch,
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil { // kube's words: the parser's error
			return lq, errBadRequest("%v", err)
		}
		o.Limit = n
	}
	if s, ok := q["sendInitialEvents"]; ok {
		b, err := strconv.ParseBool(s[0])
		if err != nil {
			return lq, errBadRequest("invalid sendInitialEvents %q: must be true or false", s[0])
		}
		o.SendInitialEvents = &b
	}
	req, err := o.Resolve()
	if err != nil {
		return lq, err
	}
	lq.req = req
	if lq.pred.Label, err = storage.ParseLabelSelector(q.Get("labelSelector")); err != nil {
		return lq, errBadRequest("%v", err)
	}
	if lq.pred.Field, err = storage.ParseFieldSelector(q.Get("fieldSelector")); err != nil {
		return lq, errBadRequest("%v", err)
	}
	for _, f := range lq.pred.Field {
		if !res.selectable(f.Key) {
			return lq, unsupportedField(res, f.Key)
		}
	}
	if len(lq.pred.Field) > 0 && len(res.SelectableFields) > 0 {
		lq.pred.FieldsOf = res.storedFields
	}
	if name != "" {
		lq.pred.Field = append(lq.pred.Field, storage.Requirement{Key: "metadata.name", Op: storage.Equals, Values: []string{name}})
	}
	if b := q.Get("allowWatchBookmarks"); b == "true" || b == "1" {
		lq.bookmarks = true
	}
	if s := q.Get("timeoutSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil { // kube's words: the parser's error
			return lq, errBadRequest("%v", err)
		}
		if n < 0 {
			return lq, errBadRequest("invalid timeoutSeconds %q: must be a non-negative integer", s)
		}
		lq.timeout = n
	}
	return lq, nil
}

func (lq listQuery) storageOptions() storage.ListOptions {
	return storage.ListOptions{
		Match: lq.req.Match, Revision: lq.req.Revision, Limit: lq.req.Limit,
		Continue: lq.req.Continue, Predicate: lq.pred,
	}
}

func (r *Registry) serveList(w http.ResponseWriter, rq *routed) error {
	t, err := negotiateFor(rq.Request, rq.res, negotiate.List)
	if err != nil {
		return err
	}
	lq, err := parseListQuery(rq.res, rq.URL.Query(), false, "")
	if err != nil {
		return err
	}
	out, err := r.list(rq.Context(), rq.res, rq.namespace, lq.storageOptions())
	if err != nil {
		return err
	}
	r.writeList(w, rq.Request, rq.res, t, out)
	return nil
}

// readCreate reads a POST: the response's representation, the options
// and the decoded body.
func (r *Registry) readCreate(rq *routed) (negotiate.Target, writeOptions, Object, error) {
	t, err := negotiateFor(rq.Request, rq.res, negotiate.Item)
	if err != nil {
		return t, writeOptions{}, nil, err
	}
	o, err := writeOpts(rq.Request, rq.URL.Query(), "CreateOptions")
	if err != nil {
		return t, o, nil, err
	}
	obj, err := r.readObject(rq.Request, rq.res, &o)
	return t, o, obj, err
}

func (r *Registry) serveCreate(w http.ResponseWriter, rq *routed) error {
	if rq.res.Namespaced && rq.namespace == "" {
		return errAcrossNamespaces(rq.res, rq.Method)
	}
	t, o, obj, err := r.readCreate(rq)
	if err != nil {
		return err
	}
	out, written, err := r.createWritten(rq.Context(), rq.res, rq.namespace, obj, o)
	if err != nil {
		return err
	}
	r.seedEnveloped(rq.res, t, out, written)
	r.writeStored(w, rq.Request, http.StatusCreated, rq.res, t, out)
	return nil
}

func (r *Registry) serveUpdate(w http.ResponseWriter, rq *routed) error {
	t, err := negotiateFor(rq.Request, rq.res, negotiate.Item)
	if err != nil {
		return err
	}
	o, err := writeOpts(rq.Request, rq.URL.Query(), "UpdateOptions")
	if err != nil {
		return err
	}
	obj, err := r.readObject(rq.Request, rq.res, &o)
	if err != nil {
		return err
	}
	out, err := r.update(rq.Context(), rq.res, rq.namespace, rq.name, rq.subresource, obj, o)
	if err != nil {
		return err
	}
	r.writeStored(w, rq.Request, http.StatusOK, rq.res, t, out)
	return nil
}

// forceOption reads force, which only an apply patch may set.
func forceOption(q url.Values, apply bool) (bool, error) {
	v, ok := q["force"]
	if !ok {
		return false, nil
	}
	if !apply {
		return false, optionsInvalid("PatchOptions", "force", "FieldValueForbidden", "Forbidden: may not be specified for non-apply patch")
	}
	// kube's query booleans: "0" and "false" (any case) are false,
	// anything else true.
	return v[0] != "0" && !strings.EqualFold(v[0], "false"), nil
}

// decodeApplyConfig decodes an apply body of format f. YAML that does not
// convert to JSON is kube's 400 "error encoding patch: <the YAML error>".
func decodeApplyConfig(f negotiate.Format, body []byte) (Object, error) {
	config, err := decodeBody(f, nil, body)
	switch {
	case errors.Is(err, codec.ErrInvalidYAML):
		return nil, errBadRequest("error encoding patch: %s", strings.TrimPrefix(err.Error(), codec.ErrInvalidYAML.Error()+": "))
	case err != nil:
		return nil, errBadRequest("the apply configuration is not a valid object: %v", err)
	}
	return config, nil
}

// serveApply answers a server-side apply: 201 when it created the object.
func (r *Registry) serveApply(w http.ResponseWriter, rq *routed, t negotiate.Target, body []byte, o writeOptions, force bool) error {
	if rq.URL.Query().Get("fieldManager") == "" {
		return optionsInvalid("PatchOptions", "fieldManager", "FieldValueRequired", "Required value: is required for apply patch")
	}
	f := negotiate.YAML
	if mediaType(rq.Request) == patchApplyCBOR {
		f = negotiate.CBOR
	}
	config, err := decodeApplyConfig(f, body)
	if err != nil {
		return err
	}
	if f == negotiate.YAML {
		if err := applyDuplicates(rq.Context(), o, body, config); err != nil {
			return err
		}
	}
	out, created, err := r.apply(rq.Context(), rq.res, rq.namespace, rq.name, rq.subresource, config, o, force)
	if err != nil {
		return err
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	r.writeStored(w, rq.Request, code, rq.res, t, out)
	return nil
}

// checkPatchType refuses patch types the resource does not take (415):
// strategic merge needs a schema to know the merge keys (PATCH-3; kube
// answers 415 to it for every custom resource, kapi merges by the CRD's
// schema).
func checkPatchType(res *Resource, pt string) error {
	switch {
	case pt == patchJSON || pt == patchMerge || pt == patchApply || pt == patchApplyCBOR:
		return nil
	case pt == patchSMP && res.Schema != nil:
		return nil
	}
	return errUnsupportedPatchType(res, []string{patchJSON, patchMerge, patchApply, patchApplyCBOR})
}

// errUnsupportedPatchType is kube's 415 for a PATCH of a type the resource
// does not take. For a custom resource, its handler's negotiation error: a
// Status without details listing the types (supported: kube's with its
// CBOR apply, as kube lists them with CBORServingAndStorage on, which the
// differential corpus's reference runs with; kapi also takes strategic
// merge where it has a schema). For a built-in kind, its router's
// answer, before any handler.
func errUnsupportedPatchType(res *Resource, supported []string) *StatusError {
	if !res.Custom {
		return newStatus(http.StatusUnsupportedMediaType, "UnsupportedMediaType", "415: Unsupported Media Type", &StatusDetails{})
	}
	return newStatus(http.StatusUnsupportedMediaType, "UnsupportedMediaType",
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(supported, ", "), nil)
}

func (r *Registry) servePatch(w http.ResponseWriter, rq *routed) error {
	t, err := negotiateFor(rq.Request, rq.res, negotiate.Item)
	if err != nil {
		return err
	}
	q := rq.URL.Query()
	o, err := writeOpts(rq.Request, q, "PatchOptions")
	if err != nil {
		return err
	}
	pt := mediaType(rq.Request)
	if err := checkPatchType(rq.res, pt); err != nil {
		return err
	}
	apply := pt == patchApply || pt == patchApplyCBOR
	force, err := forceOption(q, apply)
	if err != nil {
		return err
	}
	body, err := r.readBody(rq.Request)
	if err != nil {
		return err
	}
	if apply {
		return r.serveApply(w, rq, t, body, o, force)
	}
	if err := patch.CheckJSON(body); err != nil { // before the object is read, as kube
		return patchStatus(err)
	}
	if o.fieldValidation != fieldIgnore {
		o.duplicates = patchDuplicates(pt, body)
	}
	out, err := r.patchObject(rq.Context(), rq.res, rq.namespace, rq.name, rq.subresource, pt, body, o)
	if err != nil {
		return err
	}
	r.writeStored(w, rq.Request, http.StatusOK, rq.res, t, out)
	return nil
}

// readDeleteOptions reads a DELETE's options as kube does: from the body
// when there is one, from the query otherwise, then validates them.
func (r *Registry) readDeleteOptions(rq *routed) (deleteOptions, error) {
	body, ok, err := r.readDeleteOptionsBody(rq.Request)
	if err != nil {
		return deleteOptions{}, err
	}
	if !ok {
		if body, err = deleteopts.FromQuery(rq.URL.Query()); err != nil {
			return deleteOptions{}, errBadRequest("%v", err)
		}
	}
	if err := validateDeleteOptions(body); err != nil {
		return deleteOptions{}, err
	}
	return toDeleteOptions(body, managerFromUserAgent(rq.UserAgent()))
}

func (r *Registry) serveDelete(w http.ResponseWriter, rq *routed) error {
	t, err := negotiateFor(rq.Request, rq.res, negotiate.Item)
	if err != nil {
		return err
	}
	o, err := r.readDeleteOptions(rq)
	if err != nil {
		return err
	}
	if o.ignoreReadError {
		if err := r.authorizeUnsafeDelete(rq); err != nil {
			return err
		}
	}
	warnOrphanByDefault(rq.Context(), rq.res, o)
	out, gone, err := r.delete(rq.Context(), rq.res, rq.namespace, rq.name, o)
	if err != nil {
		return err
	}
	if gone && rq.res.Strategy.ReturnDeletedObject && !o.ignoreReadError {
		r.writeStored(w, rq.Request, http.StatusOK, rq.res, t, out)
		return nil
	}
	if !gone {
		// As kube: 202 when the object stays and the client asked for
		// its dependents to be deleted with the deprecated option.
		code := http.StatusOK
		if o.orphanDependents != nil && !*o.orphanDependents {
			code = http.StatusAccepted
		}
		r.writeStored(w, rq.Request, code, rq.res, t, out)
		return nil
	}
	if o.ignoreReadError {
		// The object could not be read: kube answers without details.
		writeStatus(w, rq.Request, &StatusError{Status: Status{Kind: "Status", APIVersion: "v1", Status: "Success", Code: http.StatusOK,
			Details: &StatusDetails{Name: rq.name, Kind: rq.res.Kind}}})
		return nil
	}
	writeStatus(w, rq.Request, &StatusError{Status: successStatus(rq.res, rq.name, out.UID)})
	return nil
}

// serveDeleteCollection deletes every object the list selectors match and
// answers with the list as it was listed.
func (r *Registry) serveDeleteCollection(w http.ResponseWriter, rq *routed) error {
	if rq.res.Namespaced && rq.namespace == "" {
		return errAcrossNamespaces(rq.res, rq.Method)
	}
	if rq.res.Strategy.NoDeleteCollection {
		return errMethodNotAllowed(rq.Method)
	}
	t, err := negotiateFor(rq.Request, rq.res, negotiate.List)
	if err != nil {
		return err
	}
	o, err := r.readDeleteOptions(rq)
	if err != nil {
		return err
	}
	if o.ignoreReadError {
		return deleteOptionsInvalid([]StatusCause{{Type: "FieldValueInvalid", Field: "ignoreStoreReadErrorWithClusterBreakingPotential",
			Message: "Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option"}})
	}
	lq, err := parseListQuery(rq.res, rq.URL.Query(), false, "")
	if err != nil {
		return err
	}
	opts := lq.storageOptions()
	opts.Limit, opts.Continue = 0, ""
	l, err := r.list(rq.Context(), rq.res, rq.namespace, opts)
	if err != nil {
		return err
	}
	warnOrphanByDefault(rq.Context(), rq.res, o)
	o.collection = true
	for _, it := range l.Items {
		name, ns := it.Fields["metadata.name"], it.Fields["metadata.namespace"]
		if _, _, err := r.delete(rq.Context(), rq.res, ns, name, o); err != nil && !storage.IsNotFound(err) {
			return err
		}
	}
	// kube's answer is the list as listed (its Store.DeleteCollection):
	// a Job that a delete leaves in place with the orphan finalizer is
	// answered as it was before.
	r.writeList(w, rq.Request, rq.res, t, l)
	return nil
}
