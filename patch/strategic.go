package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/schema"
)

// Strategic merge patch directives, as kube spells them.
const (
	directiveMarker     = "$patch"
	retainKeysDirective = "$retainKeys"
	deleteFromPrefix    = "$deleteFromPrimitiveList"
	setOrderPrefix      = "$setElementOrder"
)

// StrategicMerge applies a strategic merge patch (JSON) to original (JSON)
// using s, the schema of the whole object, and returns the patched JSON.
//
// The semantics are kube's strategicpatch.StrategicMergePatch, with the
// schema's x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key
// (k8s.io/api's patchStrategy and patchMergeKey tags) where kube reads Go
// struct tags:
//
//   - objects merge key by key; null deletes a key; {"$patch": "replace"}
//     replaces the object with the rest of the patch object,
//     {"$patch": "delete"} empties it; "$retainKeys": [...] first drops
//     every key of the original the list does not name (a patch key it
//     does not name is an error);
//   - lists with patch strategy "merge" and a merge key merge their
//     entries by the key: a patch entry with {"$patch": "delete"} removes
//     the matching entries, an entry {"$patch": "replace"} makes the other
//     patch entries the whole list; lists of scalars with strategy "merge"
//     merge as sets, and "$deleteFromPrimitiveList/<field>": [...] removes
//     values; "$setElementOrder/<field>": [...] gives the order of the
//     result. Other lists are replaced;
//   - order: patch entries come in patch order (or $setElementOrder's),
//     original-only entries keep their relative order, interleaved where
//     the original order relates them, as kube does;
//   - an object field with patch strategy "replace" is replaced whole;
//   - {"$patch": "merge"} is an error in objects and in lists, as in kube;
//   - merge keys and set values match when equal as written (80 and 80.0
//     differ, as int64 and float64 do in kube).
//
// kapi extends kube (which answers 415 for custom resources) where a node
// has no patch strategy: a list with x-kubernetes-list-type "map" merges
// by the tuple of its x-kubernetes-list-map-keys (entries match when every
// key is equal; patch entries must carry every key), a list-type "set"
// merges as a set of values, and an object with x-kubernetes-map-type
// "atomic" is replaced. A field the schema does not describe (or a nil s,
// or an s without properties.metadata for metadata) has no hints: its
// objects merge and its lists are replaced.
//
// Where kapi differs from kube: values taken whole from the patch (new
// keys, replaced lists and objects, appended list entries) never keep
// nulls or directives (kube keeps some and relies on typed decoding to
// drop them); keys are processed in sorted order (kube's order is random,
// which matters only when one patch both adds and deletes the same
// scalar); a malformed patch strategy in the schema is read leniently
// (kube fails with 500); errors kube answers with 500 (a patch entry
// without its merge key, say) are ErrBadPatch, with kube's message
// (capped at 1 KiB); where kube panics (null list entries, non-string
// $retainKeys entries, objects in a primitive list) kapi answers.
//
// Errors: original not a JSON object is ErrDocument; a patch that is not
// a JSON object or misuses a directive is ErrBadPatch; a list of lists to
// merge is ErrApply (422, as kube). Numbers are kept exactly as written
// and the output is deterministic (keys sorted). Nesting is bounded by
// encoding/json's depth limit, and the work is O(n log n) in the size of
// the documents, so opts has nothing to bound yet.
func StrategicMerge(original, patch []byte, s *schema.Schema, _ Options) ([]byte, error) {
	if err := checkObject(original); err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := decodeNumbers(original, &doc); err != nil {
		return nil, &Error{Kind: ErrDocument, Msg: "the object to patch is not a valid JSON object"}
	}
	if err := CheckJSON(patch); err != nil {
		return nil, err
	}
	var p map[string]any
	if err := decodeNumbers(patch, &p); err != nil {
		return nil, &Error{Kind: ErrBadPatch, Msg: err.Error()}
	}
	merged, err := mergeMap(doc, p, s)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return nil, &Error{Kind: ErrApply, Msg: err.Error()}
	}
	return result(out)
}

