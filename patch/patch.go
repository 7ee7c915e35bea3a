package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

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
// applying it; decoding errors name it as kube's do.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// JSONPatch applies an RFC 6902 patch (add, remove, replace, move, copy,
// test) to original, a JSON object, and returns the patched object.
func JSONPatch(original, patch []byte, opts Options) ([]byte, error) {
	if err := checkObject(original); err != nil {
		return nil, err
	}
	// kube-apiserver decodes the body into its op list first (field
	// validation), so a body that is not a list of ops is a 400 with this
	// message. encoding/json also bounds the nesting depth here.
	var ops []jsonPatchOp
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, &Error{Kind: ErrBadPatch, Msg: "error decoding patch: " + err.Error()}
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, &Error{Kind: ErrBadPatch, Msg: err.Error()}
	}
	if max := opts.maxOperations(); max >= 0 && len(p) > max {
		return nil, &Error{Kind: ErrTooLarge, Msg: fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", max, len(p))}
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
// returns the patched object. The patch must be a JSON object (or null, which
// leaves no object and is an ErrApply), as kube-apiserver requires.
func MergePatch(original, patch []byte, _ Options) ([]byte, error) {
	if err := checkObject(original); err != nil {
		return nil, err
	}
	if !isObject(patch) && !isNull(patch) {
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
		return nil, &Error{Kind: ErrApply, Msg: "the patched object is not a JSON object: " + abbreviate(out)}
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
