package schema

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
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
// Numbers are read as kube reads JSON: an integer literal that fits in
// int64 is an integer, anything else a float64 (so "integer" accepts 2.0
// and rejects 1.5). Where kube walks a Go map, whose order is random,
// Validate takes keys in sorted order, so its result is deterministic.
// The root's apiVersion, kind and metadata are not checked here (the
// registry does it). Validate does not modify obj and is safe for
// concurrent use.
func (s *Schema) Validate(obj any) []FieldError {
	v := validator{}
	v.value(s, obj, "")
	errs := v.errs
	if m, ok := obj.(map[string]any); ok && s != nil {
		errs = append(errs, embedded(s, m, "")...)
		errs = append(errs, listSetsAndMaps(s, m, "")...)
	}
	return errs
}

// validator collects the failures of kube-openapi's SchemaValidator.
type validator struct {
	errs []FieldError
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

func (v *validator) value(s *Schema, x any, path string) {
	if s == nil {
		return
	}
	if n, ok := number(x); ok {
		x = n
	}
	if x == nil {
		v.typeCheck(s, nil, path)
		v.enum(s, nil, path)
		return
	}
	v.typeCheck(s, x, path)
	v.props(s, x, path)
	switch t := x.(type) {
	case string:
		v.str(s, t, path)
		if f := formatOf(s); f != "" {
			if !checkFormat(f, t) {
				v.add(typeInvalid, path, t, fmt.Sprintf("%s in body must be of type %s: %q", path, f, t))
			}
		}
	case int64, float64:
		v.num(s, t, path)
	case []any:
		v.slice(s, t, path)
	}
	v.enum(s, x, path)
	if m, ok := x.(map[string]any); ok {
		v.object(s, m, path)
	}
}

func (v *validator) typeCheck(s *Schema, x any, path string) {
	ts := types(s)
	format := formatOf(s)
	if len(ts) == 0 && format == "" {
		return
	}
	if x == nil {
		if len(ts) > 0 && !s.Nullable {
			v.add(typeInvalid, path, "null", fmt.Sprintf("%s in body must be of type %s: %q", path, strings.Join(ts, ","), "null"))
		}
		return
	}
	st := jsonType(x)
	_, isStr := x.(string)
	_, isList := x.([]any)
	hasNum := slices.Contains(ts, "number") || slices.Contains(ts, "integer")
	if !hasNum && format != "" && (isStr || isList) {
		return
	}
	f, isFloat := x.(float64)
	floatInt := isFloat && isJSONInteger(f) && slices.Contains(ts, "integer")
	intFloat := st == "integer" && slices.Contains(ts, "number")
	if !slices.Contains(ts, st) && !floatInt && !intFloat {
		v.add(typeInvalid, path, st, fmt.Sprintf("%s in body must be of type %s: %q", path, strings.Join(ts, ","), st))
	}
}

func (v *validator) str(s *Schema, x, path string) {
	n := int64(utf8.RuneCountInString(x))
	if s.MaxLength != nil && n > *s.MaxLength {
		v.add(validation.TypeTooLong, path, "<value omitted>", tooLong(*s.MaxLength))
		return
	}
	if s.MinLength != nil && n < *s.MinLength {
		v.invalid(path, x, fmt.Sprintf("%s in body should be at least %d chars long", path, *s.MinLength))
		return
	}
	if s.Pattern != "" {
		re, err := compile(s.Pattern)
		if err != nil {
			v.invalid(path, x, fmt.Sprintf("%s in body should match '%s, but pattern is invalid: %s'", path, s.Pattern, err))
			return
		}
		if !re.MatchString(x) {
			v.invalid(path, x, fmt.Sprintf("%s in body should match '%s'", path, s.Pattern))
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

// formatNumber is go-openapi's swag.FormatFloat64 / %v of the bound.
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func (v *validator) num(s *Schema, x any, path string) {
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
	if err := inRange(x, typeName, format, "Checked", path); err != "" {
		v.composite(err)
	}
	i, isInt := x.(int64)
	f := asFloat(x)
	if s.MultipleOf != nil {
		m := *s.MultipleOf
		if inRange(m, typeName, format, "MultipleOf", path) == "" && isInt {
			mi := int64(m)
			if mi <= 0 {
				v.invalid(path, "", fmt.Sprintf("factor MultipleOf declared for %s must be positive: %v", path, mi))
			} else if i%mi != 0 {
				v.invalid(path, i, fmt.Sprintf("%s in body should be a multiple of %v", path, mi))
			}
		} else if m <= 0 {
			v.invalid(path, "", fmt.Sprintf("factor MultipleOf declared for %s must be positive: %v", path, m))
		} else {
			q := f / m
			if m < 1 {
				q = 1 / m * f
			}
			if !isJSONInteger(q) {
				v.invalid(path, f, fmt.Sprintf("%s in body should be a multiple of %v", path, m))
			}
		}
	}
	if s.Minimum != nil {
		v.bound(x, *s.Minimum, s.ExclusiveMinimum, false, typeName, format, path)
	}
	if s.Maximum != nil {
		v.bound(x, *s.Maximum, s.ExclusiveMaximum, true, typeName, format, path)
	}
}

func (v *validator) bound(x any, b float64, exclusive, isMax bool, typeName, format, path string) {
	prefix := "Minimum boundary"
	if isMax {
		prefix = "Maximum boundary"
	}
	var bad bool
	var shown string
	if i, ok := x.(int64); ok && inRange(b, typeName, format, prefix, path) == "" {
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
	v.invalid(path, x, fmt.Sprintf("%s in body should be %s %s", path, rel, shown))
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
func inRange(x any, typeName, format, prefix, path string) string {
	var rep string
	switch n := x.(type) {
	case int64:
		rep = strconv.FormatInt(n, 10)
	case float64:
		rep = formatNumber(n)
	}
	ok := true
	switch typeName {
	case "integer":
		bits := 64
		if format == "int32" {
			bits = 32
		}
		_, err := strconv.ParseInt(rep, 10, bits)
		ok = err == nil
	default:
		if format == "float" {
			_, err := strconv.ParseFloat(rep, 32)
			ok = err == nil
		}
	}
	if ok {
		return ""
	}
	if format != "" {
		return fmt.Sprintf("%s value must be of type %s with format %s in %s", prefix, typeName, format, path)
	}
	return fmt.Sprintf("%s value must be of type %s (default format) in %s", prefix, typeName, path)
}

func (v *validator) slice(s *Schema, x []any, path string) {
	if s.Items != nil {
		for i, e := range x {
			v.value(s.Items, e, path+"["+strconv.Itoa(i)+"]")
		}
	}
	n := int64(len(x))
	if s.MinItems != nil && n < *s.MinItems {
		v.invalid(path, n, fmt.Sprintf("%s in body should have at least %d items", path, *s.MinItems))
	}
	if s.MaxItems != nil && n > *s.MaxItems {
		v.add(validation.TypeTooMany, path, int(n), tooMany(*s.MaxItems))
	}
	if s.UniqueItems {
		for i := 1; i < len(x); i++ {
			if slices.ContainsFunc(x[:i], func(y any) bool { return sameJSON(x[i], y) }) {
				v.invalid(path, "", fmt.Sprintf("%s in body shouldn't contain duplicates", path))
				break
			}
		}
	}
}

// sameJSON is reflect.DeepEqual of the values kube decodes: integers and
// floats differ even when equal in value.
func sameJSON(a, b any) bool {
	if n, ok := number(a); ok {
		a = n
	}
	if n, ok := number(b); ok {
		b = n
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !sameJSON(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// enum is kube-openapi's basicCommonValidator: the value, converted to
// the Go type of an allowed value, must equal it. kube reads a CRD's enum
// values as it reads objects (integers int64, other numbers float64), and
// Go's conversions truncate a float to an integer and make a rune of an
// integer converted to a string, so 1.5 matches enum [1] and 97 matches
// enum ["a"].
func (v *validator) enum(s *Schema, x any, path string) {
	if len(s.Enum) == 0 {
		return
	}
	for _, e := range s.Enum {
		if enumMatch(x, e) {
			return
		}
	}
	allowed := make([]string, len(s.Enum))
	for i, e := range s.Enum {
		if str, ok := e.(string); ok {
			allowed[i] = strconv.Quote(str)
		} else {
			b, _ := json.Marshal(kubeJSON(e))
			allowed[i] = strconv.Quote(string(b))
		}
	}
	v.errs = append(v.errs, FieldError{Type: validation.TypeNotSupported, Field: fieldOf(path), Value: x,
		Detail: "supported values: " + strings.Join(allowed, ", ")})
}

// kubeJSON is a JSON value with its numbers as kube decodes them.
func kubeJSON(x any) any {
	switch t := x.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = kubeJSON(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = kubeJSON(e)
		}
		return l
	}
	return kubeValue(x)
}

func enumMatch(x, e any) bool {
	if x == nil || e == nil {
		return false
	}
	switch ev := kubeValue(e).(type) {
	case int64:
		switch n := x.(type) {
		case int64:
			return n == ev
		case float64:
			return int64(n) == ev
		}
		return false
	case float64:
		switch n := x.(type) {
		case int64:
			return float64(n) == ev
		case float64:
			return n == ev
		}
		return false
	case string:
		switch n := x.(type) {
		case string:
			return n == ev
		case int64:
			return string(rune(n)) == ev
		}
		return false
	case bool:
		b, ok := x.(bool)
		return ok && b == ev
	case map[string]any:
		_, ok := x.(map[string]any)
		return ok && kubeDeepEqual(x, ev)
	case []any:
		_, ok := x.([]any)
		return ok && kubeDeepEqual(x, ev)
	}
	return false
}

// kubeDeepEqual is reflect.DeepEqual of two values as kube decodes them.
func kubeDeepEqual(a, b any) bool { return sameJSON(a, b) }

func (v *validator) object(s *Schema, x map[string]any, path string) {
	n := int64(len(x))
	if s.MinProperties != nil && n < *s.MinProperties {
		v.invalid(path, n, fmt.Sprintf("%s in body should have at least %d properties", path, *s.MinProperties))
	}
	if s.MaxProperties != nil && n > *s.MaxProperties {
		v.add(validation.TypeTooMany, path, int(n), tooMany(*s.MaxProperties))
	}
	keys := sortedKeys(x)
	if s.AdditionalProperties != nil {
		for _, k := range keys {
			if _, ok := s.Properties[k]; !ok {
				v.value(s.AdditionalProperties, x[k], path+"."+k)
			}
		}
	}
	for _, k := range keys {
		if p, ok := s.Properties[k]; ok {
			child := k
			if path != "" {
				child = path + "." + k
			}
			v.value(p, x[k], child)
		}
	}
	for _, k := range s.Required {
		if _, ok := x[k]; !ok {
			v.add(validation.TypeRequired, path+"."+k, "", "")
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// props is kube-openapi's schemaPropsValidator: allOf, anyOf, oneOf, not.
func (v *validator) props(s *Schema, x any, path string) {
	if len(s.AnyOf) == 0 && len(s.OneOf) == 0 && len(s.AllOf) == 0 && s.Not == nil {
		return
	}
	q := strconv.Quote(path)
	if len(s.AnyOf) > 0 {
		var best []FieldError
		ok := false
		for _, sub := range s.AnyOf {
			w := validator{}
			w.value(sub, x, path)
			if len(w.errs) == 0 {
				ok = true
				best = nil
				break
			}
			if best == nil {
				best = w.errs
			}
		}
		if !ok {
			v.composite(q + " must validate at least one schema (anyOf)")
			v.errs = append(v.errs, best...)
		}
	}
	if len(s.OneOf) > 0 {
		valid := 0
		var best []FieldError
		for _, sub := range s.OneOf {
			w := validator{}
			w.value(sub, x, path)
			if len(w.errs) == 0 {
				valid++
				continue
			}
			if valid == 0 && best == nil {
				best = w.errs
			}
		}
		if valid != 1 {
			if valid == 0 {
				v.composite(q + " must validate one and only one schema (oneOf). Found none valid")
				v.errs = append(v.errs, best...)
			} else {
				v.composite(fmt.Sprintf("%s must validate one and only one schema (oneOf). Found %d valid alternatives", q, valid))
			}
		}
	}
	if len(s.AllOf) > 0 {
		valid := 0
		for _, sub := range s.AllOf {
			w := validator{}
			w.value(sub, x, path)
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
		w := validator{}
		w.value(s.Not, x, path)
		if len(w.errs) == 0 {
			v.composite(q + " must not validate the schema (not)")
		}
	}
}

// stringFormats are the formats kube keeps on string nodes (others are
// dropped and not checked), with their checks; a nil check accepts any
// string (kapi does not check that format yet).
var stringFormats = map[string]func(string) bool{
	"bsonobjectid": nil, "uri": nil, "email": nil, "hostname": nil,
	"ipv4": func(s string) bool { ip := net.ParseIP(s); return ip != nil && strings.Contains(s, ".") },
	"ipv6": func(s string) bool { ip := net.ParseIP(s); return ip != nil && strings.Contains(s, ":") },
	"cidr": func(s string) bool { _, _, err := net.ParseCIDR(s); return err == nil },
	"mac":  func(s string) bool { _, err := net.ParseMAC(s); return err == nil },
	"uuid": uuidRe.MatchString, "uuid3": nil, "uuid4": nil, "uuid5": nil,
	"isbn": nil, "isbn10": nil, "isbn13": nil, "creditcard": nil, "ssn": nil,
	"hexcolor": nil, "rgbcolor": nil,
	"byte":     func(s string) bool { _, err := base64.StdEncoding.DecodeString(s); return err == nil },
	"password": nil,
	"date":     func(s string) bool { _, err := time.Parse("2006-01-02", s); return err == nil },
	"duration": nil, "datetime": nil,
	"k8s-short-name": func(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 },
	"k8s-long-name":  func(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 },
}

var uuidRe = regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)

func checkFormat(format, s string) bool {
	f := stringFormats[strings.ReplaceAll(format, "-", "")]
	if format == "k8s-short-name" || format == "k8s-long-name" {
		f = stringFormats[format]
	}
	return f == nil || f(s)
}

// embedded is kube's objectmeta.Validate: the apiVersion, kind and
// metadata of every x-kubernetes-embedded-resource value below the root.
func embedded(s *Schema, x any, path string) []FieldError {
	if s == nil {
		return nil
	}
	var errs []FieldError
	switch t := x.(type) {
	case map[string]any:
		if s.EmbeddedResource {
			errs = append(errs, embeddedResource(t, path)...)
		}
		for _, k := range sortedKeys(t) {
			if p, ok := s.Properties[k]; ok {
				errs = append(errs, embedded(p, t[k], child(path, k))...)
			} else if s.AdditionalProperties != nil {
				errs = append(errs, embedded(s.AdditionalProperties, t[k], path+"["+k+"]")...)
			}
		}
	case []any:
		for i, e := range t {
			errs = append(errs, embedded(s.Items, e, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return errs
}

func embeddedResource(x map[string]any, path string) []FieldError {
	var errs []FieldError
	at := func(f string) string { return child(path, f) }
	if _, ok := x["apiVersion"]; !ok {
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: at("apiVersion"), Value: ""})
	}
	if _, ok := x["kind"]; !ok {
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: at("kind"), Value: ""})
	}
	for _, k := range sortedKeys(x) {
		v := x[k]
		switch k {
		case "apiVersion":
			s, ok := v.(string)
			switch {
			case !ok:
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: kubeValue(v), Detail: "must be a string"})
			case s == "":
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: s, Detail: "must not be empty"})
			case strings.Count(s, "/") > 1:
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: s, Detail: fmt.Sprintf("unexpected GroupVersion string: %v", s)})
			}
		case "kind":
			s, ok := v.(string)
			switch {
			case !ok:
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: kubeValue(v), Detail: "must be a string"})
			case s == "":
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: s, Detail: "must not be empty"})
			default:
				if msgs := dns1035Label(strings.ToLower(s)); len(msgs) > 0 {
					errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: s, Detail: "may have mixed case, but should otherwise match: " + strings.Join(msgs, ",")})
				}
			}
		case "metadata":
			m, ok := v.(map[string]any)
			if !ok {
				if v == nil {
					continue
				}
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: kubeValue(v), Detail: "expected map[string]interface{}, got " + fmt.Sprintf("%T", kubeValue(v))})
				continue
			}
			meta := m
			if n, _ := m["name"].(string); n == "" {
				meta = make(map[string]any, len(m)+1)
				for mk, mv := range m {
					meta[mk] = mv
				}
				meta["name"] = "fakename"
			}
			ns, _ := m["namespace"].(string)
			for _, e := range validation.ValidateObjectMeta(meta, validation.MetaOptions{Namespaced: ns != "", NameFunc: validation.IsPathSegmentName}) {
				e.Field = child(path, e.Field)
				errs = append(errs, e)
			}
		}
	}
	return errs
}

