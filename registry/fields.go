package registry

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/jsontree"
	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
)

// Field validation (VAL-3) and warnings (EXT-4).
//
// A write's body may carry fields the schema does not know and, in JSON,
// keys given twice. fieldValidation says what to do about them: Ignore
// drops them silently, Warn (the default) drops them and sends one
// Warning header per field, Strict refuses the write listing every one.
// Whatever the directive, unknown fields are pruned before storage unless
// the schema preserves them. Worked example, on widgets:
//
//	POST {"spec": {"color": "red", "colour": "red"}}
//	  Warn   → 201, Warning: 299 - "unknown field \"spec.colour\"", stored without colour
//	  Strict → 400 `Widget in version "v1" cannot be handled as a Widget:
//	           strict decoding error: unknown field "spec.colour"`

// Field validation directives, as the fieldValidation parameter spells them.
const (
	fieldIgnore = "Ignore"
	fieldWarn   = "Warn"
	fieldStrict = "Strict"
)

// fieldValidation reads the fieldValidation parameter: kube's 422 for a
// value it does not know, "" (Warn) when absent.
func fieldValidation(kind string, v []string) (string, error) {
	if len(v) == 0 {
		return "", nil
	}
	switch v[0] {
	case "", fieldIgnore, fieldWarn, fieldStrict:
		return v[0], nil
	}
	return "", optionsInvalid(kind, "fieldValidation", "FieldValueNotSupported",
		`Unsupported value: `+strconv.Quote(v[0])+`: supported values: "", "Ignore", "Strict", "Warn"`)
}

// strictProblems handles the unknown and duplicate fields of a write as
// o.fieldValidation says: warnings, nothing, or refuse(the strict
// decoding error's text).
func strictProblems(ctx context.Context, o writeOptions, problems []string, refuse func(msg string) error) error {
	if len(problems) == 0 {
		return nil
	}
	switch o.fieldValidation {
	case fieldIgnore:
		return nil
	case fieldStrict:
		return refuse("strict decoding error: " + strings.Join(problems, ", "))
	}
	for _, p := range problems {
		Warn(ctx, p)
	}
	return nil
}

// unknownFields prunes obj as kube prunes a custom resource — metadata by
// ObjectMeta, the rest by the resource's schema — and returns the removed
// fields as strict decoding problems ("unknown field \"spec.foo\"").
// Resources without a schema keep everything.
func unknownFields(res *Resource, obj Object) []string {
	if res.Schema == nil {
		return nil
	}
	var out []string
	if meta, ok := obj["metadata"].(map[string]any); ok {
		for _, p := range objectMeta.Prune(meta) {
			out = append(out, `unknown field "metadata.`+p+`"`)
		}
	}
	for _, p := range res.Schema.Prune(map[string]any(obj)) {
		out = append(out, `unknown field "`+p+`"`)
	}
	return out
}

// objectMeta is ObjectMeta's schema, which prunes metadata.
var objectMeta = schema.ObjectMeta()

// cannotHandle is kube's 400 for a body it cannot decode as the kind.
func cannotHandle(res *Resource) func(string) error {
	return func(msg string) error {
		return errBadRequest("%s in version %q cannot be handled as a %s: %s", res.Kind, res.Version, res.Kind, msg)
	}
}

// warningsKey is the context key of a request's warnings.
type warningsKey struct{}

// warnings collects a request's Warning headers, once each, and holds
// the registry's clock for Now (clock.go): one value in the request's
// context for both.
type warnings struct {
	h    http.Header
	seen map[string]bool
	now  func() time.Time
}

func withWarnings(ctx context.Context, h http.Header, now func() time.Time) context.Context {
	return context.WithValue(ctx, warningsKey{}, &warnings{h: h, now: now})
}

// Warn adds a warning to the response of the request ctx belongs to: a
// `Warning: 299 - "msg"` header, which kubectl prints and client-go logs.
// Strategy hooks call it; outside a request it does nothing. A message is
// sent once however often it is added.
func Warn(ctx context.Context, msg string) {
	w, _ := ctx.Value(warningsKey{}).(*warnings)
	if w == nil || msg == "" || w.seen[msg] {
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{} // most requests warn nothing
	}
	w.seen[msg] = true
	w.h.Add("Warning", `299 - `+strconv.Quote(msg))
}

// asDecoded does to a write's object what kube's decoder does to a custom
// resource's body: unknown fields are pruned (and, with duplicates,
// handled as o.fieldValidation says, refuse making the Strict error),
// metadata's empty values dropped, a custom resource's or built-in
// kind's nulls its schema does not allow pruned (schema.PruneNulls) and
// the schema's defaults filled in.
func asDecoded(ctx context.Context, res *Resource, obj Object, o writeOptions, refuse func(string) error) error {
	problems := append(o.duplicates, unknownFields(res, obj)...)
	if o.order != nil {
		inDocumentOrder(problems, o.order)
	}
	if err := strictProblems(ctx, o, problems, refuse); err != nil {
		return err
	}
	dropEmptyMeta(obj)
	if (res.Custom || res.Protobuf != nil) && res.Schema != nil {
		// A built-in kind's Go decoder leaves a null field unset too.
		res.Schema.PruneNulls(map[string]any(obj))
	}
	if res.defaults != nil { // without defaults, ApplyDefaults changes nothing
		res.defaults.ApplyDefaults(map[string]any(obj))
	}
	return nil
}

