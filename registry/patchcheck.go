package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/registry/internal/gojson"
	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
)

// checkPatched refuses a JSON or merge patch's result as kube's patch
// handler does before it validates anything else: kube decodes the
// patched JSON into its object type, so
//
//   - metadata whose fields do not fit ObjectMeta is a 422 on field
//     "patch" quoting the patched object with encoding/json's message
//     (a merge patch {"metadata":{"labels":"x"}} gives ` "" is invalid:
//     patch: Invalid value: "{...}": json: cannot unmarshal string into Go
//     struct field ObjectMeta.labels of type map[string]string`);
//   - a built-in kind's patched object its Go types cannot hold is the
//     same 422, with encoding/json's message for the first error in the
//     patched JSON (a merge patch {"spec":{"replicas":"x"}} of a
//     Deployment: `json: cannot unmarshal string into Go struct field
//     DeploymentSpec.spec.replicas of type int32`), whatever the
//     subresource: kube decodes the whole object before a /status write
//     drops its spec;
//   - a custom resource patched to another apiVersion is refused by its
//     type check, 422 on field apiVersion ("must be example.com/v1"), and
//     kind when that changed too; another version of its own group and
//     kind is first decoded without a schema (every field but apiVersion,
//     kind and metadata unknown: warned, or refused under Strict).
//
// o is the write's options (its field validation), pt and body the
// patch; nil means fine. For a built-in kind, the metadata error names
// its field by its path (ObjectMeta.metadata.labels), and the quote keeps
// the typed object's metadata in its field order where the patch did not
// go (writeV4; the rest of the object in name order, where kube keeps its
// Go field order).
func checkPatched(ctx context.Context, res *Resource, obj Object, o writeOptions, pt string, body []byte) error {
	if md, ok := obj["metadata"].(map[string]any); ok {
		if msg := objectMetaDecodeError(md); msg != "" {
			if res.Custom { // its metadata decoded alone, its JSON sorted
				return patchedInvalid(obj)(msg)
			}
			// A built-in kind's object decoded whole, as json-patch v4
			// wrote it from the typed object's JSON.
			var buf bytes.Buffer
			writeV4(&buf, map[string]any(obj), nil, v4Touched(pt, body), typedJSON)
			return patchInvalid(buf.String(), strings.Replace(msg, "Go struct field ObjectMeta.", "Go struct field ObjectMeta.metadata.", 1))
		}
	}
	if !res.Custom && res.Protobuf != nil && res.Schema != nil {
		var quoted []byte
		patchedJSON := func() ([]byte, error) {
			if quoted == nil {
				var buf bytes.Buffer
				writeV4(&buf, map[string]any(obj), nil, v4Touched(pt, body), typedJSON)
				quoted = buf.Bytes()
			}
			return quoted, nil
		}
		if err := gojson.Check(res.Schema, map[string]any(obj), patchedJSON); err != nil {
			return patchInvalid(string(quoted), err.Error())
		}
	}
	av, _ := obj["apiVersion"].(string)
	if !res.Custom || av == "" || av == res.GroupVersion() {
		return nil
	}
	kind, _ := obj["kind"].(string)
	group, _, found := strings.Cut(av, "/")
	if !found {
		group = "" // a core version ("v1")
	}
	if kind == res.Kind && group == res.Group {
		// Another version of the resource's own kind: kube's decoder
		// has no schema for it, and every field but these is unknown.
		var unknown []string
		for k := range obj {
			if k != "apiVersion" && k != "kind" && k != "metadata" {
				unknown = append(unknown, fmt.Sprintf("unknown field %q", k))
			}
		}
		slices.Sort(unknown)
		if err := strictProblems(ctx, o, unknown, patchedInvalid(obj)); err != nil {
			return err
		}
	}
	var errs []FieldError
	if kind != res.Kind {
		errs = append(errs, FieldError{Type: "FieldValueInvalid", Field: "kind", Value: kind, Detail: "must be " + res.Kind})
	}
	errs = append(errs, FieldError{Type: "FieldValueInvalid", Field: "apiVersion", Value: av, Detail: "must be " + res.GroupVersion()})
	return errInvalid(&Resource{Group: group, Kind: kind}, obj.Name(), errs)
}

