package validation

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
)

// Limits, as in k8s.io/apimachinery.
const (
	DNS1123LabelMaxLength     = 63
	DNS1123SubdomainMaxLength = 253
	LabelValueMaxLength       = 63
	qualifiedNameMaxLength    = 63
	// TotalAnnotationSizeLimit bounds the sum of the lengths of all
	// annotation keys and values of an object.
	TotalAnnotationSizeLimit = 256 << 10
	// MaxGeneratedNameLength is the longest prefix GenerateName keeps, so a
	// generated name is at most 63 characters.
	MaxGeneratedNameLength = 63 - randomLength
	randomLength           = 5
)

// The regular expressions kube quotes in its messages. The checks below are
// hand-written equivalents (tests compare them with these expressions).
const (
	dns1123LabelFmt     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainFmt = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	qualifiedNameFmt    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	labelValueFmt       = "(" + qualifiedNameFmt + ")?"

	dns1123LabelErrMsg     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
	dns1123SubdomainErrMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	qualifiedNameErrMsg    = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueErrMsg       = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)

// maxLen is kube's message for names (k8s.io/apimachinery/pkg/util/validation);
// maxBytes is the one its label and annotation rules use (pkg/api/validate/content).
func maxLen(n int) string   { return fmt.Sprintf("must be no more than %d characters", n) }
func maxBytes(n int) string { return fmt.Sprintf("must be no more than %d bytes", n) }

// regexError is kube's RegexError: the message, the examples and the regex.
func regexError(msg, re string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + re + "')"
	}
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString(" (e.g. ")
	for i, e := range examples {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("'" + e + "', ")
	}
	b.WriteString("regex used for validation is '" + re + "')")
	return b.String()
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
func isAlnum(c byte) bool      { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }

