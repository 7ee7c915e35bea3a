package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/internal/validation"
)

// typeInvalid is kube's field.ErrorTypeTypeInvalid: the value does not
// have the schema's type. It prints as "Invalid value".
const typeInvalid = validation.TypeTypeInvalid

// Validate checks obj — the JSON form of a whole object: map[string]any,
// []any, string, bool, nil, and numbers as json.Number, int64, int or
// float64 — against s, the whole-object schema, as kube-apiserver checks a
// custom resource: the OpenAPI v3 validation of kube-openapi, the
// uniqueness of x-kubernetes-list-type set and map entries, and the
// apiVersion, kind and metadata of x-kubernetes-embedded-resource values.
// Every failure at any depth is one FieldError, with kube's types, field
// paths and messages:
//
//	spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"
//	spec.ports[1]: Duplicate value: {"port":80}
//
// String formats are checked as kube checks them on custom resources
// (format.go); a failing anyOf or oneOf reports the errors of the branch
// kube picks (combinators.go), and a message kube's validator repeats is
// reported once.
//
// Numbers are read as kube reads JSON: an integer literal that fits in
// int64 is an integer, anything else a float64 (so "integer" accepts 2.0
// and rejects 1.5). Where kube walks a Go map, whose order is random,
// Validate takes keys in sorted order, so its result is deterministic.
// The root's apiVersion, kind and metadata are not checked here (the
// registry does it). Validate does not modify obj and is safe for
// concurrent use.
func (s *Schema) Validate(obj any) []FieldError {
	v := validator{}
	v.value(s, obj, nil)
	errs := v.result()
	if m, ok := obj.(map[string]any); ok && s != nil {
		errs = append(errs, embeddedErrors(s, m)...)
		errs = append(errs, listErrors(s, m)...)
	}
	return errs
}

// validator collects the failures of kube-openapi's SchemaValidator.
type validator struct {
	errs []FieldError
	keys []string // the sorted keys of the objects being checked
	full bool     // see validateUpdate
	// path is the field path of the value being checked, kube-openapi's
	// name of it: made into a string only for an error (at).
	path []byte
}

// at is the path of the value being checked.
func (v *validator) at() string { return string(v.path) }

// result is the errors without repeats: kube-openapi's results keep one
// error of each message.
func (v *validator) result() []FieldError {
	if len(v.errs) < 2 {
		return v.errs
	}
	seen := make(map[string]bool, len(v.errs))
	out := v.errs[:0:0]
	for _, e := range v.errs {
		k := e.Type + "\x00" + e.Field + "\x00" + e.Detail + "\x00" + fmt.Sprint(e.Value)
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// fieldOf is kube's conversion of a kube-openapi name into a field path.
func fieldOf(path string) string { return strings.TrimPrefix(path, ".") }

func (v *validator) add(typ, path string, value any, detail string) {
	v.errs = append(v.errs, FieldError{Type: typ, Field: fieldOf(path), Value: value, Detail: detail})
}

// invalid is an error kube reports as field.Invalid on the node.
func (v *validator) invalid(path string, value any, msg string) {
	if value == nil {
		value = ""
	}
	v.add(validation.TypeInvalid, path, value, msg)
}

// composite is an error kube-openapi reports without a field (anyOf,
// ranges): kube puts it on a nil field.Path, which prints as "<nil>".
func (v *validator) composite(msg string) {
	v.errs = append(v.errs, FieldError{Type: validation.TypeInvalid, Field: "<nil>", Value: "", Detail: msg})
}

// types lists the JSON types a node accepts, as kube-openapi sees them.
func types(s *Schema) []string {
	if s.IntOrString {
		return []string{"integer", "string"}
	}
	if s.Type != "" {
		return []string{s.Type}
	}
	return nil
}

// formatOf is the format kube keeps after stripping the ones it does not
// support for the node's type.
func formatOf(s *Schema) string {
	if s.Format == "" {
		return ""
	}
	t := s.Type
	if s.IntOrString {
		t = ""
	}
	switch t {
	case "", "string":
		if _, ok := stringFormats[strings.ReplaceAll(s.Format, "-", "")]; ok {
			return s.Format
		}
	case "integer":
		if s.Format == "int32" || s.Format == "int64" {
			return s.Format
		}
	case "number":
		if s.Format == "float" || s.Format == "double" {
			return s.Format
		}
	}
	return ""
}

// number reads a JSON number as kube's decoder does: int64 when the
// literal is an integer that fits, float64 otherwise.
func number(x any) (any, bool) {
	switch n := x.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, true
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return nil, false
		}
		return f, true
	case int64, float64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float32:
		return float64(n), true
	}
	return nil, false
}

