package patch

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// decodeFields reads a fieldsV1 trie; canon reports that setToFields
// writes set as fields.
func decodeFields(fields map[string]any) (set *fieldpath.Set, canon bool, err error) {
	s, _, canon, err := fieldsToSet(fields)
	if err != nil {
		return nil, false, err
	}
	if s == nil {
		s = &fieldpath.Set{}
	}
	_, dot := fields["."] // the root is no member
	return s, canon && !dot, nil
}

// fieldsToSet reads a FieldsV1 trie as fieldpath.Set.FromJSON does: an
// object without (known) children is a member of its parent, "." marks a
// member that also has children, unknown path element kinds are dropped.
// The keys are sorted first so that the set's sorted slices are built by
// appending (map order is random; inserting in it is quadratic). canon
// reports that m is exactly what setToFields writes for the set (same
// keys, "." only where needed and empty, no dropped keys).
func fieldsToSet(m map[string]any) (children *fieldpath.Set, isMember, canon bool, err error) {
	type kid struct {
		key   string
		pe    fieldpath.PathElement
		sub   map[string]any
		plain bool // what peKey writes, no float, no kin (see plainKey)
	}
	kids := make([]kid, 0, len(m))
	sorted, dot := true, false
	canon = true
	for k, v := range m {
		if k == "." {
			isMember, dot = true, true
			if d, ok := v.(map[string]any); !ok || len(d) != 0 {
				canon = false
			}
			continue
		}
		pe, plain, err := deserializePathElement(k)
		if errors.Is(err, fieldpath.ErrUnknownPathElementType) {
			canon = false
			continue
		} else if err != nil {
			return nil, false, false, fmt.Errorf("parsing key as path element: %v", err)
		}
		sub, ok := v.(map[string]any)
		if !ok {
			return nil, false, false, fmt.Errorf("%s: expected an object", k)
		}
		if n := len(kids); n > 0 && sorted && !kids[n-1].pe.Less(pe) {
			sorted = false
		}
		kids = append(kids, kid{k, pe, sub, plain})
	}
	if !sorted {
		// The keys' order is nearly always the elements' (the same kind,
		// numbers of as many digits): sort by the cheap one, check, and
		// sort by the elements only when it is not.
		slices.SortFunc(kids, func(a, b kid) int { return strings.Compare(a.key, b.key) })
		for i := 1; i < len(kids); i++ {
			if !kids[i-1].pe.Less(kids[i].pe) {
				slices.SortFunc(kids, func(a, b kid) int { return a.pe.Compare(b.pe) })
				break
			}
		}
	}
	for i, c := range kids {
		grand, member, kidCanon, err := fieldsToSet(c.sub)
		if err != nil {
			return nil, false, false, err
		}
		canon = canon && kidCanon && (i == 0 || !kids[i-1].pe.Equals(c.pe)) && (c.plain || plainKey(c.key, c.pe))
		if children == nil && (member || grand != nil) {
			children = &fieldpath.Set{Members: fieldpath.MakePathElementSet(len(kids))}
		}
		if member {
			children.Members.Insert(c.pe)
		}
		if grand != nil {
			*children.Children.Descend(c.pe) = *grand
		}
	}
	if children == nil {
		isMember = true
		canon = canon && !dot // a leaf is {}
	}
	return children, isMember, canon, nil
}

// plainKey reports that k, pe's key, is what peKey writes for pe and for
// every element equal to it: its values are strings, booleans or numbers
// (smd reads them as floats), and an integral number is written alike as
// an int (a set built from an object holds ints, equal to the floats).
func plainKey(k string, pe fieldpath.PathElement) bool {
	if pe.FieldName != nil {
		return true // deserializePathElement cut "f:" off
	}
	if peKey(pe) != k {
		return false
	}
	asInt, ints := pe, false
	plain := func(v value.Value) (value.Value, bool) {
		switch {
		case v.IsString(), v.IsBool(), v.IsInt():
			return v, true
		case v.IsFloat():
			f := v.AsFloat()
			if f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
				return v, true // only itself is equal
			}
			ints = true
			return value.NewValueInterface(int64(f)), true
		}
		return v, false
	}
	if pe.Value != nil {
		v, ok := plain(*pe.Value)
		if !ok {
			return false
		}
		asInt.Value = &v
	}
	if pe.Key != nil {
		key := make(value.FieldList, len(*pe.Key))
		for i, f := range *pe.Key {
			v, ok := plain(f.Value)
			if !ok {
				return false
			}
			key[i] = value.Field{Name: f.Name, Value: v}
		}
		asInt.Key = &key
	}
	return !ints || peKey(asInt) == k
}

// deserializePathElement is fieldpath.DeserializePathElement, field names
// without its copy of the key, and keys and values of the plain form
// (plainElement) without its JSON reader; plain reports that form, which
// SerializePathElement writes back as k.
func deserializePathElement(k string) (pe fieldpath.PathElement, plain bool, err error) {
	if name, ok := strings.CutPrefix(k, "f:"); ok {
		return fieldpath.PathElement{FieldName: &name}, true, nil
	}
	if pe, ok := plainElement(k); ok {
		return pe, true, nil
	}
	pe, err = fieldpath.DeserializePathElement(k)
	return pe, false, err
}