// isDNSLabel matches ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$.
func isDNSLabel(s string) bool {
	if s == "" || !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if !isLowerAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// isDNSSubdomain matches dns1123SubdomainFmt: dot-separated DNS labels.
func isDNSSubdomain(s string) bool {
	for {
		label, rest, more := strings.Cut(s, ".")
		if !isDNSLabel(label) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

// isQualifiedNamePart matches ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$.
func isQualifiedNamePart(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// IsDNS1123Label checks a DNS label (RFC 1123): namespace names and the
// names of resources that choose this rule.
func IsDNS1123Label(value string) []string {
	var errs []string
	if len(value) > DNS1123LabelMaxLength {
		errs = append(errs, maxLen(DNS1123LabelMaxLength))
	}
	if !isDNSLabel(value) {
		if isDNSSubdomain(value) {
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, regexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"))
		}
	}
	return errs
}

// IsDNS1123Subdomain checks a DNS subdomain (RFC 1123): the default rule for
// object names.
func IsDNS1123Subdomain(value string) []string {
	var errs []string
	if len(value) > DNS1123SubdomainMaxLength {
		errs = append(errs, maxLen(DNS1123SubdomainMaxLength))
	}
	if !isDNSSubdomain(value) {
		errs = append(errs, regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// IsConfigMapKey checks a key of a ConfigMap's (or Secret's) data: at
// most 253 of alphanumerics, '-', '_' and '.', and not ".", ".." or
// "..*" (kube's IsConfigMapKey).
func IsConfigMapKey(value string) []string {
	var errs []string
	if len(value) > DNS1123SubdomainMaxLength {
		errs = append(errs, maxLen(DNS1123SubdomainMaxLength))
	}
	if !configMapKeyRegexp.MatchString(value) {
		errs = append(errs, regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", configMapKeyFmt, "key.name", "KEY_NAME", "key-name"))
	}
	switch {
	case value == ".":
		errs = append(errs, `must not be '.'`)
	case value == "..":
		errs = append(errs, `must not be '..'`)
	case strings.HasPrefix(value, ".."):
		errs = append(errs, `must not start with '..'`)
	}
	return errs
}

const configMapKeyFmt = `[-._a-zA-Z0-9]+`

var configMapKeyRegexp = regexp.MustCompile("^" + configMapKeyFmt + "$")

// IsQualifiedName checks a label or annotation key or a finalizer: an
// optional DNS subdomain prefix and "/", then a name of at most 63
// characters.
func IsQualifiedName(value string) []string {
	var errs []string
	name := value
	switch parts := strings.Split(value, "/"); len(parts) {
	case 1:
	case 2:
		prefix := parts[0]
		name = parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part must be non-empty")
		} else {
			if len(prefix) > DNS1123SubdomainMaxLength {
				errs = append(errs, "prefix part "+maxBytes(DNS1123SubdomainMaxLength))
			}
			if !isDNSSubdomain(prefix) {
				errs = append(errs, "prefix part "+regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, "example.com"))
			}
		}
	default:
		return append(errs, "a valid label key "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")+
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if name == "" {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > qualifiedNameMaxLength {
		errs = append(errs, "name part "+maxBytes(qualifiedNameMaxLength))
	}
	if !isQualifiedNamePart(name) {
		errs = append(errs, "name part "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// IsValidLabelValue checks a label value: empty, or at most 63 characters
// shaped like a qualified name without prefix.
func IsValidLabelValue(value string) []string {
	var errs []string
	if len(value) > LabelValueMaxLength {
		errs = append(errs, maxBytes(LabelValueMaxLength))
	}
	if value != "" && !isQualifiedNamePart(value) {
		errs = append(errs, regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// IsPathSegmentName checks that a name can be one segment of a URL path:
// not "." or "..", no "/" or "%".
func IsPathSegmentName(name string) []string {
	if name == "." || name == ".." {
		return []string{"may not be '" + name + "'"}
	}
	return IsPathSegmentPrefix(name)
}

// IsPathSegmentPrefix checks a generateName prefix: no "/" or "%".
func IsPathSegmentPrefix(prefix string) []string {
	var errs []string
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(prefix, bad) {
			errs = append(errs, "may not contain '"+bad+"'")
		}
	}
	return errs
}

// maskTrailingDash lets a generateName prefix end in "-": the random suffix
// will follow it (kube's maskTrailingDash).
func maskTrailingDash(name string) string {
	if len(name) > 1 && strings.HasSuffix(name, "-") {
		return name[:len(name)-2] + "a"
	}
	return name
}

const alphabet = "bcdfghjklmnpqrstvwxz2456789" // kube's: no vowels, no 0/1/3

// GenerateName returns prefix, cut to MaxGeneratedNameLength bytes, followed
// by 5 random characters from kube's alphabet. The caller retries on a name
// collision.
func GenerateName(prefix string) string {
	if len(prefix) > MaxGeneratedNameLength {
		prefix = prefix[:MaxGeneratedNameLength]
	}
	b := make([]byte, len(prefix), len(prefix)+randomLength)
	copy(b, prefix)
	for range randomLength {
		b = append(b, alphabet[rand.IntN(len(alphabet))])
	}
	return string(b)
}

// Error types, as in k8s.io/apimachinery/pkg/util/validation/field; they
// are the "reason" of a Status cause.
const (
	TypeNotFound     = "FieldValueNotFound"
	TypeRequired     = "FieldValueRequired"
	TypeDuplicate    = "FieldValueDuplicate"
	TypeInvalid      = "FieldValueInvalid"
	TypeNotSupported = "FieldValueNotSupported"
	TypeForbidden    = "FieldValueForbidden"
	TypeTooLong      = "FieldValueTooLong"
	TypeTooMany      = "FieldValueTooMany"
	TypeTooFew       = "FieldValueTooFew"
	TypeTypeInvalid  = "FieldValueTypeInvalid"
	TypeTooShort     = "FieldValueTooShort"
	TypeInternal     = "InternalError"
)

var typeText = map[string]string{
	TypeNotFound:     "Not found",
	TypeRequired:     "Required value",
	TypeDuplicate:    "Duplicate value",
	TypeInvalid:      "Invalid value",
	TypeNotSupported: "Unsupported value",
	TypeForbidden:    "Forbidden",
	TypeTooLong:      "Too long",
	TypeTooMany:      "Too many",
	TypeTooFew:       "Too few",
	TypeTypeInvalid:  "Invalid value",
	TypeTooShort:     "Too short",
	TypeInternal:     "Internal error",
}

// Error is one validation failure: kube's field.Error. Type is one of the
// Type constants, Field the path ("metadata.name"), Value the offending value
// (shown for Invalid, NotSupported, Duplicate, NotFound and TooMany; a string
// is quoted, other values are written as JSON) and Detail the explanation.
type Error struct {
	Type   string
	Field  string
	Value  any
	Detail string
}

// OmitValue as an Error's Value leaves the value out of the message, as
// kube's field.OmitValueType does: "Invalid value: must not exceed replicas".
var OmitValue any = omitted{}

type omitted struct{}

// Error formats e as kube does:
// `metadata.name: Invalid value: "Foo": a lowercase RFC 1123 ...`.
func (e Error) Error() string { return e.Field + ": " + e.ErrorBody() }

// ErrorBody is Error without the field path: the message of a Status cause.
func (e Error) ErrorBody() string {
	var s string
	switch e.Type {
	case TypeRequired, TypeForbidden, TypeTooLong, TypeTooShort, TypeInternal:
		s = typeText[e.Type]
	case TypeInvalid, TypeTypeInvalid, TypeNotSupported, TypeNotFound, TypeDuplicate, TypeTooMany, TypeTooFew:
		s = typeText[e.Type]
		if e.Value != OmitValue {
			s += ": " + formatValue(e.Value)
		}
	default:
		s = "Internal error: unhandled error code: " + e.Type + ": please report this"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func formatValue(v any) string {
	switch t := v.(type) {
	case string:
		return fmt.Sprintf("%q", t)
	case int, int64, int32, float64, float32, bool:
		return fmt.Sprint(t)
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprintf("%#v", v)
}
