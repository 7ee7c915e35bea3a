package builtin

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi/schema"
)

// Quantities (resource.Quantity: "500m", "1Gi", 0.5) are stored in kube's
// canonical form, as kube-apiserver's decoding makes them:
//
//	0.5 → "500m"   "1000m" → "1"   "2000" → "2k"   "1024Mi" → "1Gi"
//	"1.5Gi" → "1536Mi"   "1e3" → "1e3"   "0.0000000001" → "1n" (rounded up)
//
// The format comes from the suffix (binary Ki…Ei, decimal n…E, or an
// exponent e3); a binary value below 1024 or not whole is written
// decimal. A string that is not a quantity is refused as kube does (400).

const quantityRegexp = `^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`

var quantityRx = regexp.MustCompile(quantityRegexp)

var (
	decimalSuffixes = map[string]int{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
	binarySuffixes  = map[string]int{"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
	decimalNames    = map[int]string{-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
	binaryNames     = []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
)

// canonicalQuantity is s in kube's canonical form, or false when s is not
// a quantity.
func canonicalQuantity(s string) (string, bool) {
	m := quantityRx.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	num, suffix := m[1], m[2]
	v, ok := new(big.Rat).SetString(num)
	if !ok || strings.Count(num, ".") > 1 {
		return "", false
	}
	format := "decimal"
	switch {
	case suffix == "":
	case binarySuffixes[suffix] > 0:
		format = "binary"
		v.Mul(v, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(binarySuffixes[suffix]))))
	case len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E'): // "E" alone is exa
		e, err := strconv.Atoi(suffix[1:])
		if err != nil || e > 1000 || e < -1000 {
			return "", false
		}
		format = "exponent"
		v.Mul(v, pow10(e))
	default:
		e, ok := decimalSuffixes[suffix]
		if !ok {
			return "", false
		}
		v.Mul(v, pow10(e))
	}
	if v.Sign() == 0 {
		return "0", true
	}
	// Round up to nano precision, as kube does.
	nanos := new(big.Rat).Mul(v, pow10(9))
	if !nanos.IsInt() {
		q, r := new(big.Int).QuoRem(nanos.Num(), nanos.Denom(), new(big.Int))
		if r.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		}
		v.SetFrac(q, new(big.Int).Exp(big.NewInt(10), big.NewInt(9), nil))
		if v.Sign() == 0 {
			return "0", true
		}
	}
	if format == "binary" {
		abs := new(big.Rat).Abs(v)
		if abs.Cmp(big.NewRat(1024, 1)) < 0 || !v.IsInt() {
			format = "decimal"
		}
	}
	if format == "binary" {
		n := new(big.Int).Set(v.Num())
		i := 0
		k := big.NewInt(1024)
		for i < len(binaryNames)-1 {
			q, r := new(big.Int).QuoRem(n, k, new(big.Int))
			if r.Sign() != 0 {
				break
			}
			n, i = q, i+1
		}
		return n.String() + binaryNames[i], true
	}
	// mantissa × 10^exp, mantissa whole and without trailing zeros, then
	// exp lowered to a multiple of 3.
	exp := -9
	mant := new(big.Rat).Mul(v, pow10(9)).Num() // v is whole in nanos
	ten := big.NewInt(10)
	for {
		q, r := new(big.Int).QuoRem(mant, ten, new(big.Int))
		if r.Sign() != 0 || mant.Sign() == 0 {
			break
		}
		mant, exp = q, exp+1
	}
	for ((exp%3)+3)%3 != 0 {
		mant.Mul(mant, ten)
		exp--
	}
	if format == "exponent" {
		if exp == 0 {
			return mant.String(), true
		}
		return mant.String() + "e" + strconv.Itoa(exp), true
	}
	for exp > 18 {
		mant.Mul(mant, ten)
		exp--
	}
	return mant.String() + decimalNames[exp], true
}

func pow10(e int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil)
	if e < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), p)
	}
	return new(big.Rat).SetInt(p)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// quantities knows the schema nodes that are quantities (the Quantity
// definition and the copies that carry a field's own description).
type quantities map[*schema.Schema]bool

// hasQuantities reports whether any node below s, a kind's schema of
// definitions(), is a quantity: walked once per kind in the process
// (withQuantities), not once per Registry.
func hasQuantities(s *schema.Schema) bool {
	if v, ok := withQuantities.Load(s); ok {
		return v.(bool)
	}
	has := quants.within(s, map[*schema.Schema]bool{})
	withQuantities.Store(s, has)
	return has
}

// withQuantities holds hasQuantities' answers by schema (the schemas of
// definitions() live as long as the process).
var withQuantities sync.Map // *schema.Schema → bool

// within reports whether any node below s is a quantity.
func (q quantities) within(s *schema.Schema, seen map[*schema.Schema]bool) bool {
	if s == nil || seen[s] {
		return false
	}
	seen[s] = true
	if q[s] {
		return true
	}
	for _, p := range s.Properties {
		if q.within(p, seen) {
			return true
		}
	}
	return q.within(s.Items, seen) || q.within(s.AdditionalProperties, seen)
}

// canonicalize rewrites the quantities of v, described by s, in place; it
// returns the first value that is not a quantity.
func (q quantities) canonicalize(s *schema.Schema, v any) (string, bool) {
	if s == nil {
		return "", true
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := s.Properties[k]
			if p == nil {
				p = s.AdditionalProperties
			}
			if p == nil {
				continue
			}
			if q[p] {
				var str string
				switch n := e.(type) {
				case string:
					str = n
				case json.Number:
					str = n.String()
				default:
					continue
				}
				c, ok := canonicalQuantity(str)
				if !ok {
					return str, false
				}
				x[k] = c
				continue
			}
			if bad, ok := q.canonicalize(p, e); !ok {
				return bad, false
			}
		}
	case []any:
		for _, e := range x {
			if bad, ok := q.canonicalize(s.Items, e); !ok {
				return bad, false
			}
		}
	}
	return "", true
}

// quantityValue is the value of a canonical quantity, or false.
func quantityValue(v any) (*big.Rat, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	m := quantityRx.FindStringSubmatch(s)
	if m == nil {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return nil, false
	}
	switch suffix := m[2]; {
	case binarySuffixes[suffix] > 0:
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(binarySuffixes[suffix]))))
	case len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E'):
		e, err := strconv.Atoi(suffix[1:])
		if err != nil || e > 1000 || e < -1000 {
			return nil, false
		}
		r.Mul(r, pow10(e))
	default:
		e, ok := decimalSuffixes[suffix]
		if !ok {
			return nil, false
		}
		r.Mul(r, pow10(e))
	}
	return r, true
}
