package rbac

import (
	"fmt"
	"slices"
)

// LabelSelector is metav1.LabelSelector: every matchLabels pair and every
// matchExpressions requirement must hold. The empty selector matches
// every set of labels.
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is one requirement of a LabelSelector.
type LabelSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// The operators of a LabelSelectorRequirement.
const (
	SelectorOpIn           = "In"
	SelectorOpNotIn        = "NotIn"
	SelectorOpExists       = "Exists"
	SelectorOpDoesNotExist = "DoesNotExist"
)

// Validate reports the first requirement kube's LabelSelectorAsSelector
// refuses: In and NotIn need values, Exists and DoesNotExist take none,
// and no other operator is known. (Label keys and values are not checked
// for syntax here; kube's object validation does that.)
func (s LabelSelector) Validate() error {
	for _, r := range s.MatchExpressions {
		switch r.Operator {
		case SelectorOpIn, SelectorOpNotIn:
			if len(r.Values) == 0 {
				return fmt.Errorf("%w: key %q: for 'in', 'notin' operators, values set can't be empty", ErrInvalidSelector, r.Key)
			}
		case SelectorOpExists, SelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				return fmt.Errorf("%w: key %q: values set must be empty for exists and does not exist", ErrInvalidSelector, r.Key)
			}
		default:
			return fmt.Errorf("%w: %q is not a valid label selector operator", ErrInvalidSelector, r.Operator)
		}
	}
	return nil
}

// Matches reports whether labels satisfy the selector. A selector that
// does not Validate matches nothing.
func (s LabelSelector) Matches(labels map[string]string) bool {
	if s.Validate() != nil {
		return false
	}
	for k, v := range s.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, r := range s.MatchExpressions {
		v, ok := labels[r.Key]
		switch r.Operator {
		case SelectorOpIn:
			if !ok || !slices.Contains(r.Values, v) {
				return false
			}
		case SelectorOpNotIn:
			if ok && slices.Contains(r.Values, v) {
				return false
			}
		case SelectorOpExists:
			if !ok {
				return false
			}
		case SelectorOpDoesNotExist:
			if ok {
				return false
			}
		}
	}
	return true
}
