package storage

import (
	"slices"
	"strconv"
)

// Operator is a selector requirement's operator.
type Operator string

// Label and field selector operators.
const (
	Equals       Operator = "=" // also written "=="
	NotEquals    Operator = "!="
	In           Operator = "in"
	NotIn        Operator = "notin"
	Exists       Operator = "exists"  // a bare key
	DoesNotExist Operator = "!exists" // "!key"
	GreaterThan  Operator = "gt"      // "key>N": the label is an integer above N
	LessThan     Operator = "lt"      // "key<N": the label is an integer below N
)

// Requirement is one clause of a selector; a selector is the AND of its
// requirements.
type Requirement struct {
	Key    string
	Op     Operator
	Values []string // one value for Equals/NotEquals, a set for In/NotIn
}

// Selector is a parsed label or field selector. The empty selector matches
// everything.
type Selector []Requirement

// Predicate filters objects by their labels and fields without decoding
// them. The zero Predicate matches everything.
type Predicate struct {
	Label Selector
	Field Selector
	// FieldsOf, when set, gives the field attributes of an object whose
	// Fields lack a key the Field selector names. Fields are computed when
	// an object is written; a custom resource written before its CRD
	// declared the selectable field "spec.color" has no "spec.color", and
	// FieldsOf computes it from the object as it is now, as kube does on
	// every read. Nil: a missing key does not match.
	FieldsOf func(Object) map[string]string
}

// Empty reports whether p matches everything.
func (p Predicate) Empty() bool { return len(p.Label) == 0 && len(p.Field) == 0 }

// Matches reports whether an object with these attributes passes p.
func (p Predicate) Matches(o Object) bool {
	if !p.Label.Matches(o.Labels) {
		return false
	}
	fields := o.Fields
	if p.FieldsOf != nil && !p.Field.keysIn(fields) {
		fields = p.FieldsOf(o)
	}
	return p.Field.Matches(fields)
}

// keysIn reports whether attrs has every key s names.
func (s Selector) keysIn(attrs map[string]string) bool {
	for _, r := range s {
		if _, ok := attrs[r.Key]; !ok {
			return false
		}
	}
	return true
}

// Matches reports whether a set of attributes (labels or fields) satisfies
// every requirement of s.
func (s Selector) Matches(attrs map[string]string) bool {
	for _, r := range s {
		if !r.Matches(attrs) {
			return false
		}
	}
	return true
}

// Matches reports whether attrs satisfies r.
func (r Requirement) Matches(attrs map[string]string) bool {
	v, ok := attrs[r.Key]
	switch r.Op {
	case Equals:
		return ok && v == r.Values[0]
	case NotEquals:
		return !ok || v != r.Values[0]
	case In:
		return ok && slices.Contains(r.Values, v)
	case NotIn:
		return !ok || !slices.Contains(r.Values, v)
	case Exists:
		return ok
	case DoesNotExist:
		return !ok
	case GreaterThan, LessThan:
		// As kube: a label that is not an integer never matches.
		have, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			return false
		}
		want, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return false
		}
		if r.Op == GreaterThan {
			return have > want
		}
		return have < want
	}
	return false
}