// decodeNumbers decodes one JSON value into v with numbers as json.Number,
// with encoding/json.Unmarshal's messages.
func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errors.New("unexpected end of JSON input")
		}
		return err
	}
	if rest := bytes.TrimLeft(b[d.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return nil
}

// maxMessage bounds error messages, which kube lets quote whole lists.
const maxMessage = 1024

func badPatch(format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage-3], "") + "..."
	}
	return &Error{Kind: ErrBadPatch, Msg: msg}
}

// kube's mergepatch error texts.
func errNoMergeKey(m map[string]any, key string) error {
	return badPatch("map: %v does not contain declared merge key: %s", m, key)
}

func errBadPatchType(t any, m map[string]any) error {
	return badPatch("unknown patch type: %s in map: %v", t, m)
}

func errBadArgType(expected string, actual any) error {
	return badPatch("expected a %s, but received a %s", expected, goType(actual))
}

var (
	errRetainKeys = badPatch("invalid patch format of retainKeys")
	errDeleteList = badPatch("invalid patch format of primitive list")
	errSetOrder   = badPatch("invalid patch format of setElementOrder list")
)

const (
	mapType  = "map[string]interface {}"
	listType = "[]interface {}"
)

// goType names v's type as kube's messages do (it decodes into Go values).
func goType(v any) string {
	switch v := v.(type) {
	case nil:
		return "%!s(<nil>)"
	case map[string]any:
		return mapType
	case []any:
		return listType
	case json.Number:
		if kindOf(v) == kindInt {
			return "int64"
		}
		return "float64"
	}
	return fmt.Sprintf("%T", v)
}

// kind classifies a decoded JSON value as kube's reflect types do (integers
// and other numbers differ, as int64 and float64 do there).
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindInt
	kindFloat
	kindString
	kindList
	kindMap
)

func kindOf(v any) kind {
	switch v := v.(type) {
	case bool:
		return kindBool
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			return kindFloat
		}
		return kindInt
	case string:
		return kindString
	case []any:
		return kindList
	case map[string]any:
		return kindMap
	}
	return kindNull
}

// child is the schema of field k of an object with schema s; nil when s
// does not describe it.
func child(s *schema.Schema, k string) *schema.Schema {
	if s == nil {
		return nil
	}
	if c, ok := s.Properties[k]; ok {
		return c
	}
	return s.AdditionalProperties
}

// strategy is a field's patch strategy without retainKeys (which only
// matters when computing patches): "merge", "replace" or "". A malformed
// strategy is read leniently.
func strategy(s *schema.Schema) string {
	if s == nil {
		return ""
	}
	parts := strings.Split(s.PatchStrategy, ",")
	switch {
	case slices.Contains(parts, "merge"):
		return "merge"
	case slices.Contains(parts, "replace"):
		return "replace"
	}
	return ""
}

// mergeMap merges patch into original, kube's mergeMap with
// MergeParallelList and IgnoreUnmatchedNulls (the server side). Both maps
// may be modified.
func mergeMap(original, patch map[string]any, s *schema.Schema) (map[string]any, error) {
	if d, ok := patch[directiveMarker]; ok {
		switch d {
		case "replace":
			delete(patch, directiveMarker)
			v, _ := clean(patch)
			return v.(map[string]any), nil
		case "delete":
			return map[string]any{}, nil
		}
		return nil, errBadPatchType(d, patch)
	}
	if original == nil {
		original = map[string]any{}
	}
	if err := retainKeys(original, patch); err != nil {
		return nil, err
	}
	if err := setElementOrders(original, patch, s); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(patch))
	for k := range patch {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		pv, field, deleteList := patch[k], k, false
		if strings.HasPrefix(k, deleteFromPrefix) {
			name, ok := directiveField(k, deleteFromPrefix)
			if !ok {
				return nil, errDeleteList
			}
			deleteList = true
			if name != "" {
				field = name
			}
		}
		if pv == nil {
			delete(original, field)
			continue
		}
		ov, found := original[field]
		if !found || kindOf(ov) != kindOf(pv) {
			if !deleteList {
				setClean(original, field, pv)
			}
			continue
		}
		fs := child(s, field)
		var err error
		switch ov := ov.(type) {
		case map[string]any:
			st := strategy(fs)
			if st == "replace" || st == "" && fs != nil && fs.MapType == "atomic" {
				setClean(original, field, pv)
				continue
			}
			original[field], err = mergeMap(ov, pv.(map[string]any), fs)
		case []any:
			original[field], err = mergeListField(ov, pv.([]any), fs, deleteList)
		default:
			original[field] = pv
		}
		if err != nil {
			return nil, err
		}
	}
	return original, nil
}

