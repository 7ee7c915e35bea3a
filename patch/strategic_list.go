package patch

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/schema"
)

// hints is how a list field merges.
type hints struct {
	merge bool     // merge the entries (otherwise the patch replaces the list)
	keys  []string // the merge key, or (kapi) the list-map keys
	set   bool     // kapi: list-type set, entries are values whatever their kind
}

// hintsFor reads a list field's hints: kube's patch strategy and merge
// key, or, without a strategy, kapi's list-type extension.
func hintsFor(fs *schema.Schema) hints {
	if fs == nil {
		return hints{}
	}
	switch strategy(fs) {
	case "merge":
		h := hints{merge: true}
		if fs.PatchMergeKey != "" {
			h.keys = []string{fs.PatchMergeKey}
		} else if fs.ListType == "map" {
			h.keys = fs.ListMapKeys
		}
		return h
	case "replace":
		return hints{}
	}
	switch {
	case fs.ListType == "map" && len(fs.ListMapKeys) > 0:
		return hints{merge: true, keys: fs.ListMapKeys}
	case fs.ListType == "set":
		return hints{merge: true, set: true}
	}
	return hints{}
}

// mergeListField merges the patch list of a field with schema fs into the
// original list; deleteList is set for "$deleteFromPrimitiveList/<field>".
func mergeListField(original, patch []any, fs *schema.Schema, deleteList bool) ([]any, error) {
	h := hintsFor(fs)
	if !h.merge && !deleteList {
		v, _ := clean(patch)
		return v.([]any), nil
	}
	var items *schema.Schema
	if fs != nil {
		items = fs.Items
	}
	return mergeList(original, patch, items, h, deleteList)
}

// mergeList is kube's mergeSlice: scalars merge as sets (or are deleted,
// for a deletion list), objects merge by key.
func mergeList(original, patch []any, items *schema.Schema, h hints, deleteList bool) ([]any, error) {
	if len(original) == 0 && len(patch) == 0 {
		return original, nil
	}
	ek, err := elementKind(original, patch)
	if err != nil {
		return nil, err
	}
	if ek != kindMap || h.set {
		if deleteList {
			return deleteValues(original, patch), nil
		}
		merged := dedupe(original, patch)
		inPatch, serverOnly, _ := partition(merged, patch, nil)
		return normalizeOrder(inPatch, serverOnly, patch, original, h, ek)
	}
	if len(h.keys) == 0 {
		return nil, badPatch("cannot merge lists without merge key for %s", kindName(items))
	}
	original, patch, err = specialEntries(original, patch, h.keys)
	if err != nil {
		return nil, err
	}
	merged, err := mergeEntries(original, patch, h.keys, items)
	if err != nil {
		return nil, err
	}
	inPatch, serverOnly, err := partition(merged, patch, h.keys)
	if err != nil {
		return nil, err
	}
	return normalizeOrder(inPatch, serverOnly, patch, original, h, ek)
}

// kindName names the Go kind kube's messages give the entries of a list.
func kindName(items *schema.Schema) string {
	switch {
	case items == nil:
		return "interface"
	case len(items.Properties) > 0:
		return "struct"
	case items.Type == "object":
		return "map"
	}
	return "interface"
}

// elementKind is the kind of every element of lists, which must agree and
// not be lists.
func elementKind(lists ...[]any) (kind, error) {
	var k kind
	first := true
	for _, l := range lists {
		for _, v := range l {
			vk := kindOf(v)
			switch {
			case first && vk == kindList:
				return 0, &Error{Kind: ErrApply, Msg: "lists of lists are not supported"}
			case first:
				k, first = vk, false
			case vk != k:
				return 0, badPatch("list element types are not identical: %v", lists)
			}
		}
	}
	if first {
		return 0, badPatch("no elements in any of the given slices")
	}
	return k, nil
}

