package schema

import (
	"fmt"
	"strconv"
)

// props is kube-openapi's schemaPropsValidator: allOf, anyOf, oneOf and
// not. It returns its match count: one, plus the count of the anyOf and
// oneOf branches it reports and of every allOf branch.
//
// When no anyOf branch passes, kube reports the errors of one branch: the
// one with the highest match count (the first of equals), that is the
// branch that came closest. oneOf does the same when no branch passes,
// and reports no branch's errors when several do. Branches are validated
// without ratcheting, as kube's are.
func (v *validator) props(s *Schema, x any) int {
	if len(s.AnyOf) == 0 && len(s.OneOf) == 0 && len(s.AllOf) == 0 && s.Not == nil {
		return 1
	}
	n := 1
	q := strconv.Quote(v.at())
	if len(s.AnyOf) > 0 {
		var best []FieldError
		bestN, passed := 0, false
		for i, sub := range s.AnyOf {
			w := validator{path: v.path} // w adds to the path past its end, and restores it
			m := w.value(sub, x, nil)
			if len(w.errs) == 0 {
				passed, best, bestN = true, nil, m
				break
			}
			if i == 0 || m > bestN {
				best, bestN = w.errs, m
			}
		}
		if !passed {
			v.composite(q + " must validate at least one schema (anyOf)")
			v.errs = append(v.errs, best...)
		}
		n += bestN
	}
	if len(s.OneOf) > 0 {
		valid, firstN := 0, 0
		var best []FieldError
		bestN, failed := 0, false
		for _, sub := range s.OneOf {
			w := validator{path: v.path} // w adds to the path past its end, and restores it
			m := w.value(sub, x, nil)
			if len(w.errs) == 0 {
				valid++
				if valid == 1 {
					firstN = m
				}
				best, failed = nil, false
				continue
			}
			if valid == 0 && (!failed || m > bestN) {
				best, bestN, failed = w.errs, m, true
			}
		}
		switch valid {
		case 1:
			n += firstN
		case 0:
			v.composite(q + " must validate one and only one schema (oneOf). Found none valid")
			v.errs = append(v.errs, best...)
			n += bestN
		default:
			v.composite(fmt.Sprintf("%s must validate one and only one schema (oneOf). Found %d valid alternatives", q, valid))
		}
	}
	if len(s.AllOf) > 0 {
		valid := 0
		for _, sub := range s.AllOf {
			w := validator{path: v.path} // w adds to the path past its end, and restores it
			n += w.value(sub, x, nil)
			if len(w.errs) == 0 {
				valid++
			}
			v.errs = append(v.errs, w.errs...)
		}
		if valid != len(s.AllOf) {
			more := ""
			if valid == 0 {
				more = ". None validated"
			}
			v.composite(q + " must validate all the schemas (allOf)" + more)
		}
	}
	if s.Not != nil {
		w := validator{path: v.path} // w adds to the path past its end, and restores it
		w.value(s.Not, x, nil)
		if len(w.errs) == 0 {
			v.composite(q + " must not validate the schema (not)")
		}
	}
	return n
}
