package patch

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// fieldKeys are the keys of the fields a schema declares ("f:name" by
// name), written once rather than for every object.
type fieldKeys map[string]string

func newFieldKeys(sc *smdschema.Schema) fieldKeys {
	keys := fieldKeys{}
	if sc == nil {
		return keys
	}
	for _, t := range sc.Types {
		if t.Map != nil {
			for _, f := range t.Map.Fields {
				keys[f.Name] = "f:" + f.Name
			}
		}
	}
	return keys
}

// fieldKey is peKey of the field name.
func (w *cmpWalker) fieldKey(name string) string {
	if k, ok := w.keys[name]; ok {
		return k
	}
	return "f:" + name
}

// createFields is the fieldsV1 trie of a create's manager (no managers
// before it) written straight from obj, without field sets: what Update
// computes as the trie of strip(filter(added ∪ modified)) when comparing
// live (apiVersion and kind only) with obj. Every path of obj but live's
// is added, so the set is obj's paths (a container is one too) less
// reset's subtrees (the subresource's reset fields, nil: none) and less
// stripSet's members; live's fields are modified or equal, and stripped.
// obj and live are validated as compareJSON does; ok is false for what
// it leaves to smd.
//
// Every leaf of the trie, and every "." of a member with children, is one
// and the same empty map: a Deployment create makes 27 of them, 27 of its
// 221 allocations. The trie is only read once made (dropZero deletes from
// its inner nodes, never from a leaf; it is then encoded, and what decodes
// it has maps of its own), so nothing writes into the shared map:
//
//	{f:metadata: {f:labels: {.: L, f:app: L}}, f:data: {f:k: L}}, L = {}
func createFields(sc *smdschema.Schema, tr smdschema.TypeRef, keys fieldKeys, live, obj map[string]any, reset *fieldpath.Set) (map[string]any, bool) {
	if !fastCompare {
		return nil, false
	}
	w := cmpWalker{sc: sc, keys: keys, leaf: map[string]any{}}
	a, ok := w.atom(tr, smdMap)
	if !ok || a.Map.ElementRelationship == smdschema.Atomic || !w.valid(tr, live) {
		return nil, false
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		ftr, ok := fieldType(a.Map, k)
		if !ok {
			return nil, false
		}
		pe := fieldpath.PathElement{FieldName: &k}
		if _, both := live[k]; both {
			// apiVersion or kind: equal or modified, stripped either way.
			if _, ok := v.(string); !ok || !stripSet.Members.Has(pe) || !w.valid(ftr, v) {
				return nil, false
			}
			continue
		}
		if !w.added(out, pe, w.fieldKey(k), ftr, v, reset, stripSet) {
			return nil, false
		}
	}
	return out, true
}

// added puts into out, under key (peKey(pe)), the trie of pe added with
// value v of type tr, less the members and subtrees of reset and the
// members of strip (the sets at out's level, nil for none), as
// setToFields writes strip.Difference(A.RecursiveDifference(reset)) for
// A, the added set. ok is false for what smd must be asked about.
func (w *cmpWalker) added(out map[string]any, pe fieldpath.PathElement, key string, tr smdschema.TypeRef, v any, reset, strip *fieldpath.Set) bool {
	if reset != nil && reset.Members.Has(pe) {
		return w.valid(tr, v) // the whole subtree is filtered out
	}
	var r, s *fieldpath.Set
	if reset != nil {
		r, _ = reset.Children.Get(pe)
	}
	if strip != nil {
		s, _ = strip.Children.Get(pe)
	}
	kids, ok := w.addedBelow(tr, v, r, s)
	if !ok {
		return false
	}
	if _, dup := out[key]; dup {
		return false // two elements written alike: left to smd
	}
	member := strip == nil || !strip.Members.Has(pe)
	switch {
	case member && len(kids) > 0:
		kids["."] = w.leaf
		out[key] = kids
	case member:
		out[key] = w.leaf
	case len(kids) > 0:
		out[key] = kids
	}
	return true
}

// addedBelow is the trie below an added value v of type tr (nil for a
// leaf), less reset's and strip's paths (sets at v's level).
func (w *cmpWalker) addedBelow(tr smdschema.TypeRef, v any, reset, strip *fieldpath.Set) (map[string]any, bool) {
	if v == nil {
		return nil, w.nullValid(tr)
	}
	k := smdKind(v)
	if k == smdOther {
		return nil, false
	}
	a, ok := w.atom(tr, k)
	if !ok {
		return nil, false
	}
	switch {
	case a.Scalar != nil:
		return nil, scalarValid(*a.Scalar, v)
	case a.Map != nil:
		m := v.(map[string]any)
		if a.Map.ElementRelationship == smdschema.Atomic || len(m) == 0 {
			return nil, w.valid(tr, v)
		}
		out := make(map[string]any, len(m))
		for key, e := range m {
			ftr, ok := fieldType(a.Map, key)
			if !ok {
				return nil, false
			}
			var pe fieldpath.PathElement // only the sets read it
			if reset != nil || strip != nil {
				k := key
				pe.FieldName = &k
			}
			if !w.added(out, pe, w.fieldKey(key), ftr, e, reset, strip) {
				return nil, false
			}
		}
		return out, true
	}
	l := v.([]any)
	if a.List.ElementRelationship == smdschema.Atomic || len(l) == 0 {
		return nil, w.valid(tr, v)
	}
	if a.List.ElementRelationship != smdschema.Associative {
		return nil, false
	}
	items, ok := listItems(a.List, l)
	if !ok {
		return nil, false
	}
	out := make(map[string]any, len(items))
	for _, it := range items {
		if !w.added(out, it.pe, peKey(it.pe), a.List.ElementType, it.v, reset, strip) {
			return nil, false
		}
	}
	return out, true
}
