package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
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
		l, ok := v.([]any)
		if k != "managedFields" || !ok {
			return mustJSON(v)
		}
		var lb bytes.Buffer
		lb.WriteByte('[')
		for i, e := range l {
			if i > 0 {
				lb.WriteByte(',')
			}
			if em, ok := e.(map[string]any); ok {
				orderedJSON(&lb, em, managedFieldsOrder, func(_ string, v any) []byte { return mustJSON(v) })
			} else {
				lb.Write(mustJSON(e))
			}
		}
		lb.WriteByte(']')
		return lb.Bytes()
	})
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
// when it decodes. base is the Scale patched, whose metadata the quote
// keeps in its order when the patch left it alone.
func scalePatchedInvalid(base, patched []byte) error {
	m, _, err := jsonobj.Decode(patched, false)
	if err != nil || m == nil {
		return nil // updateScale's own decoding reports it
	}
	msg := scaleDecodeError(m)
	if msg == "" {
		return nil
	}
	bm, _, _ := jsonobj.Decode(base, false)
	var buf bytes.Buffer
	orderedJSON(&buf, m, nil, func(k string, v any) []byte {
		if md, ok := v.(map[string]any); ok && k == "metadata" && deepEqual(v, bm["metadata"]) {
			return typedMetaJSON(md)
		}
		return mustJSON(v)
	})
	c := FieldError{Type: "FieldValueInvalid", Field: "patch", Value: buf.String(), Detail: msg}
	return newStatus(http.StatusUnprocessableEntity, "Invalid", ` "" is invalid: `+c.Error(),
		&StatusDetails{Causes: []StatusCause{{Type: c.Type, Message: c.ErrorBody(), Field: c.Field}}})
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
