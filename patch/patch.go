package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// Error classes; see the package documentation for the HTTP status of each.
var (
	ErrBadPatch = errors.New("patch: invalid patch")
	ErrTooLarge = errors.New("patch: too large")
	ErrApply    = errors.New("patch: cannot apply")
	ErrDocument = errors.New("patch: invalid original document")
)

// Error is the error type of this package: Kind is one of the Err
// sentinels, Msg the message for the client.
type Error struct {
	Kind error
	Msg  string
	// Patched is the patched document when the patch applied but left no
	// JSON object (an ErrApply): kube quotes it in its answer.
	Patched []byte
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the error class.
func (e *Error) Unwrap() error { return e.Kind }

// Defaults, as in kube-apiserver.
const (
	DefaultMaxOperations = 10000
	DefaultMaxCopyBytes  = 3 << 20 // kube's JSONPatchMaxCopyBytes
)

// Options bounds the work a patch may ask for. The zero value means kube's
// defaults.
type Options struct {
	// MaxOperations bounds the operations in a JSON patch: 0 means
	// DefaultMaxOperations, a negative value no bound.
	MaxOperations int
	// MaxCopyBytes bounds the bytes all "copy" operations of a JSON patch
	// may add (json-patch's AccumulatedCopySizeLimit): 0 means
	// DefaultMaxCopyBytes, a negative value no bound.
	MaxCopyBytes int64
	// IgnoreFieldValidation is kube's fieldValidation=Ignore: a JSON patch
	// is then not decoded into kube's op list (done for Strict and Warn),
	// so a body that is not a list of operations fails json-patch's own
	// decoding ("json: cannot unmarshal object into Go value of type
	// jsonpatch.Patch").
	IgnoreFieldValidation bool
}

func (o Options) maxOperations() int {
	switch {
	case o.MaxOperations == 0:
		return DefaultMaxOperations
	case o.MaxOperations < 0:
		return -1
	}
	return o.MaxOperations
}

func (o Options) maxCopyBytes() int64 {
	switch {
	case o.MaxCopyBytes == 0:
		return DefaultMaxCopyBytes
	case o.MaxCopyBytes < 0:
		return 0 // json-patch: no limit
	}
	return o.MaxCopyBytes
}

// jsonPatchOp is the shape kube-apiserver decodes a JSON patch into before
// applying it; decoding errors name it as kube's do (jsonPatchOpType).
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// jsonPatchOpNames renames this package's jsonPatchOp in encoding/json's
// messages to kube's own type (in its handlers package), which
// kube-apiserver's messages carry.
var jsonPatchOpNames = strings.NewReplacer("patch.jsonPatchOp", "handlers.jsonPatchOp")

// jsonPatchDoc and jsonPatchOperation are the shapes json-patch v4 decodes
// a JSON patch into (jsonpatch.Patch, jsonpatch.Operation), named as kube's
// messages name them by jsonPatchDocNames.
type (
	jsonPatchDoc       []jsonPatchOperation
	jsonPatchOperation map[string]*json.RawMessage
)

var jsonPatchDocNames = strings.NewReplacer("patch.jsonPatchDoc", "jsonpatch.Patch", "patch.jsonPatchOperation", "jsonpatch.Operation")

// Messages kube-apiserver answers with (gopkg.in/evanphx/json-patch.v4's
// ErrBadJSONPatch for a null merge patch, its patch handler's own for a
// body that is not JSON).
const (
	msgInvalidJSON = "invalid JSON patch"
	msgNullMerge   = "Invalid JSON Patch"
)

// CheckJSON refuses a patch body that is not one JSON value (ErrBadPatch),
// as kube-apiserver does before it reads the object to patch: 400 "invalid
// JSON patch", whatever the patch type but apply. json.Valid also bounds
// the nesting depth. JSONPatch, MergePatch and StrategicMerge check it too.
func CheckJSON(patch []byte) error {
	if !json.Valid(patch) {
		return &Error{Kind: ErrBadPatch, Msg: msgInvalidJSON}
	}
	return nil
}

// JSONPatch applies an RFC 6902 patch (add, remove, replace, move, copy,
// test) to original, a JSON object, and returns the patched object.
//
// As in kube-apiserver, only a body that is not a list of operations is a
// bad patch (ErrBadPatch); an operation that is unknown or lacks a field
// fails when it is applied, like a failed test or a missing path
// (ErrApply). kube answers ErrApply with a fixed text; Msg keeps
// json-patch's own.
func JSONPatch(original, patch []byte, opts Options) ([]byte, error) {
	if err := checkObject(original); err != nil {
		return nil, err
	}
	if err := CheckJSON(patch); err != nil {
		return nil, err
	}
	// kube-apiserver decodes the body into its op list first (field
	// validation), so a body that is not a list of ops is a 400 with this
	// message; without field validation, json-patch's decoding fails.
	var n int
	if opts.IgnoreFieldValidation {
		var doc jsonPatchDoc
		if err := json.Unmarshal(patch, &doc); err != nil {
			return nil, &Error{Kind: ErrBadPatch, Msg: jsonPatchDocNames.Replace(err.Error())}
		}
		n = len(doc)
	} else {
		var ops []jsonPatchOp
		if err := json.Unmarshal(patch, &ops); err != nil {
			return nil, &Error{Kind: ErrBadPatch, Msg: "error decoding patch: " + jsonPatchOpNames.Replace(err.Error())}
		}
		n = len(ops)
	}
	if max := opts.maxOperations(); max >= 0 && n > max {
		return nil, &Error{Kind: ErrTooLarge, Msg: fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", max, n)}
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		// json-patch v5 checks each operation here, kube's v4 when it
		// applies it.
		return nil, &Error{Kind: ErrApply, Msg: err.Error()}
	}
	ao := jsonpatch.NewApplyOptions()
	ao.SupportNegativeIndices = true
	ao.AccumulatedCopySizeLimit = opts.maxCopyBytes()
	out, err := p.ApplyWithOptions(original, ao)
	if err != nil {
		return nil, &Error{Kind: ErrApply, Msg: err.Error()}
	}
	return result(out)
}

// MergePatch applies an RFC 7386 merge patch to original, a JSON object, and
// returns the patched object. The patch must be a JSON object, as
// kube-apiserver requires: null is kube's 400 "Invalid JSON Patch".
func MergePatch(original, patch []byte, _ Options) ([]byte, error) {
	if err := checkObject(original); err != nil {
		return nil, err
	}
	if err := CheckJSON(patch); err != nil {
		return nil, err
	}
	if isNull(patch) {
		return nil, &Error{Kind: ErrBadPatch, Msg: msgNullMerge}
	}
	if !isObject(patch) {
		var v map[string]any
		err := json.Unmarshal(patch, &v)
		if err == nil {
			err = errors.New("a merge patch must be a JSON object")
		}
		return nil, &Error{Kind: ErrBadPatch, Msg: "error decoding patch: " + err.Error()}
	}
	out, err := jsonpatch.MergePatch(original, patch)
	switch {
	case errors.Is(err, jsonpatch.ErrBadJSONPatch):
		return nil, &Error{Kind: ErrBadPatch, Msg: err.Error()}
	case err != nil:
		return nil, &Error{Kind: ErrApply, Msg: err.Error()}
	}
	return result(out)
}

// checkObject verifies that the original document is a JSON object.
func checkObject(doc []byte) error {
	if !isObject(doc) {
		return &Error{Kind: ErrDocument, Msg: "the object to patch is not a valid JSON object"}
	}
	return nil
}

func result(out []byte) ([]byte, error) {
	if !isObject(out) {
		return nil, &Error{Kind: ErrApply, Msg: "the patched object is not a JSON object: " + abbreviate(out), Patched: out}
	}
	return out, nil
}

// isObject reports whether b is valid JSON whose value is an object.
// json.Valid also enforces encoding/json's nesting depth bound.
func isObject(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(b)
}

func isNull(b []byte) bool {
	return string(bytes.Trim(b, " \t\r\n")) == "null"
}

func abbreviate(b []byte) string {
	if len(b) > 64 {
		return string(b[:61]) + "..."
	}
	return string(b)
}
