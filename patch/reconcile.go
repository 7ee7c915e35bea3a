package patch

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// safeTypes are the named types of a schema below which no type is atomic
// and every type resolves with a branch: smd's reconciliation of a field
// set with the schema (ReconcileFieldSetWithSchema) changes nothing and
// fails nowhere below them, whatever the set.
type safeTypes map[string]bool

// newSafeTypes finds sc's safe types: the least fixed point of "unsafe"
// (atomic, unresolved or branchless, or reaching such a type), from which
// the safe ones are the rest.
func newSafeTypes(sc *smdschema.Schema) safeTypes {
	if sc == nil {
		return nil
	}
	unsafe := map[string]bool{}
	var refUnsafe func(tr smdschema.TypeRef, depth int) bool
	refUnsafe = func(tr smdschema.TypeRef, depth int) bool {
		if tr.NamedType != nil && tr.ElementRelationship == nil {
			return unsafe[*tr.NamedType]
		}
		if depth > 32 {
			return true
		}
		a, ok := sc.Resolve(tr)
		if !ok || a.Map == nil && a.Scalar == nil && a.List == nil {
			return true
		}
		if a.Map != nil {
			if a.Map.ElementRelationship == smdschema.Atomic {
				return true
			}
			for _, f := range a.Map.Fields {
				if refUnsafe(f.Type, depth+1) {
					return true
				}
			}
			if a.Map.ElementType != (smdschema.TypeRef{}) && refUnsafe(a.Map.ElementType, depth+1) {
				return true
			}
		}
		if a.List != nil && (a.List.ElementRelationship == smdschema.Atomic || refUnsafe(a.List.ElementType, depth+1)) {
			return true
		}
		return false
	}
	for changed := true; changed; {
		changed = false
		for _, t := range sc.Types {
			if unsafe[t.Name] {
				continue
			}
			if refUnsafe(smdschema.TypeRef{Inlined: t.Atom}, 0) {
				unsafe[t.Name] = true
				changed = true
			}
		}
	}
	safe := safeTypes{}
	for _, t := range sc.Types {
		if !unsafe[t.Name] {
			safe[t.Name] = true
		}
	}
	return safe
}

// noop reports that typed.ReconcileFieldSetWithSchema(set, tv) for a
// value of type tr returns the set unchanged (nil) without error: no node
// of set reaches below a type that is atomic now. It walks as smd's
// reconcileWithSchemaWalker does, without building paths, and not below
// a safe type; false is "ask smd", which gives the change or the error.
// isAtomic is set holding the node as a member without children (false
// for the root).
func (safe safeTypes) noop(sc *smdschema.Schema, tr smdschema.TypeRef, set *fieldpath.Set, isAtomic bool) bool {
	if tr.NamedType != nil && tr.ElementRelationship == nil && safe[*tr.NamedType] {
		return true
	}
	a, ok := sc.Resolve(tr)
	if !ok {
		return false
	}
	switch {
	case a.Map != nil:
		t := a.Map
		if isUntypedDeducedMap(t) {
			return true
		}
		if !isAtomic && t.ElementRelationship == smdschema.Atomic {
			return set == nil || set.Size() == 0
		}
		return set == nil || safe.items(sc, set, t, nil)
	case a.Scalar != nil:
		return true
	case a.List != nil:
		t := a.List
		if !isAtomic && t.ElementRelationship == smdschema.Atomic {
			return false
		}
		return set == nil || safe.items(sc, set, nil, t)
	}
	return false
}

// items is noop over set's children and members, of map m's fields and
// elements or list l's elements.
func (safe safeTypes) items(sc *smdschema.Schema, set *fieldpath.Set, m *smdschema.Map, l *smdschema.List) bool {
	typeOf := func(pe fieldpath.PathElement) (smdschema.TypeRef, bool) {
		if l != nil {
			return l.ElementType, true
		}
		tr := m.ElementType
		if pe.FieldName != nil {
			if sf, ok := m.FindField(*pe.FieldName); ok {
				tr = sf.Type
			}
		}
		return tr, tr != smdschema.TypeRef{}
	}
	ok := true
	set.Children.Iterate(func(pe fieldpath.PathElement) {
		if !ok {
			return
		}
		if tr, found := typeOf(pe); found {
			child, _ := set.Children.Get(pe)
			ok = safe.noop(sc, tr, child, false)
		}
	})
	set.Members.Iterate(func(pe fieldpath.PathElement) {
		if !ok {
			return
		}
		if _, has := set.Children.Get(pe); has {
			return // walked above
		}
		if tr, found := typeOf(pe); found {
			ok = safe.noop(sc, tr, nil, true)
		}
	})
	return ok
}

// isUntypedDeducedMap is smd's: a map without fields whose elements are
// untyped (preserve-unknown-fields without properties).
func isUntypedDeducedMap(m *smdschema.Map) bool {
	t := m.ElementType
	deduced := false
	if t.NamedType != nil {
		deduced = *t.NamedType == "__untyped_deduced_"
	} else {
		deduced = t.Inlined.Scalar != nil && *t.Inlined.Scalar == "untyped"
	}
	return deduced && m.Fields == nil
}
