// Package protobuf converts Kubernetes objects between kapi's JSON form and
// Kubernetes' protobuf wire format ("application/vnd.kubernetes.protobuf"),
// driven by message descriptors: one job, no per-type code.
//
// An object in JSON form is what encoding/json yields with UseNumber:
// map[string]any, []any, string, bool, nil and json.Number ([Marshal] also
// takes int64, int and float64). [Marshal] and [Unmarshal] convert it to and
// from the bytes of any message, walking a field table built once per
// descriptor; JSON keys are the proto field names, which Kubernetes' protos
// keep equal to the JSON names. [AppendEnvelope], [AppendList] and
// [AppendWatchFrame] put those bytes in Kubernetes' envelope ([Magic] and a
// runtime.Unknown), list and watch-stream shapes without re-encoding them.
//
// # Presence
//
// JSON leaves out the zero value of a Go field tagged omitempty but keeps the
// zero of a pointer field: a ConfigMap with immutable=false says
// "immutable": false, one without it says nothing. kapi's .proto files are
// proto3 and mark optional exactly the fields that are Go pointers (or have
// no omitempty) in Kubernetes' types, and the conversion follows the marks:
//
//	message ConfigMap {
//	  ObjectMeta metadata = 1;
//	  map<string, string> data = 2;
//	  map<string, bytes> binaryData = 3;
//	  optional bool immutable = 4;
//	}
//
//	{"immutable": false}  <->  20 00   field 4 present, false
//	{}                    <->  (empty) no field 4
//	{"data": {}}           ->  (empty) a map or list is absent when empty
//	{"metadata": {}}      <->  0a 00   a present message is an object
//
// Unmarshal writes a scalar iff it is present (optional fields) or non-zero
// (the rest); Marshal writes what the JSON has, dropping zeros of fields
// without optional. Kubernetes' own generated code writes every non-pointer
// field, zeros included; those zeros read back as absent, like omitempty.
// For descriptors a user compiles from proto2 files (Kubernetes-style
// generated.proto), Marshal writes zeros the JSON has and Unmarshal treats
// zero scalars as absent: proto2 cannot tell a pointer from a value.
//
// A JSON null is an absent field, with one exception kept for Kubernetes'
// JSON: a Time, MicroTime, RawExtension or FieldsV1 in a field that is not
// optional (ObjectMeta.creationTimestamp) is written as an empty message and
// an empty message there reads back as null ("creationTimestamp": null).
// In an optional field (ObjectMeta.deletionTimestamp) null is absent, so a
// Go client never sees a non-nil zero time.
//
// # Special messages
//
// Messages with a JSON form of their own are recognised by full name,
// wherever their descriptor comes from, and converted as apimachinery's JSON
// marshalers do:
//
//	meta.v1.Time          "2026-11-23T07:38:04Z" (seconds; empty message = zero = null)
//	meta.v1.MicroTime     "2026-11-23T07:38:04.123456Z"
//	meta.v1.Duration      "1h0m0s"
//	meta.v1.FieldsV1      any JSON value, kept as its JSON bytes in Raw
//	runtime.RawExtension  any JSON value, kept as its JSON bytes in raw
//	resource.Quantity     "100m" (as given; not canonicalised)
//	intstr.IntOrString    80 or "http"
//	ExtraValue            ["a", "b"]: authentication.v1 and authorization.v1
//	                      ExtraValue, authentication.v1 AttestationValue
//	                      (repeated string items = 1; empty is null, as Go's nil)
//
// bytes fields and map<string, bytes> values are standard base64 strings, as
// encoding/json writes []byte.
//
// # Descriptors
//
// [Files] holds kapi's descriptors, compiled from proto/ into the committed
// descriptors.binpb by `make proto`; building needs no protoc:
//
//	meta.v1, runtime, intstr, resource
//	core.v1               Namespace, ConfigMap (and their lists)
//	rbac.v1               Role, ClusterRole, RoleBinding, ClusterRoleBinding (and their lists)
//	authorization.v1      SubjectAccessReview, LocalSubjectAccessReview,
//	                      SelfSubjectAccessReview, SelfSubjectRulesReview
//	authentication.v1     TokenReview, SelfSubjectReview, TokenRequest
//
// Each kind's descriptor is a variable of this package ([Role],
// [TokenReview], ...). The .proto files are hand-written from k8s.io/api's,
// proto3 with Kubernetes' package, message names and field numbers (the
// conformance module checks the bytes against k8s.io/api's generated code),
// and keep Kubernetes' file paths, so a user's own .proto that imports
// "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto" resolves against
// Files. kapi's core/v1 file holds only Namespace and ConfigMap: a user who
// needs other core/v1 messages compiles k8s.io/api's whole core/v1
// generated.proto against a registry made of Files without
// "k8s.io/api/core/v1/generated.proto" (same path, same names); likewise for
// the other groups.
//
// Everything here is safe for concurrent use.
package protobuf
