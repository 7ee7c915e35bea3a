// Package patch applies RFC 6902 JSON patches and RFC 7386 JSON merge
// patches to an object's JSON, with kube-apiserver's limits and error
// classes, and keeps managedFields: [FieldManager] is server-side apply
// (structured-merge-diff over the resource's schema) and the Update
// tracking of every other write, as kube-apiserver's field manager.
//
// Every error is an [*Error] whose Kind tells the HTTP layer how to answer,
// as kube-apiserver's patch handler does:
//
//	ErrBadPatch  400 Bad Request           the body is not a valid patch (not
//	                                       JSON: "invalid JSON patch"; a JSON
//	                                       patch not a list of operations; a
//	                                       merge patch null or not an object)
//	ErrTooLarge  413 Request Entity Too Large  too many operations
//	ErrApply     422 Unprocessable Entity  the patch does not apply (unknown
//	                                       op, missing field or path, failed
//	                                       test, copy limit) or the result is
//	                                       not a JSON object
//	ErrDocument  500                       the original is not a JSON object
//	ErrSchema    500                       server-side apply: the object does
//	                                       not fit the schema (kube's 500)
//
// Msg is the message kube-apiserver sends in each case, but for a JSON
// patch's ErrApply: kube answers it with a fixed text ("the server rejected
// our request due to an error in our request"), which the HTTP layer
// sends; Msg keeps json-patch's reason. A server-side
// apply conflict is a [*ConflictError] (ErrConflict, 409 with one
// FieldManagerConflict cause per field).
//
// managedFields entries keep the apiVersion of the write that made them.
// With a [ConvertFunc] (UpdateOptions.Convert, ApplyOptions.Convert), the
// entries of another version are compared, reconciled and pruned in that
// version, the objects converted there, as kube's field manager does
// (versions.go); without one, every version is read as the field
// manager's own. A write whose managers are all at its version converts
// nothing.
package patch