// checkStrategicPatched refuses a strategic merge patch's result that a
// built-in kind's Go types cannot hold, as kube's patch handler does: it
// converts the patched map into its object type
// (runtime.DefaultUnstructuredConverter) and answers 422 on field
// "patch", quoting the patch as Go prints a map, with the converter's
// error (gojson.FromUnstructured):
//
//	{"spec":{"replicas":"x"}} of a Deployment → ` "" is invalid: patch:
//	Invalid value: "map[spec:map[replicas:x]]": unrecognized type: int32`
//
// It runs for every subresource: kube converts the whole object before a
// /status write drops its spec.
func checkStrategicPatched(res *Resource, obj Object, body []byte) error {
	if res.Custom || res.Protobuf == nil || res.Schema == nil {
		return nil
	}
	err := gojson.FromUnstructured(res.Schema, map[string]any(obj))
	if err == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var p any
	_ = d.Decode(&p)
	return patchInvalid(gojson.Sprint(p), err.Error())
}

// objectMetaFields are ObjectMeta's JSON fields whose type
// objectMetaDecodeError checks, and the Go type encoding/json names.
var objectMetaFields = map[string]string{
	"name": "string", "generateName": "string", "namespace": "string", "selfLink": "string",
	"resourceVersion": "string", "uid": "types.UID",
	"generation": "int64", "deletionGracePeriodSeconds": "int64",
	// metav1.Time decodes its JSON as a string first.
	"creationTimestamp": "string", "deletionTimestamp": "string",
	"labels": "map[string]string", "annotations": "map[string]string",
	"finalizers":      "[]string",
	"ownerReferences": "[]v1.OwnerReference", "managedFields": "[]v1.ManagedFieldsEntry",
}

// objectMetaDecodeError is the error kube's decoding of md into an
// ObjectMeta reports ("" for none): encoding/json's first type error, the
// fields taken in the order of kube's JSON (sorted keys). Nulls decode to
// zero values. The elements of ownerReferences and managedFields and the
// timestamps' formats are checked elsewhere.
//
// Worked example: {"labels":{"a":1},"name":2} gives "json: cannot
// unmarshal number into Go struct field ObjectMeta.labels of type
// string" (labels comes first; a label value must be a string).
func objectMetaDecodeError(md map[string]any) string {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	bad := func(v any, field, typ string) string {
		what := jsonobj.Kind(v)
		if n, ok := v.(json.Number); ok && typ == "int64" {
			what = "number " + n.String() // a number that is not an int64
		}
		return fmt.Sprintf("json: cannot unmarshal %s into Go struct field ObjectMeta.%s of type %s", what, field, typ)
	}
	for _, k := range keys {
		v, typ := md[k], objectMetaFields[k]
		if v == nil || typ == "" {
			continue
		}
		switch typ {
		case "string", "types.UID":
			if _, ok := v.(string); !ok {
				return bad(v, k, typ)
			}
		case "int64":
			n, ok := v.(json.Number)
			if !ok {
				return bad(v, k, typ)
			}
			if _, err := n.Int64(); err != nil {
				return bad(v, k, typ)
			}
		case "map[string]string":
			m, ok := v.(map[string]any)
			if !ok {
				return bad(v, k, typ)
			}
			mk := make([]string, 0, len(m))
			for x := range m {
				mk = append(mk, x)
			}
			slices.Sort(mk)
			for _, x := range mk {
				if _, ok := m[x].(string); !ok && m[x] != nil {
					return bad(m[x], k, "string")
				}
			}
		default: // lists
			l, ok := v.([]any)
			if !ok {
				return bad(v, k, typ)
			}
			if typ != "[]string" {
				continue
			}
			for _, e := range l {
				if _, ok := e.(string); !ok && e != nil {
					return bad(e, k, "string")
				}
			}
		}
	}
	return ""
}