// jsonType is kube-openapi's name of the type of a value.
func jsonType(x any) string {
	switch x.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64:
		return "integer"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// isJSONInteger is go-openapi's swag.IsFloat64AJSONInteger.
func isJSONInteger(f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < -(1<<53-1) || f > 1<<53-1 {
		return false
	}
	return f == math.Trunc(f)
}

// value validates x against s at path and returns kube-openapi's match
// count: how many checks applied and passed, by which anyOf and oneOf
// choose the branch whose errors they report. c, when not nil, is x's
// correlation with the old object of an update: errors below a value
// equal to its old value are dropped (ratcheting).
func (v *validator) value(s *Schema, x any, c *corr) int {
	if s == nil {
		return 0
	}
	if c != nil && !v.full && c.equal() {
		// Its errors would be dropped below. (The match count of a
		// correlated value is not used: branches are not correlated.)
		return 0
	}
	mark := len(v.errs)
	n := v.node(s, x, c)
	if c != nil && len(v.errs) > mark && c.equal() {
		v.errs = v.errs[:mark]
	}
	return n
}

// node is kube-openapi's SchemaValidator.Validate: the type, the
// combinators, string, format, number, array, enum and object checks in
// that order. Each check that applies counts one, plus its own count.
func (v *validator) node(s *Schema, x any, c *corr) int {
	if n, ok := number(x); ok {
		x = n
	}
	if x == nil {
		n := 0
		if v.typeCheck(s, nil) {
			n = 1
		}
		v.enum(s, nil)
		return n
	}
	n := 2 // the node itself and the enum check
	if len(types(s)) > 0 || formatOf(s) != "" {
		n++
		if v.typeCheck(s, x) {
			n++
		}
	}
	n += 1 + v.props(s, x)
	switch t := x.(type) {
	case string:
		n++
		v.str(s, t)
		if f := formatOf(s); f != "" {
			n++
			if !checkFormat(f, t) {
				path := v.at()
				v.add(typeInvalid, path, t, fmt.Sprintf("%s in body must be of type %s: %q", path, f, t))
			}
		}
	case int64, float64:
		n += 2
		v.num(s, t)
	case []any:
		n += 1 + v.slice(s, t, c)
	}
	v.enum(s, x)
	if m, ok := x.(map[string]any); ok {
		n += 1 + v.object(s, m, c)
	}
	return n
}

// typeCheck is kube-openapi's typeValidator; it reports whether x passed.
func (v *validator) typeCheck(s *Schema, x any) bool {
	ts := types(s)
	format := formatOf(s)
	if x == nil {
		if len(ts) > 0 && !s.Nullable {
			v.add(typeInvalid, v.at(), "null", fmt.Sprintf("%s in body must be of type %s: %q", v.at(), strings.Join(ts, ","), "null"))
			return false
		}
		return true
	}
	if len(ts) == 0 && format == "" {
		return true
	}
	st := jsonType(x)
	_, isStr := x.(string)
	_, isList := x.([]any)
	f, isFloat := x.(float64)
	floatInt := isFloat && isJSONInteger(f) && slices.Contains(ts, "integer")
	intFloat := st == "integer" && slices.Contains(ts, "number")
	if !isStr && !isList && format != "" {
		// The Go format of the value: int64 or float64, none for others.
		var goFormat string
		switch x.(type) {
		case int64:
			goFormat = "int64"
		case float64:
			goFormat = "float64"
		}
		if !slices.Contains(ts, st) && goFormat != format && !floatInt && !intFloat {
			v.add(typeInvalid, v.at(), goFormat, fmt.Sprintf("%s in body must be of type %s: %q", v.at(), format, goFormat))
			return false
		}
	}
	hasNum := slices.Contains(ts, "number") || slices.Contains(ts, "integer")
	if !hasNum && format != "" && (isStr || isList) {
		return true
	}
	if !slices.Contains(ts, st) && !floatInt && !intFloat {
		v.add(typeInvalid, v.at(), st, fmt.Sprintf("%s in body must be of type %s: %q", v.at(), strings.Join(ts, ","), st))
		return false
	}
	return true
}

func (v *validator) str(s *Schema, x string) {
	n := int64(utf8.RuneCountInString(x))
	if s.MaxLength != nil && n > *s.MaxLength {
		v.add(validation.TypeTooLong, v.at(), "<value omitted>", tooLong(*s.MaxLength))
		return
	}
	if s.MinLength != nil && n < *s.MinLength {
		v.invalid(v.at(), x, fmt.Sprintf("%s in body should be at least %d chars long", v.at(), *s.MinLength))
		return
	}
	if s.Pattern != "" {
		re, err := compile(s.Pattern)
		if err != nil {
			v.invalid(v.at(), x, fmt.Sprintf("%s in body should match '%s, but pattern is invalid: %s'", v.at(), s.Pattern, err))
			return
		}
		if !re.MatchString(x) {
			v.invalid(v.at(), x, fmt.Sprintf("%s in body should match '%s'", v.at(), s.Pattern))
		}
	}
}

func tooLong(n int64) string {
	if n == 1 {
		return "may not be more than 1 byte"
	}
	return fmt.Sprintf("may not be more than %d bytes", n)
}

func tooMany(n int64) string {
	if n == 1 {
		return "must have at most 1 item"
	}
	return fmt.Sprintf("must have at most %d items", n)
}

var patterns sync.Map // string → *regexp.Regexp or error

func compile(p string) (*regexp.Regexp, error) {
	if c, ok := patterns.Load(p); ok {
		if re, ok := c.(*regexp.Regexp); ok {
			return re, nil
		}
		return nil, c.(error)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		patterns.Store(p, err)
		return nil, err
	}
	patterns.Store(p, re)
	return re, nil
}

func (v *validator) num(s *Schema, x any) {
	typeName := ""
	format := ""
	if !s.IntOrString {
		switch s.Type {
		case "integer":
			typeName = "integer"
			if s.Format == "int32" || s.Format == "int64" {
				format = s.Format
			}
		case "number":
			typeName = "number"
			if s.Format == "float" || s.Format == "double" {
				format = s.Format
			}
		}
	}
	if err := inRange(x, typeName, format, "Checked", v); err != "" {
		v.composite(err)
	}
	i, isInt := x.(int64)
	f := asFloat(x)
	if s.MultipleOf != nil {
		m := *s.MultipleOf
		if inRange(m, typeName, format, "MultipleOf", v) == "" && isInt {
			mi := int64(m)
			if mi <= 0 {
				v.invalid(v.at(), "", fmt.Sprintf("factor MultipleOf declared for %s must be positive: %v", v.at(), mi))
			} else if i%mi != 0 {
				v.invalid(v.at(), i, fmt.Sprintf("%s in body should be a multiple of %v", v.at(), mi))
			}
		} else if m <= 0 {
			v.invalid(v.at(), "", fmt.Sprintf("factor MultipleOf declared for %s must be positive: %v", v.at(), m))
		} else {
			q := f / m
			if m < 1 {
				q = 1 / m * f
			}
			if !isJSONInteger(q) {
				v.invalid(v.at(), f, fmt.Sprintf("%s in body should be a multiple of %v", v.at(), m))
			}
		}
	}
	if s.Minimum != nil {
		v.bound(x, *s.Minimum, s.ExclusiveMinimum, false, typeName, format)
	}
	if s.Maximum != nil {
		v.bound(x, *s.Maximum, s.ExclusiveMaximum, true, typeName, format)
	}
}

func (v *validator) bound(x any, b float64, exclusive, isMax bool, typeName, format string) {
	prefix := "Minimum boundary"
	if isMax {
		prefix = "Maximum boundary"
	}
	var bad bool
	var shown string
	if i, ok := x.(int64); ok && inRange(b, typeName, format, prefix, v) == "" {
		bi := int64(b)
		bad = isMax && (i > bi || exclusive && i == bi) || !isMax && (i < bi || exclusive && i == bi)
		shown = strconv.FormatInt(bi, 10)
	} else {
		f := asFloat(x)
		bad = isMax && (f > b || exclusive && f == b) || !isMax && (f < b || exclusive && f == b)
		shown = fmt.Sprint(b)
	}
	if !bad {
		return
	}
	var rel string
	switch {
	case isMax && exclusive:
		rel = "less than"
	case isMax:
		rel = "less than or equal to"
	case exclusive:
		rel = "greater than"
	default:
		rel = "greater than or equal to"
	}
	v.invalid(v.at(), x, fmt.Sprintf("%s in body should be %s %s", v.at(), rel, shown))
}

func asFloat(x any) float64 {
	switch n := x.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

// inRange is kube-openapi's IsValueValidAgainstRange: the message of a
// number that does not fit the node's type and format, or "".
func inRange(x any, typeName, format, prefix string, v *validator) string {
	if typeName != "integer" && format != "float" {
		return ""
	}
	var buf [32]byte
	var rep []byte // the number as written (a float as go-openapi's swag.FormatFloat64 writes it)
	switch n := x.(type) {
	case int64:
		rep = strconv.AppendInt(buf[:0], n, 10)
	case float64:
		rep = strconv.AppendFloat(buf[:0], n, 'f', -1, 64)
	}
	var err error
	if typeName == "integer" {
		bits := 64
		if format == "int32" {
			bits = 32
		}
		_, err = strconv.ParseInt(string(rep), 10, bits)
	} else {
		_, err = strconv.ParseFloat(string(rep), 32)
	}
	ok := err == nil
	if ok {
		return ""
	}
	if format != "" {
		return fmt.Sprintf("%s value must be of type %s with format %s in %s", prefix, typeName, format, v.at())
	}
	return fmt.Sprintf("%s value must be of type %s (default format) in %s", prefix, typeName, v.at())
}

// slice checks an array and returns the match count of its items plus one.
func (v *validator) slice(s *Schema, x []any, c *corr) int {
	n := 1
	if s.Items != nil {
		for i, e := range x {
			ci := c.index(i)
			mark := len(v.path)
			v.path = append(v.path, '[')
			v.path = strconv.AppendInt(v.path, int64(i), 10)
			v.path = append(v.path, ']')
			n += v.value(s.Items, e, ci)
			v.path = v.path[:mark]
		}
	}
	l := int64(len(x))
	path := "" // made on an error
	if s.MinItems != nil && l < *s.MinItems {
		path = v.at()
		v.invalid(path, l, fmt.Sprintf("%s in body should have at least %d items", path, *s.MinItems))
	}
	if s.MaxItems != nil && l > *s.MaxItems {
		path = v.at()
		v.add(validation.TypeTooMany, path, int(l), tooMany(*s.MaxItems))
	}
	if s.UniqueItems {
		for i := 1; i < len(x); i++ {
			if slices.ContainsFunc(x[:i], func(y any) bool { return sameJSON(x[i], y) }) {
				path = v.at()
				v.invalid(path, "", fmt.Sprintf("%s in body shouldn't contain duplicates", path))
				break
			}
		}
	}
	return n
}

// object checks a map and returns the match count of its values.
func (v *validator) object(s *Schema, x map[string]any, c *corr) int {
	l := int64(len(x))
	path := "" // made on an error
	if s.MinProperties != nil && l < *s.MinProperties {
		path = v.at()
		v.invalid(path, l, fmt.Sprintf("%s in body should have at least %d properties", path, *s.MinProperties))
	}
	if s.MaxProperties != nil && l > *s.MaxProperties {
		path = v.at()
		v.add(validation.TypeTooMany, path, int(l), tooMany(*s.MaxProperties))
	}
	n := 0
	// The keys, sorted, on v.keys: the calls below push theirs after
	// them, and leave them as they were.
	mark := len(v.keys)
	for k := range x {
		v.keys = append(v.keys, k)
	}
	keys := v.keys[mark:]
	slices.Sort(keys)
	root := len(v.path) == 0
	end := len(v.path)
	if s.AdditionalProperties != nil {
		for _, k := range keys {
			if _, ok := s.Properties[k]; !ok && !v.skip(c, k, root) {
				ck := c.field(k, root)
				v.path = append(append(v.path, '.'), k...) // path+"."+k, at the root too
				n += v.value(s.AdditionalProperties, x[k], ck)
				v.path = v.path[:end]
			}
		}
	}
	for _, k := range keys {
		if p, ok := s.Properties[k]; ok && !v.skip(c, k, root) {
			ck := c.field(k, root)
			if !root { // child(path, k)
				v.path = append(v.path, '.')
			}
			v.path = append(v.path, k...)
			n += v.value(p, x[k], ck)
			v.path = v.path[:end]
		}
	}
	v.keys = v.keys[:mark]
	for _, k := range s.Required {
		if _, ok := x[k]; !ok {
			v.add(validation.TypeRequired, v.at()+"."+k, "", "")
		}
	}
	return n
}

// skip reports that the value k of an object (at the root or not),
// correlated by c,
// need not be checked: a scalar unchanged from its old value, whose
// errors would be dropped.
func (v *validator) skip(c *corr, k string, root bool) bool {
	return !v.full && c.sameLeaf(k, root)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
