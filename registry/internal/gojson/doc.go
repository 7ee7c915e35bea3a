// Package gojson finds the error Go's encoding/json reports decoding a
// JSON document into the Go types a schema describes, in its words: kube
// decodes a built-in kind's body into k8s.io/api's Go types (with
// sigs.k8s.io/json, a fork of encoding/json) and answers 400 quoting that
// error, so kapi, which decodes bodies as untyped JSON, checks them
// against the kind's schema and says what kube says.
//
// Check follows encoding/json's rules: null fits every type; a value of
// the wrong JSON type is an UnmarshalTypeError naming the innermost Go
// struct, the path of JSON field names to the value (map keys and list
// indices left out) and the Go type; decoding goes on after one, and the
// first in document order is reported; an integer that does not parse or
// overflows is "number <literal>"; a []byte field's string must be
// standard base64, else base64's own error. Worked example, on ConfigMap's
// schema (GoTypes v1.ConfigMap, v1.ObjectMeta):
//
//	{"metadata": {"labels": {"x": 1}}, "data": []}
//	→ json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string
//
// (the label comes first in the document; data's error is not reported).
// Nodes whose Go type the schema cannot tell — any value, int-or-string,
// date-time (metav1.Time), opaque objects, structs without a GoType — are
// not checked: their types read themselves with their own rules.
//
// FromUnstructured does the same for apimachinery's unstructured
// converter, which kube uses on a strategic merge patch's result (its
// messages: "unrecognized type: int32", "cannot convert int64 to
// string"), and Sprint prints a value as that answer quotes the patch
// (fmt's %+v: map[spec:map[replicas:x]]).
package gojson