// dropEmptyMeta removes from obj's metadata the nulls and the empty maps
// and lists, as kube's decoding into its ObjectMeta (every field
// omitempty) does:
//
//	{"name": "a", "labels": {}, "finalizers": [], "annotations": null}  →  {"name": "a"}
func dropEmptyMeta(obj Object) {
	meta, _ := obj["metadata"].(map[string]any)
	for k, v := range meta {
		switch v := v.(type) {
		case nil:
			delete(meta, k)
		case map[string]any:
			if len(v) == 0 {
				delete(meta, k)
			}
		case []any:
			if len(v) == 0 {
				delete(meta, k)
			}
		}
	}
}

// inDocumentOrder sorts strict decoding problems (`unknown field "a.b"`,
// `duplicate field "c"`) by where their fields are in the body, as kube's
// strict decoder meets them in a built-in kind's body; problems whose
// field order does not know keep their place after the others.
func inDocumentOrder(problems []string, order map[string]int) {
	at := func(p string) int {
		if i := strings.IndexByte(p, '"'); i >= 0 {
			if f, err := strconv.Unquote(p[i:]); err == nil {
				if n, ok := order[f]; ok {
					return n
				}
			}
		}
		return len(order)
	}
	slices.SortStableFunc(problems, func(a, b string) int { return cmp.Compare(at(a), at(b)) })
}

// patchedInvalid is kube's 422 for a patched object with unknown or
// duplicate fields under fieldValidation=Strict.
func patchedInvalid(patched Object) func(string) error {
	b, _ := json.Marshal(patched) // before pruning: kube quotes the patched object
	return func(msg string) error {
		c := FieldError{Type: "FieldValueInvalid", Field: "patch", Value: string(b), Detail: msg}
		return newStatus(http.StatusUnprocessableEntity, "Invalid", ` "" is invalid: `+c.Error(),
			&StatusDetails{Causes: []StatusCause{{Type: c.Type, Message: c.ErrorBody(), Field: c.Field}}})
	}
}

// checkResourceVersionType refuses a metadata.resourceVersion that is not
// a string: kube cannot decode the body (400), where ignoring it would
// turn a client's compare-and-swap into an unconditional write.
func checkResourceVersionType(res *Resource, obj Object) error {
	v, ok := obj.Meta()["resourceVersion"]
	if !ok || v == nil {
		return nil
	}
	if _, ok := v.(string); ok {
		return nil
	}
	return cannotHandle(res)("json: cannot unmarshal " + jsonobj.Kind(v) + " into Go struct field ObjectMeta.resourceVersion of type string")
}

// patchDuplicates are the duplicate fields of a JSON or merge patch body,
// which kube reports beside the patched object's unknown fields.
func patchDuplicates(pt string, body []byte) []string {
	dups := jsonobj.PatchDuplicates(body)
	if pt == patchJSON {
		for i, d := range dups {
			dups[i] = "json patch " + d
		}
	}
	return dups
}

// validateSchema checks obj against the resource's schema and CEL rules
// (old is nil on create), as kube validates a custom resource. An update
// (sub "" or "status") is checked with kube's validation ratcheting:
// errors in values unchanged from old are not reported; a status update
// checks the status alone. Resources with a protobuf message are checked
// by it instead, as kube's built-in types are checked by their Go types
// (checkRepresentable).
func validateSchema(ctx context.Context, res *Resource, obj, old Object, sub string) []FieldError {
	if res.Schema == nil || res.Protobuf != nil {
		return nil
	}
	var errs []FieldError
	switch {
	case old == nil:
		errs = res.Schema.Validate(map[string]any(obj))
	case res.writesStatus(sub):
		errs = res.Schema.ValidateStatusUpdate(obj, old)
	default:
		errs = res.Schema.ValidateUpdate(map[string]any(obj), map[string]any(old))
	}
	if res.rules != nil && blocking(errs) {
		return append(errs, FieldError{Type: validation.TypeInvalid, Field: "<nil>", Value: nil,
			Detail: "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"})
	}
	if res.rules != nil {
		var o map[string]any
		if old != nil {
			o = old
		}
		errs = append(errs, res.rules.Validate(ctx, obj, o)...)
	}
	return errs
}

