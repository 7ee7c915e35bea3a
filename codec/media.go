package codec

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Errors reported by this package. Every error it returns is an [*Error]
// whose Kind is one of these, so callers test with errors.Is.
var (
	// ErrInvalidMediaType: a Content-Type or Accept value that does not parse.
	ErrInvalidMediaType = errors.New("codec: invalid media type")
	// ErrNotAcceptable: no offer is acceptable to the client (HTTP 406).
	ErrNotAcceptable = errors.New("codec: not acceptable")
	// ErrUnsupportedMediaType: the request body's type is not one the server
	// reads (HTTP 415).
	ErrUnsupportedMediaType = errors.New("codec: unsupported media type")
)

// Error is the error type of this package. Msg is written for the client
// (kube-apiserver's wording where it has one) and Kind is the sentinel it
// unwraps to.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the sentinel classifying the error.
func (e *Error) Unwrap() error { return e.Kind }

// MediaType is a parsed media type or media range.
//
// Type is the lowercased "type/subtype"; in ranges it may be "*/*" or
// "type/*". Params has lowercased keys and the values as given, unquoted
// ("as", "g", "v", "stream", "charset", ...). Q is the range's weight, 1 unless
// given; in a range "q" is taken out of Params and kept in Q only.
//
// A MediaType is a value; the Params map is shared by copies and must not be
// changed once the value is in use.
type MediaType struct {
	Type   string
	Params map[string]string
	Q      float64
}

// String formats m as a Content-Type value: the type, then the parameters
// sorted by key, values quoted where they are not tokens. Q is not written.
func (m MediaType) String() string {
	var b strings.Builder
	b.WriteString(m.Type)
	keys := make([]string, 0, len(m.Params))
	for k := range m.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteByte(';')
		b.WriteString(k)
		b.WriteByte('=')
		writeValue(&b, m.Params[k])
	}
	return b.String()
}

func writeValue(b *strings.Builder, v string) {
	if v != "" && isToken(v) {
		b.WriteString(v)
		return
	}
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if v[i] == '"' || v[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
}

// ParseMediaType parses a Content-Type value such as
// "application/json; charset=utf-8". Wildcards are not allowed and "q" is an
// ordinary parameter; Q is 1. An empty value is an error: the caller decides
// what an absent Content-Type means (kube-apiserver reads it as JSON).
func ParseMediaType(s string) (MediaType, error) {
	m, err := parse(s, false)
	if err != nil {
		return MediaType{}, &Error{Kind: ErrInvalidMediaType, Msg: "invalid media type " + strconv.Quote(s) + ": " + err.Error()}
	}
	return m, nil
}

// MustParseMediaType is ParseMediaType for values known at compile time, such
// as a server's offers; it panics on error.
func MustParseMediaType(s string) MediaType {
	m, err := ParseMediaType(s)
	if err != nil {
		panic(err)
	}
	return m
}

// ParseAccept parses an Accept header into media ranges sorted by preference:
// Q descending, then the more specific range first ("type/subtype" before
// "type/*" before "*/*"), otherwise in header order. An empty header means
// "*/*". A malformed range makes the whole header an error.
func ParseAccept(header string) ([]MediaType, error) {
	var out []MediaType
	for part := range splitList(header) {
		if strings.Trim(part, " \t") == "" {
			continue // RFC 9110 §5.6.1: empty list elements are ignored
		}
		m, err := parse(part, true)
		if err != nil {
			return nil, &Error{Kind: ErrInvalidMediaType, Msg: "invalid Accept header " + strconv.Quote(header) + ": " + err.Error()}
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return []MediaType{{Type: "*/*", Q: 1}}, nil
	}
	slices.SortStableFunc(out, func(a, b MediaType) int {
		switch {
		case a.Q > b.Q:
			return -1
		case a.Q < b.Q:
			return 1
		}
		return typeRank(b.Type) - typeRank(a.Type)
	})
	return out, nil
}

// splitList yields the comma-separated elements of a header value; commas
// inside quoted strings do not split.
func splitList(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start, quoted := 0, false
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case quoted && c == '\\':
				i++
			case c == '"':
				quoted = !quoted
			case !quoted && c == ',':
				if !yield(s[start:i]) {
					return
				}
				start = i + 1
			}
		}
		yield(s[start:])
	}
}