// specialEntries applies the patch entries with "$patch": delete removes
// the matching original entries, replace makes the other patch entries the
// whole list. It returns the original and the patch entries left to merge.
func specialEntries(original, patch []any, keys []string) ([]any, []any, error) {
	rest := make([]any, 0, len(patch))
	deleted := map[string]bool{}
	replace := false
	for _, v := range patch {
		m := v.(map[string]any)
		d, ok := m[directiveMarker]
		if !ok {
			rest = append(rest, v)
			continue
		}
		switch d {
		case "delete":
			if k := missingKey(m, keys); k != "" {
				return nil, nil, errNoMergeKey(m, k)
			}
			deleted[keyOf(m, keys)] = true
		case "replace":
			replace = true
		case "merge":
			return nil, nil, badPatch("merging lists cannot yet be specified in the patch")
		default:
			return nil, nil, errBadPatchType(d, m)
		}
	}
	if replace {
		v, _ := clean(rest)
		return v.([]any), nil, nil
	}
	if len(deleted) > 0 {
		kept := make([]any, 0, len(original))
		for _, v := range original {
			m := v.(map[string]any)
			if !hasKeys(m, keys) || !deleted[keyOf(m, keys)] {
				kept = append(kept, v)
			}
		}
		original = kept
	}
	return original, rest, nil
}

// mergeEntries merges each patch entry into the first original entry with
// the same key, or appends it.
func mergeEntries(original, patch []any, keys []string, items *schema.Schema) ([]any, error) {
	merged := make([]any, len(original), len(original)+len(patch))
	copy(merged, original)
	at := make(map[string]int, len(merged))
	for i, v := range merged {
		if m := v.(map[string]any); hasKeys(m, keys) {
			if _, dup := at[keyOf(m, keys)]; !dup {
				at[keyOf(m, keys)] = i
			}
		}
	}
	for _, v := range patch {
		m := v.(map[string]any)
		if k := missingKey(m, keys); k != "" {
			return nil, errNoMergeKey(m, k)
		}
		key := keyOf(m, keys)
		if i, ok := at[key]; ok {
			mm, err := mergeMap(merged[i].(map[string]any), m, items)
			if err != nil {
				return nil, err
			}
			merged[i] = mm
			continue
		}
		c, _ := clean(m)
		at[key] = len(merged)
		merged = append(merged, c)
	}
	return merged, nil
}

func deleteValues(original, patch []any) []any {
	del := make(map[string]bool, len(patch))
	for _, v := range patch {
		del[valueKey(v)] = true
	}
	kept := make([]any, 0, len(original))
	for _, v := range original {
		if !del[valueKey(v)] {
			kept = append(kept, v)
		}
	}
	return kept
}