// withDefaults is o with the schema's defaults filled in, as kube's
// storage decoder defaults a custom resource on every read: objects stored
// before a default was added to the schema read with it. Computed once per
// stored state (in its Memo); resources whose schema has no default read
// their bytes as stored.
func withDefaults(res *Resource, o storage.Object) storage.Object {
	if res.defaults == nil || o.Value == nil {
		return o
	}
	v, err := o.Memo.Do(storage.MemoKey{What: uint64(defaultsMemo)}, func() (any, error) {
		obj, err := decodeStored(o.Value, 0)
		if err != nil {
			return o.Value, nil // reads report it
		}
		delete(obj.Meta(), "resourceVersion")
		res.defaults.ApplyDefaults(map[string]any(obj))
		b, err := jsonobj.Encode(obj)
		if err != nil || bytes.Equal(b, o.Value) {
			return o.Value, nil
		}
		return b, nil
	})
	if b, ok := v.([]byte); ok && err == nil {
		o.Value = b
	}
	return o
}

// defaultsOnly is s cut down to what ApplyDefaults reads on the way to
// its defaults, nil when it has none: s.ApplyDefaults(obj) and
// defaultsOnly(s).ApplyDefaults(obj) change obj alike. Where a subtree has
// no default, ApplyDefaults changes nothing in it (a null value it
// replaces with a missing default stays null), so the cut schema leaves
// it out and its walk does not go there; its Properties stay when
// AdditionalProperties has defaults (a key of Properties is not
// additionalProperties', even without defaults). A Deployment's
// schema (1,421 nodes to a depth of 12) cuts down to 540: its PodSpec's
// 43 properties to the 14 with defaults below them, a container's 25 to
// 12, and ApplyDefaults looks at each property of each node it visits.
//
//	{properties: {a: {type: string}, b: {properties: {c: {default: 1}}}}}
//	→ {properties: {b: {properties: {c: {default: 1}}}}}
func defaultsOnly(s *schema.Schema) *schema.Schema {
	if !hasDefaults(s) {
		return nil
	}
	d := &schema.Schema{Default: s.Default, Nullable: s.Nullable,
		Items: defaultsOnly(s.Items), AdditionalProperties: defaultsOnly(s.AdditionalProperties)}
	for k, p := range s.Properties {
		if dp := defaultsOnly(p); dp != nil || d.AdditionalProperties != nil {
			if d.Properties == nil {
				d.Properties = map[string]*schema.Schema{}
			}
			d.Properties[k] = dp
		}
	}
	return d
}

// hasDefaults reports whether any node of s has a default.
func hasDefaults(s *schema.Schema) bool {
	if s == nil {
		return false
	}
	if s.Default != nil {
		return true
	}
	for _, p := range s.Properties {
		if hasDefaults(p) {
			return true
		}
	}
	return hasDefaults(s.Items) || hasDefaults(s.AdditionalProperties)
}

// blocking reports whether schema errors keep the CEL rules from running,
// as in kube: rules may assume types, required fields and bounds hold.
func blocking(errs []FieldError) bool {
	for _, e := range errs {
		switch e.Type {
		case validation.TypeNotSupported, validation.TypeRequired, validation.TypeTooLong, validation.TypeTooMany, validation.TypeTypeInvalid:
			return true
		}
	}
	return false
}

// applyDuplicates handles the keys a YAML apply body gives twice, as kube
// does after its strict YAML decode: a warning per key, or Strict's 400.
// A JSON body (kubectl's) with as many members as keys has none, which
// spares the second YAML parse.
func applyDuplicates(ctx context.Context, o writeOptions, body []byte, config Object) error {
	if o.fieldValidation == fieldIgnore {
		return nil
	}
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' && jsonobj.Members(t) == jsonobj.Keys(map[string]any(config)) {
		return nil
	}
	dups := codec.YAMLDuplicateKeys(body)
	if len(dups) == 0 {
		return nil
	}
	if o.fieldValidation == fieldStrict {
		return errBadRequest("error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  %s", strings.Join(dups, "\n  "))
	}
	for _, d := range dups {
		Warn(ctx, d)
	}
	return nil
}

// readable refuses a stored state whose bytes are not JSON (written
// around the registry, or damaged): kube's corrupt-object InternalError
// naming the key, which DELETE with
// ignoreStoreReadErrorWithClusterBreakingPotential=true removes. Checked
// once per state (in its Memo), by a JSON syntax scan: a tenth of a
// decode's cost, for backends that keep no Memo.
func readable(o storage.Object) error {
	v, _ := o.Memo.Do(storage.MemoKey{What: uint64(validMemo)}, func() (any, error) {
		if t := bytes.TrimSpace(o.Value); len(t) == 0 || t[0] != '{' || !jsontree.Valid(t) {
			return jsonobj.ErrNotObject, nil
		}
		return nil, nil
	})
	if err, ok := v.(error); ok {
		return corruptError(o.Key, err)
	}
	return nil
}