// parse reads one media type (isRange false) or media range (isRange true).
func parse(s string, isRange bool) (MediaType, error) {
	s = strings.Trim(s, " \t")
	full, rest, _ := strings.Cut(s, ";")
	full = strings.ToLower(strings.TrimRight(full, " \t"))
	typ, sub, ok := strings.Cut(full, "/")
	if isRange && full == "*" {
		typ, sub, ok = "*", "*", true // sent by some Java clients
	}
	switch {
	case full == "":
		return MediaType{}, errors.New("missing type/subtype")
	case !ok || !isToken(typ) || !isToken(sub):
		return MediaType{}, errors.New("malformed type/subtype " + strconv.Quote(full))
	case !isRange && (strings.Contains(typ, "*") || strings.Contains(sub, "*")):
		return MediaType{}, errors.New("wildcards are not allowed in a media type")
	case isRange && (typ != "*" && strings.Contains(typ, "*") || sub != "*" && strings.Contains(sub, "*") || typ == "*" && sub != "*"):
		return MediaType{}, errors.New("malformed media range " + strconv.Quote(full))
	}
	m := MediaType{Type: typ + "/" + sub, Q: 1}
	if rest == "" {
		return m, nil
	}
	params, err := parseParams(rest)
	if err != nil {
		return MediaType{}, err
	}
	if q, ok := params["q"]; ok && isRange {
		w, err := parseQ(q)
		if err != nil {
			return MediaType{}, err
		}
		m.Q = w
		delete(params, "q")
	}
	if len(params) > 0 {
		m.Params = params
	}
	return m, nil
}

// parseParams reads `key=value` pairs separated by ';'. Values are tokens or
// quoted strings; empty segments are skipped; duplicate keys are an error.
func parseParams(s string) (map[string]string, error) {
	params := map[string]string{}
	i := 0
	for {
		i = skipOWS(s, i)
		if i == len(s) {
			return params, nil
		}
		if s[i] == ';' {
			i++
			continue
		}
		k := i
		for i < len(s) && isTokenChar(s[i]) {
			i++
		}
		key := strings.ToLower(s[k:i])
		if key == "" {
			return nil, errors.New("malformed parameter " + strconv.Quote(s[k:]))
		}
		i = skipOWS(s, i)
		if i == len(s) || s[i] != '=' {
			return nil, errors.New("parameter " + strconv.Quote(key) + " has no value")
		}
		i = skipOWS(s, i+1)
		var val string
		if i < len(s) && s[i] == '"' {
			var b strings.Builder
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, errors.New("unterminated quoted value of parameter " + strconv.Quote(key))
			}
			i++
			val = b.String()
		} else {
			v := i
			for i < len(s) && isTokenChar(s[i]) {
				i++
			}
			val = s[v:i]
			if val == "" {
				return nil, errors.New("parameter " + strconv.Quote(key) + " has no value")
			}
		}
		if _, dup := params[key]; dup {
			return nil, errors.New("duplicate parameter " + strconv.Quote(key))
		}
		params[key] = val
		i = skipOWS(s, i)
		if i < len(s) && s[i] != ';' {
			return nil, errors.New("unexpected " + strconv.Quote(s[i:]) + " after parameter " + strconv.Quote(key))
		}
	}
}

// parseQ reads a weight: decimal digits with at most one '.', between 0 and
// 1. It is laxer than RFC 9110 in one way clients rely on: Java sends "q=.2".
func parseQ(s string) (float64, error) {
	bad := errors.New("invalid q value " + strconv.Quote(s))
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' && !dot:
			dot = true
		case c < '0' || c > '9':
			return 0, bad
		}
	}
	q, err := strconv.ParseFloat(s, 64)
	if err != nil || q < 0 || q > 1 {
		return 0, bad
	}
	return q, nil
}

func skipOWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// isTokenChar reports whether c is an RFC 9110 tchar.
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// typeRank orders ranges by how specific their type is.
func typeRank(t string) int {
	switch {
	case t == "*/*":
		return 0
	case strings.HasSuffix(t, "/*"):
		return 1
	}
	return 2
}

// ignored reports whether a parameter plays no part in matching: the weight,
// the charset (always UTF-8 here) and the pretty-print hint.
func ignored(key string) bool {
	return key == "q" || key == "charset" || key == "pretty"
}

// Match reports whether the range rng accepts the offer: the types match
// (with "*" wildcards in rng) and both carry the same parameters with the
// same values (compared case-insensitively), q, charset and pretty aside. An
// offer with a parameter the range lacks does not match it: a plain
// "application/json" range never accepts an "as=Table" offer.
func Match(rng, offer MediaType) bool {
	switch {
	case rng.Type == "*/*":
	case strings.HasSuffix(rng.Type, "/*"):
		if !strings.HasPrefix(offer.Type, rng.Type[:len(rng.Type)-1]) {
			return false
		}
	case rng.Type != offer.Type:
		return false
	}
	for k, v := range rng.Params {
		if ignored(k) {
			continue
		}
		if ov, ok := offer.Params[k]; !ok || !strings.EqualFold(v, ov) {
			return false
		}
	}
	for k := range offer.Params {
		if _, ok := rng.Params[k]; !ok && !ignored(k) {
			return false
		}
	}
	return true
}

// specificity ranks a range for deciding which of several matching ranges
// sets an offer's weight (RFC 9110 §12.5.1: the most specific one).
func specificity(rng MediaType) int {
	n := typeRank(rng.Type) * 1000
	for k := range rng.Params {
		if !ignored(k) {
			n++
		}
	}
	return n
}

// Negotiate returns the first offer acceptable to the client. The ranges are
// tried in the order given (ParseAccept's preference order) and, for each
// range, the offers in the server's order; the first match wins. A range with
// q=0 excludes the offers for which it is the most specific matching range,
// so "application/yaml;q=0, */*" never yields YAML. With no ranges the first
// offer is chosen; with no offers nothing is. The offer is returned as given.
func Negotiate(accept []MediaType, offers []MediaType) (MediaType, bool) {
	if len(offers) == 0 {
		return MediaType{}, false
	}
	if len(accept) == 0 {
		return offers[0], true
	}
	for _, rng := range accept {
		if rng.Q <= 0 {
			continue
		}
		for _, offer := range offers {
			if Match(rng, offer) && !excluded(accept, offer) {
				return offer, true
			}
		}
	}
	return MediaType{}, false
}

// excluded reports whether the most specific ranges matching offer all
// have q=0.
func excluded(accept []MediaType, offer MediaType) bool {
	best, weight := -1, 0.0
	for _, rng := range accept {
		if !Match(rng, offer) {
			continue
		}
		switch s := specificity(rng); {
		case s > best:
			best, weight = s, rng.Q
		case s == best:
			weight = max(weight, rng.Q)
		}
	}
	return best >= 0 && weight <= 0
}

// Supported lists the offers for an error message, in order and without
// duplicates: "application/json, application/yaml".
func Supported(offers []MediaType) string {
	seen := make(map[string]bool, len(offers))
	var list []string
	for _, o := range offers {
		if s := o.String(); !seen[s] {
			seen[s] = true
			list = append(list, s)
		}
	}
	return strings.Join(list, ", ")
}

// NotAcceptable is the error for a failed negotiation (HTTP 406), with
// kube-apiserver's message listing the offers.
func NotAcceptable(offers []MediaType) error {
	return &Error{Kind: ErrNotAcceptable, Msg: "only the following media types are accepted: " + Supported(offers)}
}

// UnsupportedMediaType is the error for a request body in a type the server
// does not read (HTTP 415), with kube-apiserver's message listing the types it
// does read.
func UnsupportedMediaType(offers []MediaType) error {
	return &Error{Kind: ErrUnsupportedMediaType, Msg: "the body of the request was in an unknown format - accepted media types include: " + Supported(offers)}
}
