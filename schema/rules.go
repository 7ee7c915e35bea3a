package schema

import (
	"context"
	"maps"
	"slices"

	"github.com/kapi-dev/kapi/internal/validation"
)

// FieldError is one validation failure: kube's field.Error, with its type
// ("FieldValueInvalid", ...), field path ("spec.replicas"), offending value
// and detail. Its Error method formats it as kube does.
type FieldError = validation.Error

// OmitValue as a FieldError's Value leaves the value out of its message
// ("Invalid value: must not exceed replicas"), as kube does for the
// objects and lists a CEL rule fails on.
var OmitValue = validation.OmitValue

// Rules evaluates the x-kubernetes-validations (CEL) rules of a schema.
// obj is the object being written and old the stored one (nil on create);
// transition rules (those reading oldSelf) are evaluated only where old
// has a value, or with optionalOldSelf. Every failure is one FieldError.
type Rules interface {
	Validate(ctx context.Context, obj, old map[string]any) []FieldError
}

// Compiler compiles every x-kubernetes-validations rule of a whole-object
// schema into Rules, reporting rules that do not compile or that exceed
// the cost limits as an error. kapi's core has none: CEL lives in the
// module github.com/kapi-dev/kapi/cel, which keeps CEL's dependencies out
// of the core module.
type Compiler func(root *Schema) (Rules, error)

// RulePaths lists the paths of the nodes of s that carry
// x-kubernetes-validations rules ("spec", "spec.ports[*]"), so that a
// server without a Compiler can refuse such a schema by naming them.
func (s *Schema) RulePaths() []string {
	if !s.hasRules() { // the common case, walked without building paths
		return nil
	}
	var out []string
	var walk func(n *Schema, path string)
	walk = func(n *Schema, path string) {
		if n == nil {
			return
		}
		if len(n.Validations) > 0 {
			p := path
			if p == "" {
				p = "<root>"
			}
			out = append(out, p)
		}
		for _, name := range slices.Sorted(maps.Keys(n.Properties)) {
			walk(n.Properties[name], join(path, name))
		}
		walk(n.AdditionalProperties, path+"[*]")
		walk(n.Items, path+"[*]")
	}
	walk(s, "")
	return out
}

// hasRules reports whether a node of s carries x-kubernetes-validations.
func (s *Schema) hasRules() bool {
	if s == nil {
		return false
	}
	if len(s.Validations) > 0 || s.AdditionalProperties.hasRules() || s.Items.hasRules() {
		return true
	}
	for _, p := range s.Properties {
		if p.hasRules() {
			return true
		}
	}
	return false
}