// plainElement reads a key element `k:{"a":v,"b":v}` (names in strictly
// increasing order) or a value element `v:v`, where each v is a string
// of plainJSON characters, an integer of at most 15 digits (not -0) or a
// boolean, as smd's JSON reader does: numbers as float64, keys sorted.
func plainElement(k string) (fieldpath.PathElement, bool) {
	var pe fieldpath.PathElement
	switch {
	case strings.HasPrefix(k, "v:"):
		v, rest, ok := plainValue(k[2:])
		if !ok || rest != "" {
			return pe, false
		}
		pe.Value = &v
		return pe, true
	case !strings.HasPrefix(k, "k:{"):
		return pe, false
	}
	s := k[3:]
	var key value.FieldList
	for {
		name, rest, ok := plainString(s)
		if !ok || !strings.HasPrefix(rest, ":") || len(key) > 0 && key[len(key)-1].Name >= name {
			return pe, false
		}
		v, rest, ok := plainValue(rest[1:])
		if !ok || rest == "" {
			return pe, false
		}
		key = append(key, value.Field{Name: name, Value: v})
		switch s = rest[1:]; rest[0] {
		case ',':
			continue
		case '}':
			if s != "" {
				return pe, false
			}
			pe.Key = &key
			return pe, true
		}
		return pe, false
	}
}

// plainString reads a quoted plainJSON string at the start of s.
func plainString(s string) (str, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 || !plainJSON(s[1:1+end]) {
		return "", "", false
	}
	return s[1 : 1+end], s[2+end:], true
}

// plainValue reads a plain value (see plainElement) at the start of s.
func plainValue(s string) (value.Value, string, bool) {
	switch {
	case strings.HasPrefix(s, `"`):
		str, rest, ok := plainString(s)
		return value.NewValueInterface(str), rest, ok
	case strings.HasPrefix(s, "true"):
		return value.NewValueInterface(true), s[4:], true
	case strings.HasPrefix(s, "false"):
		return value.NewValueInterface(false), s[5:], true
	}
	i := 0
	if strings.HasPrefix(s, "-") {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	digits := s[i:j]
	if len(digits) == 0 || len(digits) > 15 || len(digits) > 1 && digits[0] == '0' || s[:j] == "-0" {
		return nil, "", false
	}
	n, err := strconv.ParseInt(s[:j], 10, 64)
	if err != nil {
		return nil, "", false
	}
	return value.NewValueInterface(float64(n)), s[j:], true
}

// setToFields writes s as a FieldsV1 trie (what Set.ToJSON writes).
func setToFields(s *fieldpath.Set) map[string]any {
	out := make(map[string]any, s.Members.Size()+s.Children.Size())
	s.Members.Iterate(func(pe fieldpath.PathElement) {
		out[peKey(pe)] = map[string]any{}
	})
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		k := peKey(pe)
		child, _ := s.Children.Get(pe)
		m := setToFields(child)
		if _, member := out[k]; member && len(m) > 0 {
			m["."] = map[string]any{}
		}
		out[k] = m
	})
	return out
}

// peKey is fieldpath.SerializePathElement, without its JSON stream for
// field names, indexes, and keys and values of plain strings, integers
// and booleans.
func peKey(pe fieldpath.PathElement) string {
	switch {
	case pe.FieldName != nil:
		return "f:" + *pe.FieldName
	case pe.Index != nil:
		return "i:" + strconv.Itoa(*pe.Index)
	}
	if k, ok := plainKeyString(pe); ok {
		return k
	}
	k, _ := fieldpath.SerializePathElement(pe)
	return k
}

// plainKeyString writes a key or value element whose names and values
// are plainJSON strings, int64s or booleans as smd's JSON stream does.
func plainKeyString(pe fieldpath.PathElement) (string, bool) {
	b := make([]byte, 0, 64)
	value := func(v value.Value) bool {
		switch x := v.Unstructured().(type) {
		case string:
			if !plainJSON(x) {
				return false
			}
			b = append(b, '"')
			b = append(b, x...)
			b = append(b, '"')
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case bool:
			b = strconv.AppendBool(b, x)
		default:
			return false
		}
		return true
	}
	switch {
	case pe.Value != nil:
		b = append(b, "v:"...)
		if !value(*pe.Value) {
			return "", false
		}
	case pe.Key != nil:
		b = append(b, "k:{"...)
		for i, f := range *pe.Key {
			if i > 0 {
				b = append(b, ',')
			}
			if !plainJSON(f.Name) {
				return "", false
			}
			b = append(b, '"')
			b = append(b, f.Name...)
			b = append(b, `":`...)
			if !value(f.Value) {
				return "", false
			}
		}
		b = append(b, '}')
	default:
		return "", false
	}
	return string(b), true
}
