package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

// The scale subresource (META-4): an autoscaling/v1 Scale mapped onto the
// resource's replica paths, and user-defined subresources. PUT and PATCH
// (JSON, merge) write the Scale (updateScale); a server-side apply merges
// into it with the Scale's own field manager (applyScale, scalepatch.go).

type scaleObject struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   map[string]any `json:"metadata"`
	Spec       struct {
		Replicas int64 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		Replicas int64  `json:"replicas"`
		Selector string `json:"selector,omitempty"`
	} `json:"status"`
}

// scaleOf reads the Scale view of obj.
func scaleOf(res *Resource, obj Object) scaleObject {
	meta := obj.Meta()
	s := scaleObject{Kind: "Scale", APIVersion: "autoscaling/v1", Metadata: map[string]any{}}
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := meta[k]; ok {
			s.Metadata[k] = v
		}
	}
	s.Spec.Replicas = intAt(obj, res.Scale.SpecReplicasPath)
	s.Status.Replicas = intAt(obj, res.Scale.StatusReplicasPath)
	if p := res.Scale.LabelSelectorPath; p != "" {
		if v, ok := obj.lookup(p); ok {
			s.Status.Selector, _ = selectorString(v)
		}
	}
	return s
}

func intAt(obj Object, path string) int64 {
	v, ok := obj.lookup(path)
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case json.Number:
		i, _ := n.Int64()
		return i
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

func (r *Registry) serveSubresource(w http.ResponseWriter, rq *routed) error {
	if rq.subresource != "scale" {
		return r.serveCustom(w, rq)
	}
	if _, err := pick(negotiate.ValueOffers, rq.Request); err != nil {
		return err
	}
	ctx, res := rq.Context(), rq.res
	switch rq.Method {
	case http.MethodGet:
		o, err := r.get(ctx, res, rq.namespace, rq.name, storage.GetOptions{})
		if err != nil {
			return err
		}
		obj, err := decodeStored(o.Value, o.Revision)
		if err != nil {
			return errInternal(err)
		}
		r.writeValue(w, rq.Request, http.StatusOK, scaleOf(res, obj))
		return nil
	case http.MethodPut, http.MethodPatch:
	default:
		return errMethodNotAllowed(rq.Method)
	}
	wo, err := writeOpts(rq.Request, rq.URL.Query(), "UpdateOptions")
	if err != nil {
		return err
	}
	var body []byte
	pt := mediaType(rq.Request)
	f := negotiate.JSON
	apply := rq.Method == http.MethodPatch && (pt == patchApply || pt == patchApplyCBOR)
	if rq.Method == http.MethodPatch {
		if pt != patchJSON && pt != patchMerge && !apply {
			// kapi has no strategic merge of a Scale.
			return errUnsupportedPatchType(res, []string{patchJSON, patchMerge, patchApply, patchApplyCBOR})
		}
	} else if f, err = bodyFormat(rq.Request, false); err != nil {
		return err
	}
	force, err := forceOption(rq.URL.Query(), apply)
	if err != nil {
		return err
	}
	if body, err = r.readBody(rq.Request); err != nil {
		return err
	}
	var out storage.Object
	switch {
	case apply:
		if out, err = r.serveScaleApply(rq, body, wo, force); err != nil {
			return err
		}
	default:
		if rq.Method == http.MethodPatch {
			if err := patch.CheckJSON(body); err != nil { // before the object is read, as kube
				return patchStatus(err)
			}
		}
		if f != negotiate.JSON { // the Scale as JSON, which updateScale reads
			obj, err := decodeBody(f, nil, body)
			if err != nil {
				return errBadRequest("the request body is not a valid Scale: %v", err)
			}
			body = mustJSON(obj)
		}
		if out, err = r.updateScale(ctx, res, rq.namespace, rq.name, rq.Method, pt, body, wo); err != nil {
			return err
		}
	}
	obj, err := decodeStored(out.Value, out.Revision)
	if err != nil {
		return errInternal(err)
	}
	r.writeValue(w, rq.Request, http.StatusOK, scaleOf(res, obj))
	return nil
}

// updateScale writes spec.replicas through the Scale view: PUT sends a whole
// Scale, PATCH patches the current Scale.
func (r *Registry) updateScale(ctx context.Context, res *Resource, ns, name, method, pt string, body []byte, o writeOptions) (storage.Object, error) {
	options := "UpdateOptions"
	if method == http.MethodPatch {
		options = "PatchOptions"
	}
	o.applied = true // managedFields are scaleManagedFields'
	return r.commitObject(ctx, &writeRequest{res: res, op: admission.Update, ns: ns, name: name, sub: "scale", o: o, options: options, view: scaleView(res),
		object: func(old Object, cur storage.Object) (Object, error) {
			in := body
			if method == http.MethodPatch {
				base := scalePatchBase(res, old)
				patched, err := applyPatch(&Resource{}, pt, base, body, o)
				if err != nil {
					return nil, err
				}
				if err := scalePatchedInvalid(pt, body, patched); err != nil {
					return nil, err
				}
				in = patched
			}
			var s struct {
				Kind       string `json:"kind"`
				APIVersion string `json:"apiVersion"`
				Metadata   struct {
					Name            string `json:"name"`
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
				Spec struct {
					Replicas *int64 `json:"replicas"`
				} `json:"spec"`
			}
			if err := json.Unmarshal(in, &s); err != nil {
				return nil, errBadRequest("the body is not a valid autoscaling/v1 Scale: %v", err)
			}
			if method == http.MethodPut {
				if err := checkScaleBody(in, s.Kind, s.APIVersion, s.Spec.Replicas, o.fieldValidation == fieldStrict); err != nil {
					return nil, err
				}
			}
			if s.Metadata.ResourceVersion != "" && s.Metadata.ResourceVersion != rv.Format(cur.Revision) {
				return nil, errConflict(res, name, "the object has been modified; please apply your changes to the latest version and try again")
			}
			if s.Metadata.Name != "" && s.Metadata.Name != name {
				return nil, errBadRequest("the name of the object (%s) does not match the name on the URL (%s)", s.Metadata.Name, name)
			}
			// A custom resource's negative replicas are refused by the
			// object's validation (validateScale), as kube's.
			if s.Spec.Replicas == nil || (*s.Spec.Replicas < 0 && !res.Custom) {
				return nil, errInvalid(&Resource{Group: "autoscaling", Kind: "Scale"}, name, []FieldError{{Type: "FieldValueInvalid", Field: "spec.replicas",
					Value: replicasValue(s.Spec.Replicas), Detail: "must be greater than or equal to 0"}})
			}
			next := old.deepCopy()
			changed := intAt(old, res.Scale.SpecReplicasPath) != *s.Spec.Replicas
			if method == http.MethodPut && (s.Kind == "" || s.APIVersion == "") {
				// kube's field manager cannot type a Scale sent without
				// its kind or apiVersion: the write is not tracked (its
				// error is dropped), as if replicas had not changed.
				changed = false
			}
			next.set(res.Scale.SpecReplicasPath, json.Number(strconv.FormatInt(*s.Spec.Replicas, 10)))
			meta := next.Meta()
			entries, _ := meta["managedFields"].([]any)
			if mf := scaleManagedFields(entries, res.GroupVersion(), fieldsPath(res.Scale.SpecReplicasPath), o.manager, changed); len(mf) > 0 {
				meta["managedFields"] = mf
			} else {
				delete(meta, "managedFields")
			}
			return next, nil
		}})
}

// scaleView is admission's view of a scale write: the Scales of the old
// and new objects; a mutating hook's change of spec.replicas is written
// back to the resource's replicas path.
func scaleView(res *Resource) *admissionView {
	return &admissionView{group: "autoscaling", version: "v1", kind: "Scale",
		of: func(obj Object) map[string]any {
			var m map[string]any
			_ = json.Unmarshal(mustJSON(scaleOf(res, obj)), &m)
			return m
		},
		back: func(obj Object, viewed map[string]any) (Object, error) {
			spec, _ := viewed["spec"].(map[string]any)
			var n int64
			switch x := spec["replicas"].(type) {
			case float64:
				n = int64(x)
			case json.Number:
				n, _ = x.Int64()
			case int64:
				n = x
			default:
				return obj, nil
			}
			if n != intAt(obj, res.Scale.SpecReplicasPath) {
				obj.set(res.Scale.SpecReplicasPath, json.Number(strconv.FormatInt(n, 10)))
			}
			return obj, nil
		}}
}

// validateScale is kube's check of a custom resource's scale paths
// (ValidateScaleSpec, unless status, and ValidateScaleStatus), run on
// every create and update of the object, through /scale too: a status
// write (status) checks the status paths alone.
func validateScale(res *Resource, obj Object, status bool) []FieldError {
	if res.Scale == nil || !res.Custom {
		return nil
	}
	var errs []FieldError
	if !status {
		errs = validateReplicas(obj, res.Scale.SpecReplicasPath)
	}
	errs = append(errs, validateReplicas(obj, res.Scale.StatusReplicasPath)...)
	if p := res.Scale.LabelSelectorPath; p != "" {
		if v, ok := obj.lookup(p); ok && v != nil {
			if _, isString := v.(string); !isString {
				errs = append(errs, FieldError{Type: "FieldValueInvalid", Field: p, Value: "",
					Detail: fmt.Sprintf("%s accessor error: %v is of the type %s, expected string", p, accessorValue(v), goTypeName(v))})
			}
		}
	}
	return errs
}

// validateReplicas is kube's check of one replicas path: an integer (as
// kube decodes JSON, 2.0 and 1e2 are floats), not negative, within an
// int32. The field is the path as the CRD writes it (".spec.replicas")
// and the value 0 when it is not an integer, as kube's.
func validateReplicas(obj Object, path string) []FieldError {
	if path == "" {
		return nil
	}
	if err := accessorError(obj, path); err != nil {
		return []FieldError{*err}
	}
	v, ok := obj.lookup(path)
	if !ok || v == nil {
		return nil
	}
	n, isNumber := v.(json.Number)
	i, err := n.Int64()
	if !isNumber || err != nil {
		return []FieldError{{Type: "FieldValueInvalid", Field: path, Value: int64(0),
			Detail: fmt.Sprintf("%s accessor error: %v is of the type %s, expected int64", path, accessorValue(v), goTypeName(v))}}
	}
	switch {
	case i < 0:
		return []FieldError{{Type: "FieldValueInvalid", Field: path, Value: i, Detail: "should be a non-negative integer"}}
	case i > math.MaxInt32:
		return []FieldError{{Type: "FieldValueInvalid", Field: path, Value: i, Detail: fmt.Sprintf("should be less than or equal to %d", math.MaxInt32)}}
	}
	return nil
}

// accessorValue is v as kube's unstructured accessors print it (%v of the
// decoded value: a non-integer number is a float64).
func accessorValue(v any) any {
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		return f
	}
	return v
}

// goTypeName is the Go type kube's unstructured decoding gives v (%T).
func goTypeName(v any) string {
	switch v.(type) {
	case json.Number:
		return "float64"
	case bool:
		return "bool"
	case map[string]any:
		return "map[string]interface {}"
	case []any:
		return "[]interface {}"
	}
	return "string"
}

// accessorError is kube's error (unstructured.NestedFieldNoCopy's) for a
// replicas path that goes through a value that is not an object:
//
//	path .spec.replicas, {"spec": [1]}  →  .spec.replicas: Invalid value: 0:
//	  .spec.replicas accessor error: [1] is of the type []interface {}, expected map[string]interface{}
func accessorError(obj Object, path string) *FieldError {
	fields := strings.Split(strings.TrimPrefix(path, "."), ".")
	var cur any = map[string]any(obj)
	for i, f := range fields {
		if cur == nil {
			return nil
		}
		m, ok := cur.(map[string]any)
		if !ok {
			typ := "[]interface {}"
			switch c := cur.(type) {
			case string:
				typ = "string"
			case json.Number:
				typ = "int64"
				if _, err := c.Int64(); err != nil {
					typ = "float64"
				}
			case bool:
				typ = "bool"
			}
			return &FieldError{Type: "FieldValueInvalid", Field: path, Value: int64(0), Detail: fmt.Sprintf("%s accessor error: %v is of the type %s, expected map[string]interface{}",
				"."+strings.Join(fields[:i+1], "."), cur, typ)}
		}
		if cur, ok = m[f]; !ok {
			return nil
		}
	}
	return nil
}

// checkScaleBody refuses a Scale body kube refuses (400): another kind or
// group version, replicas beyond an int32, and, under Strict, a field a
// Scale has not. kube's message names its internal scheme; kapi's says
// what to fix.
func checkScaleBody(body []byte, kind, apiVersion string, replicas *int64, strict bool) error {
	const bad = "the body is not a valid autoscaling/v1 Scale: "
	switch {
	case kind != "" && kind != "Scale":
		return errBadRequest(bad+"kind is %q; send kind Scale", kind)
	case apiVersion != "" && apiVersion != "autoscaling/v1":
		return errBadRequest(bad+"apiVersion is %q; send autoscaling/v1", apiVersion)
	case replicas != nil && (*replicas > math.MaxInt32 || *replicas < math.MinInt32):
		return errBadRequest(bad+"spec.replicas %d is beyond an int32", *replicas)
	}
	if !strict {
		return nil
	}
	var fields map[string]any
	if json.Unmarshal(body, &fields) != nil {
		return nil
	}
	known := map[string][]string{"spec": {"replicas"}, "status": {"replicas", "selector"}}
	for k, v := range fields {
		sub, isKnown := known[k]
		switch {
		case k == "kind" || k == "apiVersion" || k == "metadata":
		case !isKnown:
			return errBadRequest(bad+"strict decoding error: unknown field %q", k)
		default:
			m, _ := v.(map[string]any)
			for f := range m {
				if !slices.Contains(sub, f) {
					return errBadRequest(bad+"strict decoding error: unknown field %q", k+"."+f)
				}
			}
		}
	}
	return nil
}

// scaleManagedFields are the managedFields after a write of the scale
// subresource by manager, as kube's ScaleHandler makes them
// (k8s.io/apiserver's managedfields): the write is tracked on the Scale,
// whose entries are the parent's that own the replicas path, re-keyed by
// apiVersion autoscaling/v1, then mapped back. So an Update entry owning
// replicas always loses them, and gets them back in an entry of its own,
// without a time, unless the write changed replicas (changed); an Apply
// entry (keyed without apiVersion) keeps them unless the write changed
// them; and a write that changed replicas gives them to manager, on
// subresource scale, without a time. path is the replicas path as
// FieldsV1 keys.
//
// Worked example: widget w created by "compare" (one Update entry owning
// f:spec.f:color and f:spec.f:replicas), then a scale PATCH by "kubectl"
// setting replicas 1 to 5: "compare" keeps f:spec.f:color, "kubectl"
// (Update, subresource scale, no time) owns f:spec.f:replicas. Had the
// PATCH left replicas at 1, "compare" would keep f:spec.f:color in its
// entry and own f:spec.f:replicas in a second entry without a time.
//
// A Scale that no entry owns (no manager owns the replicas path: the
// object's creator applied it and then left it out) has no managedFields,
// and kube's field manager does not track an update of an object whose
// managedFields are empty (its skipNonApplied stage): such a write leaves
// the entries as they are, and a later apply of replicas has no
// conflict.
func scaleManagedFields(entries []any, gv string, path []string, manager string, changed bool) []any {
	if !slices.ContainsFunc(entries, func(e any) bool {
		m, _ := e.(map[string]any)
		fv, _ := m["fieldsV1"].(map[string]any)
		return hasFields(fv, path)
	}) {
		return entries
	}
	var out, replicas []any
	own := func(manager, subresource string) {
		e := map[string]any{"manager": manager, "operation": "Update", "apiVersion": gv, "fieldsType": "FieldsV1", "fieldsV1": fieldsAt(path)}
		if subresource != "" {
			e["subresource"] = subresource
		}
		for _, r := range replicas {
			if r := r.(map[string]any); r["manager"] == manager && r["subresource"] == e["subresource"] {
				return
			}
		}
		replicas = append(replicas, e)
	}
	for _, e := range entries {
		m, ok := e.(map[string]any)
		fv, _ := m["fieldsV1"].(map[string]any)
		if !ok || !hasFields(fv, path) {
			out = append(out, e)
			continue
		}
		apply := m["operation"] == "Apply"
		if apply && !changed {
			out = append(out, e)
			continue
		}
		if rest := withoutFields(fv, path); len(rest) > 0 {
			c := maps.Clone(m)
			c["fieldsV1"] = rest
			out = append(out, c)
		}
		if !apply && !changed {
			sub, _ := m["subresource"].(string)
			mgr, _ := m["manager"].(string)
			own(mgr, sub)
		}
	}
	if changed {
		own(manager, "scale")
	}
	return append(replicas, out...)
}

// fieldsPath is a dotted field path (".spec.replicas") as FieldsV1 keys.
func fieldsPath(p string) []string {
	var keys []string
	for _, k := range strings.Split(strings.TrimPrefix(p, "."), ".") {
		keys = append(keys, "f:"+k)
	}
	return keys
}

// fieldsAt is the FieldsV1 set of the one field at path.
func fieldsAt(path []string) map[string]any {
	m := map[string]any{}
	for i := len(path) - 1; i >= 0; i-- {
		m = map[string]any{path[i]: m}
	}
	return m
}

func hasFields(fv map[string]any, path []string) bool {
	for _, k := range path {
		next, ok := fv[k].(map[string]any)
		if !ok {
			return false
		}
		fv = next
	}
	return true
}

// withoutFields is a copy of fv without the field at path; a map left
// empty goes too (one with "." stays: the parent itself is still owned).
func withoutFields(fv map[string]any, path []string) map[string]any {
	c := maps.Clone(fv)
	if len(path) == 1 {
		delete(c, path[0])
		return c
	}
	sub, _ := c[path[0]].(map[string]any)
	if rest := withoutFields(sub, path[1:]); len(rest) > 0 {
		c[path[0]] = rest
	} else {
		delete(c, path[0])
	}
	return c
}

// replicasValue is a Scale's spec.replicas as its field error shows it:
// kube's int32, written as a number (-1), or "null" when missing.
func replicasValue(p *int64) any {
	if p == nil {
		return "null"
	}
	return *p
}

// serveCustom calls a user-defined subresource handler.
func (r *Registry) serveCustom(w http.ResponseWriter, rq *routed) error {
	h := rq.res.Subresources[rq.subresource]
	o, err := r.get(rq.Context(), rq.res, rq.namespace, rq.name, storage.GetOptions{})
	if err != nil {
		return err
	}
	obj, err := decodeStored(o.Value, o.Revision)
	if err != nil {
		return errInternal(err)
	}
	body, err := r.readBody(rq.Request)
	if err != nil {
		return err
	}
	manager := rq.URL.Query().Get("fieldManager")
	if manager == "" {
		manager = managerFromUserAgent(rq.UserAgent())
	}
	out, err := h(rq.Context(), SubresourceRequest{Method: rq.Method, Namespace: rq.namespace, Name: rq.name, Object: obj, Body: body,
		ContentType: rq.Header.Get("Content-Type"), Manager: manager})
	if err != nil {
		return toStatus(err, rq.res, rq.name)
	}
	code := http.StatusOK
	if rq.Method == http.MethodPost {
		code = http.StatusCreated // a POST creates (kube's binding, eviction, token)
	}
	r.writeValue(w, rq.Request, code, out)
	return nil
}
