package patch

import (
	"slices"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// fieldSet is tv.ToFieldSet(). smd's walker inserts every path from the
// root as it meets it, in map order, so building the sorted slices of a
// set is quadratic in a map's size; this walk visits a map's keys in
// order and builds each level by appending. It leaves to smd the values
// it does not read the same way for sure (nulls, lists, untyped nodes,
// a type that does not fit the value), down to the whole object.
func fieldSet(tv *typed.TypedValue) (*fieldpath.Set, error) {
	if root, ok := tv.AsValue().Unstructured().(map[string]any); ok {
		if s, _, ok := setOf(tv.Schema(), tv.TypeRef(), root); ok {
			return s, nil
		}
	}
	return tv.ToFieldSet()
}

// setOf is the field set of v (of type tr) relative to v, and whether v
// is a leaf that its parent's set holds as a member; ok is false when smd
// must be asked for the whole object.
func setOf(sc *smdschema.Schema, tr smdschema.TypeRef, v any) (set *fieldpath.Set, leaf, ok bool) {
	a, found := sc.Resolve(tr)
	if !found {
		return nil, false, false
	}
	// smd's deduceAtom: the value's kind picks the branch of the type.
	switch v := v.(type) {
	case string, bool, int64, float64:
		if a.Scalar == nil {
			return nil, false, false
		}
		return nil, true, true
	case []any:
		if a.List == nil {
			return nil, false, false
		}
		if a.List.ElementRelationship == smdschema.Atomic {
			return nil, true, true
		}
		if s, ok := listSet(sc, a.List, v); ok {
			return s, false, true
		}
		s, err := view(v, sc, tr).ToFieldSet()
		return s, false, err == nil
	case map[string]any:
		if a.Map == nil {
			return nil, false, false
		}
		if a.Map.ElementRelationship == smdschema.Atomic {
			return nil, true, true
		}
		return mapSet(sc, a.Map, v)
	}
	return nil, false, false
}

// mapSet is smd's visitMapItems over m's keys in order.
func mapSet(sc *smdschema.Schema, t *smdschema.Map, m map[string]any) (*fieldpath.Set, bool, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := &fieldpath.Set{}
	for _, k := range keys {
		v := m[k]
		tr := t.ElementType
		sf, declared := t.FindField(k)
		if declared {
			tr = sf.Type
		}
		child, leaf, ok := setOf(sc, tr, v)
		if !ok {
			return nil, false, false
		}
		pe := fieldpath.PathElement{FieldName: &k}
		if cm, isMap := v.(map[string]any); leaf || !declared || isMap && len(cm) == 0 {
			s.Members.Insert(pe)
		}
		if child != nil && !child.Empty() {
			*s.Children.Descend(pe) = *child
		}
	}
	return s, false, true
}

// listSet is smd's visitListItems for an associative list whose items
// name themselves plainly: every key field present with a scalar value
// (a set's items scalars), no two items alike. Items are visited in path
// element order. ok is false for anything else, which smd walks.
func listSet(sc *smdschema.Schema, t *smdschema.List, l []any) (*fieldpath.Set, bool) {
	if t.ElementRelationship != smdschema.Associative {
		return nil, false
	}
	type item struct {
		pe fieldpath.PathElement
		v  any
	}
	items := make([]item, 0, len(l))
	for _, v := range l {
		var pe fieldpath.PathElement
		if len(t.Keys) == 0 {
			if !isScalar(v) {
				return nil, false
			}
			x := value.NewValueInterface(v)
			pe.Value = &x
		} else {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			key := make(value.FieldList, 0, len(t.Keys))
			for _, k := range t.Keys {
				kv, ok := m[k]
				if !ok || !isScalar(kv) {
					return nil, false
				}
				key = append(key, value.Field{Name: k, Value: value.NewValueInterface(kv)})
			}
			key.Sort()
			pe.Key = &key
		}
		items = append(items, item{pe, v})
	}
	slices.SortFunc(items, func(a, b item) int { return a.pe.Compare(b.pe) })
	s := &fieldpath.Set{}
	for i, it := range items {
		if i > 0 && items[i-1].pe.Equals(it.pe) {
			return nil, false // duplicates: smd's own rules
		}
		child, _, ok := setOf(sc, t.ElementType, it.v)
		if !ok {
			return nil, false
		}
		s.Members.Insert(it.pe)
		if child != nil && !child.Empty() {
			*s.Children.Descend(it.pe) = *child
		}
	}
	return s, true
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, bool, int64, float64:
		return true
	}
	return false
}

// view is v typed by the schema without validating it again: v is part of
// an object already validated (or checked piece by piece by the caller),
// and smd's validation walks the whole value. smd marks
// AsTypedUnvalidated deprecated for callers that have not validated.
func view(v any, sc *smdschema.Schema, tr smdschema.TypeRef) *typed.TypedValue {
	//lint:ignore SA1019 validated by the caller, see above
	return typed.AsTypedUnvalidated(value.NewValueInterface(v), sc, tr)
}
