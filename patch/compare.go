package patch

import (
	"encoding/json"
	"slices"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kapi-dev/kapi/internal/jsonval"
)

// fastCompare enables compareJSON (tests turn it off to run smd's walks).
var fastCompare = true

// compareJSON is what Update asks of smd about live and obj, two JSON-form
// objects (numbers json.Number, int64 or float64) typed by sc and tr:
// that live is valid, that obj is valid (both with duplicates allowed, as
// FromUnstructured(..., AllowDuplicates)), and live.Compare(obj). It walks
// the JSON-form maps themselves, without converting numbers or building
// smd values, and skips what both share. It reports ok only when both are
// valid and every node it met is one it reads as smd does: no null beside
// a value, no list that is neither atomic nor associative, no associative
// list item without every key or with a duplicate, no value of another
// kind than its type. Otherwise smd must be asked (it gives the errors
// too).
func compareJSON(sc *smdschema.Schema, tr smdschema.TypeRef, live, obj map[string]any) (*typed.Comparison, bool) {
	if !fastCompare {
		return nil, false
	}
	w := cmpWalker{sc: sc}
	d, ok := w.walk(tr, live, obj, true, true)
	if !ok {
		return nil, false
	}
	c := &typed.Comparison{Removed: d.removed, Modified: d.modified, Added: d.added}
	for _, s := range []**fieldpath.Set{&c.Removed, &c.Modified, &c.Added} {
		if *s == nil {
			*s = &fieldpath.Set{}
		}
	}
	return c, true
}

// diffSets are the comparison's three sets below one node, relative to
// it; nil is empty. self* report that the node's own path is in the set.
type diffSets struct {
	removed, modified, added             *fieldpath.Set
	selfRemoved, selfModified, selfAdded bool
}

type cmpWalker struct {
	sc   *smdschema.Schema
	keys fieldKeys // for createFields; nil: none
	// leaf is the empty map createFields puts at every leaf of its trie
	// (see createFields).
	leaf map[string]any
}

// valueKind is the kind of a JSON-form value as smd's deduceAtom reads it
// (null apart).
type valueKind int

const (
	smdOther valueKind = iota // null, or a Go type smd might read otherwise
	smdScalar
	smdList
	smdMap
)

func smdKind(v any) valueKind {
	switch v.(type) {
	case string, bool, int64, float64, json.Number:
		return smdScalar
	case map[string]any:
		return smdMap
	case []any:
		return smdList
	}
	return smdOther
}

// atom resolves tr and picks its branch for a value of kind k (smd's
// deduceAtom and handleAtom); ok is false when smd would fail validation
// or pick a branch that does not fit the value.
func (w *cmpWalker) atom(tr smdschema.TypeRef, k valueKind) (smdschema.Atom, bool) {
	a, found := w.sc.Resolve(tr)
	if !found {
		return smdschema.Atom{}, false
	}
	switch {
	case k == smdScalar && a.Scalar != nil:
		return smdschema.Atom{Scalar: a.Scalar}, true
	case k == smdList && a.List != nil:
		return smdschema.Atom{List: a.List}, true
	case k == smdMap && a.Map != nil:
		return smdschema.Atom{Map: a.Map}, true
	}
	return smdschema.Atom{}, false
}

// walk compares l and r (lok, rok: present) of type tr; at least one is
// present.
func (w *cmpWalker) walk(tr smdschema.TypeRef, l, r any, lok, rok bool) (d diffSets, ok bool) {
	if lok && l == nil || rok && r == nil {
		// A null is a leaf of any type (smd's branches all take it as
		// one) beside an absent field or another null; beside a value,
		// smd goes into the value's branch: left to it.
		if lok && l != nil || rok && r != nil || !w.nullValid(tr) {
			return d, false
		}
		return leaf(l, r, lok, rok), true
	}
	var k valueKind
	switch {
	case lok && rok:
		k = smdKind(l)
		if smdKind(r) != k {
			return d, false
		}
	case lok:
		k = smdKind(l)
	default:
		k = smdKind(r)
	}
	if k == smdOther {
		return d, false
	}
	a, ok := w.atom(tr, k)
	if !ok {
		return d, false
	}
	switch {
	case a.Scalar != nil:
		if lok && !scalarValid(*a.Scalar, l) || rok && !scalarValid(*a.Scalar, r) {
			return d, false
		}
		return leaf(l, r, lok, rok), true
	case a.Map != nil:
		lm, _ := l.(map[string]any)
		rm, _ := r.(map[string]any)
		if a.Map.ElementRelationship == smdschema.Atomic || len(lm) == 0 && len(rm) == 0 {
			if lok && !w.valid(tr, l) || rok && !w.valid(tr, r) {
				return d, false
			}
			return leaf(l, r, lok, rok), true
		}
		d, ok = w.walkMap(a.Map, lm, rm)
	default:
		ll, _ := l.([]any)
		rl, _ := r.([]any)
		if a.List.ElementRelationship == smdschema.Atomic || len(ll) == 0 && len(rl) == 0 {
			if lok && !w.valid(tr, l) || rok && !w.valid(tr, r) {
				return d, false
			}
			return leaf(l, r, lok, rok), true
		}
		d, ok = w.walkList(a.List, ll, rl)
	}
	d.selfAdded, d.selfRemoved = !lok, !rok
	return d, ok
}