// kubeValue is a value as kube decodes it (numbers int64 or float64).
func kubeValue(x any) any {
	if n, ok := number(x); ok {
		return n
	}
	return x
}

// dns1035Label is apimachinery's IsDNS1035Label.
func dns1035Label(s string) []string {
	var msgs []string
	if len(s) > 63 {
		msgs = append(msgs, "must be no more than 63 characters")
	}
	if !dns1035Re.MatchString(s) {
		msgs = append(msgs, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
	}
	return msgs
}

var dns1035Re = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// listSetsAndMaps is kube's listtype.ValidateListSetsAndMaps: the items of
// an x-kubernetes-list-type set are unique, and so are the keys of the
// items of a list-type map.
func listSetsAndMaps(s *Schema, x any, path string) []FieldError {
	if s == nil {
		return nil
	}
	var errs []FieldError
	switch t := x.(type) {
	case map[string]any:
		keys := sortedKeys(t)
		if s.AdditionalProperties != nil {
			for _, k := range keys {
				errs = append(errs, listSetsAndMaps(s.AdditionalProperties, t[k], path+"["+k+"]")...)
			}
		}
		for _, k := range keys {
			if p, ok := s.Properties[k]; ok {
				errs = append(errs, listSetsAndMaps(p, t[k], child(path, k))...)
			}
		}
	case []any:
		switch s.ListType {
		case "set":
			for _, i := range duplicates(t) {
				errs = append(errs, FieldError{Type: validation.TypeDuplicate, Field: index(path, i), Value: kubeValue(t[i])})
			}
		case "map":
			errs = append(errs, listMap(s, t, path)...)
		}
		if s.Items != nil {
			for i, e := range t {
				errs = append(errs, listSetsAndMaps(s.Items, e, index(path, i))...)
			}
		}
	}
	return errs
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// duplicates lists the indexes of the second occurrence of every value
// that occurs more than once.
func duplicates(l []any) []int {
	if len(l) <= 1 {
		return nil
	}
	seen := make(map[string]int, len(l))
	var out []int
	for i, x := range l {
		k := identity(x)
		seen[k]++
		if seen[k] == 2 {
			out = append(out, i)
		}
	}
	return out
}

// identity is a key equal for values kube's set check takes as equal:
// scalars by Go value (int64 1 and float64 1 differ), lists and maps by
// their JSON encoding.
func identity(x any) string {
	switch t := kubeValue(x).(type) {
	case nil:
		return "n"
	case string:
		return "s" + t
	case bool:
		return "b" + strconv.FormatBool(t)
	case int64:
		return "i" + strconv.FormatInt(t, 10)
	case float64:
		return "f" + strconv.FormatFloat(t, 'g', -1, 64)
	case unspecified:
		return "u"
	default:
		b, _ := json.Marshal(t)
		return "j" + string(b)
	}
}

type unspecified struct{}

func listMap(s *Schema, l []any, path string) []FieldError {
	for i, x := range l {
		if _, ok := x.(map[string]any); x != nil && !ok {
			return []FieldError{{Type: validation.TypeInvalid, Field: index(path, i), Value: kubeValue(x), Detail: "must be an object for an array of list-type map"}}
		}
	}
	if len(l) <= 1 {
		return nil
	}
	keys := make([]any, len(l))
	for i, x := range l {
		m, _ := x.(map[string]any)
		if len(s.ListMapKeys) == 1 {
			k, ok := m[s.ListMapKeys[0]]
			if !ok {
				keys[i] = unspecified{}
			} else {
				keys[i] = kubeValue(k)
			}
			continue
		}
		key := map[string]any{}
		for _, f := range s.ListMapKeys {
			if k, ok := m[f]; ok {
				key[f] = kubeValue(k)
			}
		}
		keys[i] = key
	}
	var errs []FieldError
	for _, i := range duplicates(keys) {
		var v any
		switch k := keys[i].(type) {
		case unspecified:
			v = map[string]any{}
		case map[string]any:
			v = k
		default:
			v = map[string]any{s.ListMapKeys[0]: k}
		}
		errs = append(errs, FieldError{Type: validation.TypeDuplicate, Field: index(path, i), Value: v})
	}
	return errs
}

// child is kube's field.Path Child: path.name, or name at the root.
func child(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