func dedupe(lists ...[]any) []any {
	seen := map[string]bool{}
	var out []any
	for _, l := range lists {
		for _, v := range l {
			if k := valueKey(v); !seen[k] {
				seen[k] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// partition splits merged into the entries by names (by key; by value when
// keys is empty) and the others, keeping their order.
func partition(merged, by []any, keys []string) (in, out []any, err error) {
	if len(keys) > 0 {
		for _, v := range merged {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, nil, errBadArgType(mapType, v)
			}
			if k := missingKey(m, keys); k != "" {
				return nil, nil, errNoMergeKey(m, k)
			}
		}
	}
	named := make(map[string]bool, len(by))
	for i, v := range by {
		if len(keys) == 0 {
			named[valueKey(v)] = true
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, badPatch("value for key %v is not a map", i)
		}
		if hasKeys(m, keys) {
			named[keyOf(m, keys)] = true
		}
	}
	for _, v := range merged {
		if named[keyOf(v, keys)] {
			in = append(in, v)
		} else {
			out = append(out, v)
		}
	}
	return in, out, nil
}

// normalizeOrder is kube's normalizeElementOrder: the patch's entries in
// patchOrder, the server-only entries in serverOrder, then the two
// interleaved by serverOrder where it relates them (mergeSorted).
func normalizeOrder(inPatch, serverOnly, patchOrder, serverOrder []any, h hints, ek kind) ([]any, error) {
	keys := h.keys
	if ek != kindMap || h.set {
		keys = nil
	}
	inPatch, err := sortByOrder(inPatch, patchOrder, keys, ek == kindMap && !h.set)
	if err != nil {
		return nil, err
	}
	serverOnly, err = sortByOrder(serverOnly, serverOrder, keys, ek == kindMap && !h.set)
	if err != nil {
		return nil, err
	}
	return mergeSorted(serverOnly, inPatch, serverOrder, keys), nil
}

// ranked is a list entry with its position in an order list (ok false when
// it has none).
type ranked struct {
	v   any
	pos int
	ok  bool
}

func rank(items, order []any, keys []string) []ranked {
	pos := make(map[string]int, len(order))
	for i := len(order) - 1; i >= 0; i-- {
		pos[keyOf(order[i], keys)] = i
	}
	r := make([]ranked, len(items))
	for i, v := range items {
		p, ok := pos[keyOf(v, keys)]
		r[i] = ranked{v, p, ok}
	}
	return r
}

// sortByOrder sorts items stably by their position in order; for objects
// (byKey) it first checks that every entry has its key and moves entries
// "$patch": delete to the end.
func sortByOrder(items, order []any, keys []string, byKey bool) ([]any, error) {
	var deletions []any
	if byKey {
		for _, l := range [][]any{items, order} {
			for _, v := range l {
				m, ok := v.(map[string]any)
				if !ok {
					return nil, errBadArgType(mapType, v)
				}
				if len(keys) == 0 {
					return nil, errNoMergeKey(m, "")
				}
				if k := missingKey(m, keys); k != "" {
					return nil, errNoMergeKey(m, k)
				}
			}
		}
		var err error
		if items, deletions, err = splitDeletions(items); err != nil {
			return nil, err
		}
	}
	r := rank(items, order, keys)
	// kube's comparator, kept as it is (an entry without a position is
	// "less" than anything) so that orders match kube's even then.
	sort.SliceStable(r, func(i, j int) bool {
		if r[i].ok && r[j].ok {
			return r[i].pos < r[j].pos
		}
		return true
	})
	out := make([]any, 0, len(r)+len(deletions))
	for _, e := range r {
		out = append(out, e.v)
	}
	return append(out, deletions...), nil
}

// splitDeletions separates the entries with "$patch": delete.
func splitDeletions(l []any) (kept, deletions []any, err error) {
	for _, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, errBadArgType(mapType, v)
		}
		if m[directiveMarker] == "delete" {
			deletions = append(deletions, v)
		} else {
			kept = append(kept, v)
		}
	}
	return kept, deletions, nil
}

// mergeSorted inserts the entries of left (server-only, in server order)
// into right (the patch's, in patch order): a left entry goes first while
// the server order puts it before the next right entry.
func mergeSorted(left, right, serverOrder []any, keys []string) []any {
	l, r := rank(left, serverOrder, keys), rank(right, serverOrder, keys)
	out := make([]any, 0, len(l)+len(r))
	i, j := 0, 0
	for i < len(l) || j < len(r) {
		if j >= len(r) || i < len(l) && l[i].ok && r[j].ok && l[i].pos < r[j].pos {
			out = append(out, l[i].v)
			i++
		} else {
			out = append(out, r[j].v)
			j++
		}
	}
	return out
}

// sameKey is kube's mergeKeyValueEqual, for checking $setElementOrder.
func sameKey(a, b any, keys []string) (bool, error) {
	if len(keys) == 0 {
		return valueKey(a) == valueKey(b), nil
	}
	ma, ok := a.(map[string]any)
	if !ok {
		return false, errBadArgType(mapType, a)
	}
	mb, ok := b.(map[string]any)
	if !ok {
		return false, errBadArgType(mapType, b)
	}
	for _, m := range []map[string]any{ma, mb} {
		if k := missingKey(m, keys); k != "" {
			return false, errNoMergeKey(m, k)
		}
	}
	return keyOf(ma, keys) == keyOf(mb, keys), nil
}

func hasKeys(m map[string]any, keys []string) bool { return missingKey(m, keys) == "" }

// missingKey is the first of keys m lacks, or "".
func missingKey(m map[string]any, keys []string) string {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return k
		}
	}
	return ""
}

// keyOf is the identity of a list entry: its merge key's value, the tuple
// of its list-map keys' values, or (no keys) the entry itself. A missing
// key counts as null, as in kube.
func keyOf(v any, keys []string) string {
	if len(keys) == 0 {
		return valueKey(v)
	}
	m, _ := v.(map[string]any)
	if len(keys) == 1 {
		return valueKey(m[keys[0]])
	}
	var b strings.Builder
	for _, k := range keys {
		s := valueKey(m[k])
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	return b.String()
}

// valueKey encodes a JSON value so that equal values (numbers as written)
// have equal keys.
func valueKey(v any) string {
	switch v := v.(type) {
	case nil:
		return "z"
	case string:
		return "s" + v
	case json.Number:
		return "n" + string(v)
	case bool:
		if v {
			return "t"
		}
		return "f"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("?%v", v)
	}
	return "j" + string(b)
}