// leaf is smd's doLeaf: a leaf is added, removed, or modified when its
// two sides differ.
func leaf(l, r any, lok, rok bool) diffSets {
	switch {
	case !lok:
		return diffSets{selfAdded: true}
	case !rok:
		return diffSets{selfRemoved: true}
	}
	return diffSets{selfModified: !equal(l, r)}
}

// fieldType is the type of m's field key; ok is false for a field the
// schema does not declare in a map without an element type (invalid).
func fieldType(m *smdschema.Map, key string) (smdschema.TypeRef, bool) {
	if sf, ok := m.FindField(key); ok {
		return sf.Type, true
	}
	return m.ElementType, m.ElementType != smdschema.TypeRef{}
}

// walkMap is smd's visitMapItems over the union of l's and r's keys, in
// order so that each set is built by appending.
func (w *cmpWalker) walkMap(t *smdschema.Map, l, r map[string]any) (d diffSets, ok bool) {
	keys := make([]string, 0, len(l)+len(r))
	for k := range r {
		keys = append(keys, k)
	}
	for k := range l {
		if _, both := r[k]; !both {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		tr, ok := fieldType(t, k)
		if !ok {
			return d, false
		}
		lv, lok := l[k]
		rv, rok := r[k]
		if lok && rok && identical(lv, rv) {
			if !w.valid(tr, lv) {
				return d, false
			}
			continue
		}
		c, ok := w.walk(tr, lv, rv, lok, rok)
		if !ok {
			return d, false
		}
		d.add(fieldpath.PathElement{FieldName: &k}, c)
	}
	return d, true
}

// add puts c, the sets of the child pe, into d.
func (d *diffSets) add(pe fieldpath.PathElement, c diffSets) {
	put := func(dst **fieldpath.Set, self bool, child *fieldpath.Set) {
		if !self && child == nil {
			return
		}
		if *dst == nil {
			*dst = &fieldpath.Set{}
		}
		if self {
			(*dst).Members.Insert(pe)
		}
		if child != nil {
			*(*dst).Children.Descend(pe) = *child
		}
	}
	put(&d.removed, c.selfRemoved, c.removed)
	put(&d.modified, c.selfModified, c.modified)
	put(&d.added, c.selfAdded, c.added)
}

// item is an associative list item with its path element.
type item struct {
	pe fieldpath.PathElement
	v  any
}

// listItems returns l's items with their path elements, sorted; ok is
// false for an item smd would not name plainly (see compareJSON) or two
// items with the same name.
func listItems(t *smdschema.List, l []any) ([]item, bool) {
	items := make([]item, 0, len(l))
	for _, v := range l {
		pe, ok := itemElement(t, v)
		if !ok {
			return nil, false
		}
		items = append(items, item{pe, v})
	}
	slices.SortFunc(items, func(a, b item) int { return a.pe.Compare(b.pe) })
	for i := 1; i < len(items); i++ {
		if items[i-1].pe.Equals(items[i].pe) {
			return nil, false
		}
	}
	return items, true
}

// itemElement is smd's listItemToPathElement for an item that has every
// key (scalars), or for a set a scalar.
func itemElement(t *smdschema.List, v any) (fieldpath.PathElement, bool) {
	var pe fieldpath.PathElement
	if len(t.Keys) == 0 {
		if smdKind(v) != smdScalar {
			return pe, false
		}
		x := value.NewValueInterface(jsonval.Number(v))
		pe.Value = &x
		return pe, true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return pe, false
	}
	key := make(value.FieldList, 0, len(t.Keys))
	for _, k := range t.Keys {
		kv, ok := m[k]
		if !ok || smdKind(kv) != smdScalar {
			return pe, false
		}
		key = append(key, value.Field{Name: k, Value: value.NewValueInterface(jsonval.Number(kv))})
	}
	key.Sort()
	pe.Key = &key
	return pe, true
}

// walkList is smd's visitListItems for an associative list whose items
// name themselves plainly on both sides.
func (w *cmpWalker) walkList(t *smdschema.List, l, r []any) (d diffSets, ok bool) {
	if t.ElementRelationship != smdschema.Associative {
		return d, false
	}
	li, ok := listItems(t, l)
	if !ok {
		return d, false
	}
	ri, ok := listItems(t, r)
	if !ok {
		return d, false
	}
	i, j := 0, 0
	for i < len(li) || j < len(ri) {
		var c diffSets
		var pe fieldpath.PathElement
		switch {
		case j == len(ri) || i < len(li) && li[i].pe.Less(ri[j].pe):
			pe = li[i].pe
			c, ok = w.walk(t.ElementType, li[i].v, nil, true, false)
			i++
		case i == len(li) || ri[j].pe.Less(li[i].pe):
			pe = ri[j].pe
			c, ok = w.walk(t.ElementType, nil, ri[j].v, false, true)
			j++
		default:
			pe = li[i].pe
			if identical(li[i].v, ri[j].v) {
				ok = w.valid(t.ElementType, li[i].v)
			} else {
				c, ok = w.walk(t.ElementType, li[i].v, ri[j].v, true, true)
			}
			i++
			j++
		}
		if !ok {
			return d, false
		}
		d.add(pe, c)
	}
	return d, true
}

// valid reports that smd's validation (duplicates allowed) accepts v of
// type tr, within what compareJSON reads (every associative list item
// named plainly).
func (w *cmpWalker) valid(tr smdschema.TypeRef, v any) bool {
	if v == nil {
		return w.nullValid(tr)
	}
	k := smdKind(v)
	if k == smdOther {
		return false
	}
	a, ok := w.atom(tr, k)
	if !ok {
		return false
	}
	switch {
	case a.Scalar != nil:
		return scalarValid(*a.Scalar, v)
	case a.Map != nil:
		for key, e := range v.(map[string]any) {
			tr, ok := fieldType(a.Map, key)
			if !ok || !w.valid(tr, e) {
				return false
			}
		}
		return true
	}
	t := a.List
	for _, e := range v.([]any) {
		if t.ElementRelationship == smdschema.Associative {
			if _, ok := itemElement(t, e); !ok {
				return false
			}
		}
		if !w.valid(t.ElementType, e) {
			return false
		}
	}
	return true
}

// nullValid reports that a null of type tr is valid for smd: any type
// with a branch takes it.
func (w *cmpWalker) nullValid(tr smdschema.TypeRef) bool {
	a, found := w.sc.Resolve(tr)
	return found && (a.Map != nil || a.Scalar != nil || a.List != nil)
}

// scalarValid is smd's validateScalar for a non-null scalar.
func scalarValid(t smdschema.Scalar, v any) bool {
	switch v.(type) {
	case string:
		return t == smdschema.String || t == smdschema.Untyped
	case bool:
		return t == smdschema.Boolean || t == smdschema.Untyped
	case int64, float64, json.Number:
		return t == smdschema.Numeric || t == smdschema.Untyped
	}
	return false
}

// equal is smd's value.Equals of two JSON-form values (numbers compare as
// numbers: an int and a float as floats).
func equal(a, b any) bool {
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case int64, float64, json.Number:
		return numEqual(jsonval.Number(a), jsonval.Number(b))
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !equal(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	}
	return false
}

// numEqual compares two numbers (int64 or float64) as smd does; anything
// else is not a number and not equal.
func numEqual(a, b any) bool {
	af, aFloat := a.(float64)
	bf, bFloat := b.(float64)
	ai, aInt := a.(int64)
	bi, bInt := b.(int64)
	switch {
	case aInt && bInt:
		return ai == bi
	case aFloat && bFloat:
		return af == bf
	case aFloat && bInt:
		return af == float64(bi)
	case aInt && bFloat:
		return float64(ai) == bf
	}
	return false
}