// directiveField is the field a "$prefix/field" directive key names.
func directiveField(key, prefix string) (string, bool) {
	p, field, ok := strings.Cut(key, "/")
	return field, ok && p == prefix
}

// retainKeys applies a $retainKeys directive: the original keeps only the
// keys it lists, and the patch may set no others.
func retainKeys(original, patch map[string]any) error {
	rk, ok := patch[retainKeysDirective]
	if !ok {
		return nil
	}
	delete(patch, retainKeysDirective)
	list, ok := rk.([]any)
	if !ok {
		return errRetainKeys
	}
	keep := make(map[string]bool, len(list))
	for _, v := range list {
		if k, ok := v.(string); ok {
			keep[k] = true
		}
	}
	for k, v := range patch {
		if v == nil || strings.HasPrefix(k, deleteFromPrefix) || strings.HasPrefix(k, setOrderPrefix) {
			continue
		}
		if !keep[k] {
			return errRetainKeys
		}
	}
	for k := range original {
		if !keep[k] {
			delete(original, k)
		}
	}
	return nil
}

// setElementOrders handles the "$setElementOrder/<field>" directives of
// patch: it merges each such field (removing it from patch) and orders the
// result by the directive's list, then the patch, then the original.
func setElementOrders(original, patch map[string]any, s *schema.Schema) error {
	var keys []string
	for k := range patch {
		if strings.HasPrefix(k, setOrderPrefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		order, ok := patch[k].([]any)
		if !ok {
			return errBadArgType(listType, patch[k])
		}
		delete(patch, k)
		field, ok := directiveField(k, setOrderPrefix)
		if !ok {
			return errSetOrder
		}
		var ol, pl []any
		ov, inOriginal := original[field]
		pv, inPatch := patch[field]
		if inOriginal {
			if ol, ok = ov.([]any); !ok {
				return errBadArgType(listType, ov)
			}
		}
		if inPatch {
			if pl, ok = pv.([]any); !ok {
				return errBadArgType(listType, pv)
			}
		}
		fs := child(s, field)
		h := hintsFor(fs)
		if err := checkOrder(pl, order, h); err != nil {
			return err
		}
		var merged []any
		switch {
		case inOriginal && !inPatch:
			merged = ol
		case !inOriginal && inPatch:
			v, _ := clean(pl)
			merged = v.([]any)
		case inOriginal && inPatch:
			var err error
			if merged, err = mergeListField(ol, pl, fs, false); err != nil {
				return err
			}
		default:
			continue
		}
		ek, err := elementKind(ol, pl)
		if err != nil {
			return err
		}
		keys := h.keys
		if ek != kindMap || h.set {
			keys = nil
		}
		inOrder, serverOnly, err := partition(merged, order, keys)
		if err != nil {
			return err
		}
		serverOrder := ol
		if inOriginal && inPatch && h.merge && len(keys) > 0 {
			serverOrder = seenByKube(ol, pl, keys)
		}
		if original[field], err = normalizeOrder(inOrder, serverOnly, order, serverOrder, h, ek); err != nil {
			return err
		}
		delete(patch, field)
	}
	return nil
}

// seenByKube is the original list as kube's $setElementOrder code reads
// it after merging the patch list by key. Kube deletes and appends entries
// in the original list's array, so the list it then reads (of the original
// length) holds the surviving entries, then the first appended ones, then
// stale ones; where that list ranks server-only entries against patch
// entries, kube's order follows it. Reproduced so that orders match.
//
// Worked example: original [a b c], patch [{name: a, $patch: delete},
// {name: d}]: the array becomes [b c c] after the deletion and [b c d]
// after the append, so d ranks after c.
func seenByKube(ol, pl []any, keys []string) []any {
	at := map[string][]int{} // positions of the entries with each key
	for i, v := range ol {
		if m, ok := v.(map[string]any); ok && hasKeys(m, keys) {
			k := keyOf(m, keys)
			at[k] = append(at[k], i)
		}
	}
	view := make([]any, len(ol))
	gone := make([]bool, len(ol))
	n, last := len(ol), len(ol)-1
	replace := false
	for _, v := range pl {
		m, _ := v.(map[string]any)
		switch m[directiveMarker] {
		case "delete":
			k := keyOf(m, keys)
			for _, i := range at[k] {
				// The entries after i shift left; the freed last slot
				// keeps the last entry.
				view[n-1] = ol[last]
				gone[i] = true
				for last >= 0 && gone[last] {
					last--
				}
				n--
			}
			delete(at, k)
		case "replace":
			replace = true
		}
	}
	i := 0
	for j, v := range ol {
		if !gone[j] {
			view[i] = v
			i++
		}
	}
	if replace {
		return view
	}
	for _, v := range pl {
		m, _ := v.(map[string]any)
		if _, ok := m[directiveMarker]; ok {
			continue
		}
		k := keyOf(m, keys)
		if _, ok := at[k]; ok {
			continue
		}
		at[k] = nil
		if n < len(view) {
			view[n] = v
		}
		n++
	}
	return view
}

// checkOrder verifies that the patch list's entries (without deletions and
// directives) appear in the $setElementOrder list in the same order.
func checkOrder(patchList, order []any, h hints) error {
	if len(order) == 0 || len(patchList) == 0 {
		return nil
	}
	items := patchList
	if len(h.keys) > 0 {
		var err error
		if items, _, err = splitDeletions(patchList); err != nil {
			return err
		}
	}
	pi, oi := 0, 0
	for pi < len(items) && oi < len(order) {
		if m, ok := items[pi].(map[string]any); ok {
			if _, ok := m[directiveMarker]; ok {
				pi++
				continue
			}
		}
		eq, err := sameKey(items[pi], order[oi], h.keys)
		if err != nil {
			return err
		}
		if eq {
			pi++
		}
		oi++
	}
	if pi < len(items) {
		return badPatch("The order in patch list:\n%v\n doesn't match %s list:\n%v\n", patchList, setOrderPrefix, order)
	}
	return nil
}

// setClean sets m[k] to v without directives and nulls, or deletes k when v
// is itself a directive.
func setClean(m map[string]any, k string, v any) {
	if c, keep := clean(v); keep {
		m[k] = c
	} else {
		delete(m, k)
	}
}

// clean removes from a value taken whole from the patch what only means
// something in a patch: objects with "$patch" (reporting keep false for v
// itself), other directive keys and null fields. It may modify v.
func clean(v any) (c any, keep bool) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[directiveMarker]; ok {
			return nil, false
		}
		for k, e := range v {
			if e == nil || k == retainKeysDirective || strings.HasPrefix(k, setOrderPrefix) || strings.HasPrefix(k, deleteFromPrefix) {
				delete(v, k)
			} else {
				setClean(v, k, e)
			}
		}
		return v, true
	case []any:
		out := make([]any, 0, len(v))
		for _, e := range v {
			if c, keep := clean(e); keep {
				out = append(out, c)
			}
		}
		return out, true
	}
	return v, true
}
