package registry

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
)

// A PATCH of /scale patches the Scale kube's scale handler builds from the
// object: autoscaling/v1 Scale's JSON, its fields in Go struct order, with
// the managedFields of the replicas path re-keyed to autoscaling/v1
// (ScaleHandler.ToSubresource). A patched Scale that does not decode is
// kube's 422 on field "patch" quoting the patched JSON as
// gopkg.in/evanphx/json-patch.v4 writes it: the top level re-encoded with
// sorted keys, an untouched metadata as it was.

// objectMetaOrder is ObjectMeta's fields in Go struct order, and
// managedFieldsOrder ManagedFieldsEntry's: kube's JSON of a typed object.
var (
	objectMetaOrder = []string{"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
		"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
		"finalizers", "managedFields"}
	managedFieldsOrder = []string{"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"}
)

// orderedJSON writes m's keys in order first, then the rest sorted.
func orderedJSON(buf *bytes.Buffer, m map[string]any, order []string, inner func(k string, v any) []byte) {
	keys := make([]string, 0, len(m))
	for _, k := range order {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	var rest []string
	for k := range m {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	buf.WriteByte('{')
	for i, k := range append(keys, rest...) {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(inner(k, m[k]))
	}
	buf.WriteByte('}')
}

// typedMetaJSON is metadata as kube encodes an ObjectMeta.
func typedMetaJSON(md map[string]any) []byte {
	var buf bytes.Buffer
	orderedJSON(&buf, md, objectMetaOrder, func(k string, v any) []byte {
		if k == "managedFields" {
			return managedFieldsJSON(v)
		}
		return mustJSON(v)
	})
	return buf.Bytes()
}

// managedFieldsJSON is a managedFields list as kube encodes it, each entry
// in ManagedFieldsEntry's order.
func managedFieldsJSON(v any) []byte {
	l, ok := v.([]any)
	if !ok {
		return mustJSON(v)
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, e := range l {
		if i > 0 {
			buf.WriteByte(',')
		}
		if em, ok := e.(map[string]any); ok {
			orderedJSON(&buf, em, managedFieldsOrder, func(_ string, v any) []byte { return mustJSON(v) })
		} else {
			buf.Write(mustJSON(e))
		}
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// scalePatchBase is the Scale a PATCH of /scale applies to, as kube's JSON.
func scalePatchBase(res *Resource, obj Object) []byte {
	s := scaleOf(res, obj)
	md := s.Metadata
	if mf := scaleSubresourceFields(obj.Meta()["managedFields"], res.GroupVersion(), fieldsPath(res.Scale.SpecReplicasPath)); len(mf) > 0 {
		md = map[string]any{}
		for k, v := range s.Metadata {
			md[k] = v
		}
		md["managedFields"] = mf
	}
	status := map[string]any{"replicas": s.Status.Replicas}
	if s.Status.Selector != "" {
		status["selector"] = s.Status.Selector
	}
	var buf bytes.Buffer
	buf.WriteString(`{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":`)
	buf.Write(typedMetaJSON(md))
	fmt.Fprintf(&buf, `,"spec":{"replicas":%d},"status":`, s.Spec.Replicas)
	orderedJSON(&buf, status, []string{"replicas", "selector"}, func(_ string, v any) []byte { return mustJSON(v) })
	buf.WriteByte('}')
	return buf.Bytes()
}

// scaleSubresourceFields are the managedFields of the Scale of an object
// whose entries are entries (kube's ScaleHandler.ToSubresource): each
// entry of version gv owning the replicas path (path, as FieldsV1 keys),
// owning spec.replicas alone, at autoscaling/v1.
func scaleSubresourceFields(entries any, gv string, path []string) []any {
	list, _ := entries.([]any)
	var out []any
	for _, e := range list {
		m, ok := e.(map[string]any)
		fv, _ := m["fieldsV1"].(map[string]any)
		if !ok || m["apiVersion"] != gv || !hasFields(fv, path) {
			continue
		}
		c := map[string]any{"apiVersion": "autoscaling/v1", "fieldsType": "FieldsV1", "fieldsV1": fieldsAt([]string{"f:spec", "f:replicas"})}
		for _, k := range []string{"manager", "operation", "time", "subresource"} {
			if v, ok := m[k]; ok {
				c[k] = v
			}
		}
		out = append(out, c)
	}
	return out
}

// scalePatchedInvalid checks a patched Scale (JSON) as kube decodes it into
// an autoscaling/v1 Scale: a type error is its 422 on field "patch"; nil
// when it decodes. pt and body are the patch, which tells what the quote
// keeps in the Scale's order (v4Touched).
func scalePatchedInvalid(pt string, body, patched []byte) error {
	m, _, err := jsonobj.Decode(patched, false)
	if err != nil || m == nil {
		return nil // updateScale's own decoding reports it
	}
	msg := scaleDecodeError(m)
	if msg == "" {
		return nil
	}
	var buf bytes.Buffer
	writeV4(&buf, m, nil, v4Touched(pt, body), typedJSON)
	return patchInvalid(buf.String(), msg)
}

// patchInvalid is kube's 422 for a patched object it cannot decode: on
// field "patch", quoting the patched JSON, with the decoding error.
func patchInvalid(patched, msg string) error {
	c := FieldError{Type: "FieldValueInvalid", Field: "patch", Value: patched, Detail: msg}
	return newStatus(http.StatusUnprocessableEntity, "Invalid", ` "" is invalid: `+c.Error(),
		&StatusDetails{Causes: []StatusCause{{Type: c.Type, Message: c.ErrorBody(), Field: c.Field}}})
}

// writeV4 writes v, at path in a patched document, as
// gopkg.in/evanphx/json-patch.v4 writes its result: an object the patch
// went into (touched) is re-encoded with sorted keys, anything else keeps
// the original's encoding (typed).
func writeV4(buf *bytes.Buffer, v any, path []string, touched func([]string) bool, typed func([]string, any) []byte) {
	m, ok := v.(map[string]any)
	if !ok || !touched(path) {
		buf.Write(typed(path, v))
		return
	}
	orderedJSON(buf, m, nil, func(k string, child any) []byte {
		var b bytes.Buffer
		writeV4(&b, child, append(slices.Clip(path), k), touched, typed)
		return b.Bytes()
	})
}

// v4Touched reports the objects of a document that json-patch v4 decodes
// (and so re-encodes) applying body, a patch of type pt: the root, and
// for a merge patch each object the patch merges an object into, for a
// JSON patch each parent of an operation's path or from.
func v4Touched(pt string, body []byte) func([]string) bool {
	var parents [][]string
	if pt == patchJSON {
		var ops []struct{ Path, From string }
		_ = json.Unmarshal(body, &ops)
		for _, op := range ops {
			for _, p := range []string{op.Path, op.From} {
				parts := strings.Split(p, "/")
				for j, t := range parts {
					parts[j] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
				}
				for i := 1; i < len(parts); i++ {
					parents = append(parents, slices.Clone(parts[1:i]))
				}
			}
		}
		return func(path []string) bool {
			return len(path) == 0 || slices.ContainsFunc(parents, func(p []string) bool { return slices.Equal(p, path) })
		}
	}
	var p any
	_ = json.Unmarshal(body, &p)
	return func(path []string) bool {
		cur := p
		for _, k := range path {
			m, _ := cur.(map[string]any)
			cur = m[k]
		}
		_, ok := cur.(map[string]any)
		return ok
	}
}

// typedJSON is the value at path of a typed object (a Scale, a built-in
// kind) as kube encodes it: metadata and its managedFields in their Go
// struct order, the rest sorted (a Scale's spec and status, a ConfigMap's
// data: their order is that).
func typedJSON(path []string, v any) []byte {
	switch {
	case len(path) == 1 && path[0] == "metadata":
		if md, ok := v.(map[string]any); ok {
			return typedMetaJSON(md)
		}
	case len(path) == 2 && path[0] == "metadata" && path[1] == "managedFields":
		return managedFieldsJSON(v)
	case len(path) == 3 && path[0] == "metadata" && path[1] == "managedFields":
		if em, ok := v.(map[string]any); ok {
			var buf bytes.Buffer
			orderedJSON(&buf, em, managedFieldsOrder, func(_ string, v any) []byte { return mustJSON(v) })
			return buf.Bytes()
		}
	}
	return mustJSON(v)
}

// scaleDecodeError is encoding/json's first type error decoding m into an
// autoscaling/v1 Scale, its fields in sorted order ("" for none).
func scaleDecodeError(m map[string]any) string {
	bad := func(v any, strct, field, typ string) string {
		what := jsonobj.Kind(v)
		if n, ok := v.(json.Number); ok && typ == "int32" {
			what = "number " + n.String()
		}
		return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s.%s of type %s", what, strct, field, typ)
	}
	str := func(v any, strct, field string) string {
		if _, ok := v.(string); ok || v == nil {
			return ""
		}
		return bad(v, strct, field, "string")
	}
	int32At := func(v any, strct, field string) string {
		if v == nil {
			return ""
		}
		n, ok := v.(json.Number)
		if !ok {
			return bad(v, strct, field, "int32")
		}
		if i, err := n.Int64(); err != nil || i > math.MaxInt32 || i < math.MinInt32 {
			return bad(v, strct, field, "int32")
		}
		return ""
	}
	// apiVersion and kind are read before (and are kept as sent).
	for _, k := range []string{"metadata", "spec", "status"} {
		v := m[k]
		if v == nil {
			continue
		}
		var msg string
		switch k {
		case "metadata":
			md, ok := v.(map[string]any)
			if !ok {
				msg = bad(v, "Scale", k, "v1.ObjectMeta")
			} else if e := objectMetaDecodeError(md); e != "" {
				// encoding/json names the field by its whole path.
				msg = strings.Replace(e, "Go struct field ObjectMeta.", "Go struct field ObjectMeta.metadata.", 1)
			}
		case "spec":
			sm, ok := v.(map[string]any)
			if !ok {
				msg = bad(v, "Scale", k, "v1.ScaleSpec")
			} else {
				msg = int32At(sm["replicas"], "ScaleSpec", "spec.replicas")
			}
		case "status":
			sm, ok := v.(map[string]any)
			if !ok {
				msg = bad(v, "Scale", k, "v1.ScaleStatus")
			} else if msg = int32At(sm["replicas"], "ScaleStatus", "status.replicas"); msg == "" {
				msg = str(sm["selector"], "ScaleStatus", "status.selector")
			}
		}
		if msg != "" {
			return msg
		}
	}
	return ""
}

// scaleFieldManager is the field manager of autoscaling/v1 Scale, which
// an apply to /scale merges with (kube's scale handler applies to the
// Scale, then maps its managedFields back: scaleToParent).
var scaleFieldManager = sync.OnceValue(func() *patch.FieldManager {
	s, err := schema.Parse([]byte(`{"type":"object","properties":{
		"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
		"spec":{"type":"object","properties":{"replicas":{"type":"integer"}}},
		"status":{"type":"object","properties":{"replicas":{"type":"integer"},"selector":{"type":"string"}}}}}`))
	if err != nil {
		panic(fmt.Sprintf("registry: the Scale schema: %v", err)) // a constant: checked by tests
	}
	fm, err := patch.NewFieldManager(mergeSchema(s), "autoscaling/v1", patch.FieldManagerOptions{Kind: "Scale"})
	if err != nil {
		panic(fmt.Sprintf("registry: the Scale field manager: %v", err))
	}
	return fm
})

// managerIdentity is what kube's managedFields key an entry by
// (BuildManagerIdentifier): manager, operation, subresource, and the
// apiVersion of an Update (an applier keeps one entry across versions).
func managerIdentity(m map[string]any) string {
	av := m["apiVersion"]
	if m["operation"] == "Apply" {
		av = nil
	}
	return fmt.Sprint(m["manager"], "\x00", m["operation"], "\x00", m["subresource"], "\x00", av)
}

// scaleToParent maps the managedFields of a written Scale (scale) back
// onto the object's (parent), as kube's ScaleHandler.ToParent: path is the
// replicas path (FieldsV1 keys) of version gv. A parent entry owning the
// replicas keeps them only if the Scale still has its entry (an applier's
// entry; an Update entry is keyed by its apiVersion, which differs), and
// loses them otherwise; every other Scale entry owning spec.replicas
// becomes an entry owning the replicas alone, with the time of the
// parent's entry of the same key (none for a new one), replacing it.
//
// Worked example: "compare" (Update) owns f:spec.f:color and
// f:spec.f:replicas; "scaler" applies replicas 5 to /scale with force:
// "compare" keeps f:spec.f:color, and a new "scaler" Apply entry on
// subresource scale, without a time, owns f:spec.f:replicas.
func scaleToParent(parent, scale []any, gv string, path []string) []any {
	inScale := map[string]bool{}
	var order []string
	scaleEntries := map[string]map[string]any{}
	for _, e := range scale {
		if m, ok := e.(map[string]any); ok {
			k := managerIdentity(m)
			if !inScale[k] {
				order = append(order, k)
			}
			inScale[k] = true
			scaleEntries[k] = m
		}
	}
	out := map[string]map[string]any{}
	var keys []string
	times := map[string]any{}
	put := func(k string, m map[string]any) {
		if _, ok := out[k]; !ok {
			keys = append(keys, k)
		}
		out[k] = m
	}
	for _, e := range parent {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		k := managerIdentity(m)
		if t, ok := m["time"]; ok {
			times[k] = t
		}
		fv, _ := m["fieldsV1"].(map[string]any)
		switch {
		case !hasFields(fv, path):
			put(k, m)
		case !inScale[k]:
			if rest := withoutFields(fv, path); len(rest) > 0 {
				c := maps.Clone(m)
				c["fieldsV1"] = rest
				put(k, c)
			}
		default:
			put(k, m)
			delete(inScale, k)
		}
	}
	for _, k := range order {
		s := scaleEntries[k]
		fv, _ := s["fieldsV1"].(map[string]any)
		if !inScale[k] || !hasFields(fv, []string{"f:spec", "f:replicas"}) {
			continue
		}
		e := map[string]any{"manager": s["manager"], "operation": s["operation"], "apiVersion": gv, "fieldsType": "FieldsV1", "fieldsV1": fieldsAt(path)}
		if sub, ok := s["subresource"]; ok {
			e["subresource"] = sub
		}
		if t, ok := times[k]; ok {
			e["time"] = t
		}
		put(k, e)
	}
	list := make([]any, 0, len(keys))
	for _, k := range keys {
		list = append(list, out[k])
	}
	sortManagedFields(list)
	return list
}

// sortManagedFields orders entries as kube encodes managedFields
// (sortEncodedManagedFields): by operation, time (none first), manager,
// apiVersion and subresource.
func sortManagedFields(entries []any) {
	field := func(e any, k string) string {
		m, _ := e.(map[string]any)
		s, _ := m[k].(string)
		return s
	}
	seconds := func(e any) int64 {
		t, err := time.Parse(time.RFC3339, field(e, "time"))
		if err != nil {
			return 0
		}
		return t.Unix()
	}
	slices.SortStableFunc(entries, func(p, q any) int {
		if c := strings.Compare(field(p, "operation"), field(q, "operation")); c != 0 {
			return c
		}
		if c := cmp.Compare(seconds(p), seconds(q)); c != 0 {
			return c
		}
		for _, k := range []string{"manager", "apiVersion", "subresource"} {
			if c := strings.Compare(field(p, k), field(q, k)); c != 0 {
				return c
			}
		}
		return 0
	})
}

// applyScale is a server-side apply to /scale: config, an autoscaling/v1
// Scale apply configuration, is merged into the object's Scale by
// scaleFieldManager (a conflict is the 409 of any apply), and the merged
// replicas and managedFields are written back to the object.
func (r *Registry) applyScale(ctx context.Context, res *Resource, ns, name string, config Object, o writeOptions, force bool) (storage.Object, error) {
	opts := patch.ApplyOptions{Manager: o.manager, Force: force, Subresource: "scale", Now: r.opts.Now()}
	o.applied = true // managedFields are scaleToParent's
	path := fieldsPath(res.Scale.SpecReplicasPath)
	return r.commitObject(ctx, &writeRequest{res: res, op: admission.Update, ns: ns, name: name, sub: "scale", o: o, options: "PatchOptions", view: scaleView(res),
		object: func(old Object, cur storage.Object) (Object, error) {
			base, _, err := decodeJSON(scalePatchBase(res, old), false)
			if err != nil {
				return nil, errInternal(err)
			}
			merged, err := scaleFieldManager().Apply(base, config, opts)
			if err != nil {
				return nil, applyStatus(res, name, err)
			}
			scale := Object(merged)
			if s := scale.metaString("resourceVersion"); s != "" && s != rv.Format(cur.Revision) {
				return nil, errConflict(res, name, "the object has been modified; please apply your changes to the latest version and try again")
			}
			if got := scale.Name(); got != "" && got != name {
				return nil, errBadRequest("the name of the object (%s) does not match the name on the URL (%s)", got, name)
			}
			replicas, ok := scale.lookup(".spec.replicas")
			n, isNumber := replicas.(json.Number)
			if !ok || replicas == nil {
				n, isNumber = "0", true // an unset int32: kube's Scale has 0
			}
			if _, err := n.Int64(); !isNumber || err != nil {
				return nil, errBadRequest("the body is not a valid autoscaling/v1 Scale: spec.replicas %v is not an integer", replicas)
			}
			next := old.deepCopy()
			next.set(res.Scale.SpecReplicasPath, n)
			scaleEntries, _ := scale.Meta()["managedFields"].([]any)
			parentEntries, _ := old.Meta()["managedFields"].([]any)
			if mf := scaleToParent(parentEntries, scaleEntries, res.GroupVersion(), path); len(mf) > 0 {
				next.Meta()["managedFields"] = mf
			} else {
				delete(next.Meta(), "managedFields")
			}
			return next, nil
		}})
}

// serveScaleApply reads an apply to /scale as serveApply reads one.
func (r *Registry) serveScaleApply(rq *routed, body []byte, o writeOptions, force bool) (storage.Object, error) {
	if rq.URL.Query().Get("fieldManager") == "" {
		return storage.Object{}, optionsInvalid("PatchOptions", "fieldManager", "FieldValueRequired", "Required value: is required for apply patch")
	}
	f := negotiate.YAML
	if mediaType(rq.Request) == patchApplyCBOR {
		f = negotiate.CBOR
	}
	config, err := decodeApplyConfig(f, body)
	if err != nil {
		return storage.Object{}, err
	}
	return r.applyScale(rq.Context(), rq.res, rq.namespace, rq.name, config, o, force)
}
