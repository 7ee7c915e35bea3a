package storage

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/internal/validation"
)

// SelectorError reports a label or field selector that cannot be parsed.
// Its message follows kube-apiserver's wording and says what to fix;
// errors.Is(err, ErrInvalid) holds, and the HTTP layer answers 400.
type SelectorError struct {
	Field string // the query parameter: "labelSelector" or "fieldSelector"
	Msg   string
}

func (e *SelectorError) Error() string { return e.Msg }
func (e *SelectorError) Unwrap() error { return ErrInvalid }

// ParseLabelSelector parses a label selector in Kubernetes syntax:
//
//	selector    ::= requirement { "," requirement }
//	requirement ::= [ "!" ] KEY [ op VALUE | ( "in" | "notin" ) "(" VALUE { "," VALUE } ")" ]
//	op          ::= "=" | "==" | "!=" | ">" | "<"
//
// ">" and "<" compare integers: the VALUE must be one, and a label that is
// not never matches.
// A bare KEY requires the label to exist, "!KEY" requires it to be absent.
// Blanks around tokens are ignored. KEY is a qualified name with an
// optional DNS subdomain prefix ("example.com/name"); VALUE is empty or up
// to 63 alphanumerics with '-', '_' and '.' inside. The result is sorted by
// key, with In and NotIn value sets sorted and deduplicated, so equal
// selectors have equal String forms. The empty string selects everything.
func ParseLabelSelector(s string) (Selector, error) {
	p := labelParser{toks: lex(s)}
	sel, err := p.parse()
	if err != nil {
		return nil, &SelectorError{Field: "labelSelector", Msg: err.Error()}
	}
	slices.SortStableFunc(sel, func(a, b Requirement) int { return strings.Compare(a.Key, b.Key) })
	return sel, nil
}

// ParseFieldSelector parses a field selector in Kubernetes syntax: terms
// "field=value", "field==value" or "field!=value" joined by ",". In values,
// "\," "\=" and "\\" stand for the literal characters; an unescaped "," or
// "=" in a value is an error. The result is sorted, so equal selectors
// have equal String forms. Which fields exist is for the caller to check.
func ParseFieldSelector(s string) (Selector, error) {
	var sel Selector
	for _, term := range splitTerms(s) {
		if term == "" {
			continue
		}
		key, op, raw, ok := splitTerm(term)
		if !ok {
			return nil, fieldErr("invalid selector: '%s'; can't understand '%s'", truncate(s), truncate(term))
		}
		v, err := unescape(raw)
		if err != nil {
			return nil, err
		}
		if key == "" && v == "" {
			continue // "=" and "!=" select everything, as in kube
		}
		sel = append(sel, Requirement{Key: key, Op: op, Values: []string{v}})
	}
	slices.SortStableFunc(sel, func(a, b Requirement) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if c := strings.Compare(string(a.Op), string(b.Op)); c != 0 {
			return c
		}
		return strings.Compare(a.Values[0], b.Values[0])
	})
	return sel, nil
}

// String renders s in the canonical selector syntax that
// ParseLabelSelector and ParseFieldSelector read back: requirements joined
// by ",", Equals as "=", values of Equals and NotEquals escaped as field
// selectors require (label values never contain the escaped characters).
func (s Selector) String() string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		r.write(&b)
	}
	return b.String()
}

// String renders r as one selector term.
func (r Requirement) String() string {
	var b strings.Builder
	r.write(&b)
	return b.String()
}

func (r Requirement) write(b *strings.Builder) {
	switch r.Op {
	case Exists:
		b.WriteString(r.Key)
	case DoesNotExist:
		b.WriteString("!" + r.Key)
	case In, NotIn:
		vals := r.Values
		if !slices.IsSorted(vals) {
			vals = slices.Sorted(slices.Values(vals))
		}
		b.WriteString(r.Key + " " + string(r.Op) + " (" + strings.Join(vals, ",") + ")")
	case GreaterThan:
		b.WriteString(r.Key + ">" + r.Values[0])
	case LessThan:
		b.WriteString(r.Key + "<" + r.Values[0])
	default:
		b.WriteString(r.Key + string(r.Op))
		if len(r.Values) > 0 {
			b.WriteString(escaper.Replace(r.Values[0]))
		}
	}
}

// Label selector lexing follows k8s.io/apimachinery/pkg/labels: tokens are
// the operators "!", "=", "==", "!=", "(", ")", ",", "<", ">", the words
// "in" and "notin", and identifiers (any run of other non-blank bytes).

type tokKind int

const (
	tokEnd tokKind = iota
	tokIdent
	tokIn
	tokNotIn
	tokNot
	tokEq
	tokEqEq
	tokNotEq
	tokOpen
	tokClose
	tokComma
	tokGt
	tokLt
)

type token struct {
	kind tokKind
	lit  string
}

var symbols = map[string]tokKind{
	"!": tokNot, "=": tokEq, "==": tokEqEq, "!=": tokNotEq,
	"(": tokOpen, ")": tokClose, ",": tokComma, "<": tokLt, ">": tokGt,
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isSymbol(c byte) bool { return strings.IndexByte("=!(),<>", c) >= 0 }

// lex splits s into tokens, ending with tokEnd.
func lex(s string) []token {
	var toks []token
	for i := 0; ; {
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		if i == len(s) {
			return append(toks, token{kind: tokEnd})
		}
		j := i + 1
		if isSymbol(s[i]) {
			// longest operator: "!=" and "==" over "!" and "="
			if j < len(s) {
				if k, ok := symbols[s[i:j+1]]; ok {
					toks = append(toks, token{k, s[i : j+1]})
					i = j + 1
					continue
				}
			}
			toks = append(toks, token{symbols[s[i:j]], s[i:j]})
			i = j
			continue
		}
		for j < len(s) && !isSymbol(s[j]) && !isBlank(s[j]) {
			j++
		}
		kind := tokIdent
		switch s[i:j] {
		case "in":
			kind = tokIn
		case "notin":
			kind = tokNotIn
		}
		toks = append(toks, token{kind, s[i:j]})
		i = j
	}
}

type labelParser struct {
	toks []token
	pos  int
}

// peek returns the next token; in value position the words "in" and
// "notin" are plain identifiers.
func (p *labelParser) peek() token {
	t := p.toks[p.pos]
	if t.kind == tokIn || t.kind == tokNotIn {
		t.kind = tokIdent
	}
	return t
}

func (p *labelParser) next() token {
	t := p.peek()
	p.pos++
	return t
}

func (p *labelParser) parse() (Selector, error) {
	var sel Selector
	for {
		switch t := p.peek(); t.kind {
		case tokEnd:
			return sel, nil
		case tokIdent, tokNot:
		default:
			return nil, fmt.Errorf("found '%s', expected: !, identifier, or 'end of string'", t.lit)
		}
		r, err := p.requirement()
		if err != nil {
			return nil, fmt.Errorf("unable to parse requirement: %v", err)
		}
		sel = append(sel, r)
		switch t := p.next(); t.kind {
		case tokEnd:
			return sel, nil
		case tokComma:
			if n := p.peek(); n.kind != tokIdent && n.kind != tokNot {
				return nil, fmt.Errorf("found '%s', expected: identifier after ','", n.lit)
			}
		default:
			return nil, fmt.Errorf("found '%s', expected: ',' or 'end of string'", t.lit)
		}
	}
}

func (p *labelParser) requirement() (Requirement, error) {
	t := p.next()
	not := t.kind == tokNot
	if not {
		t = p.next()
	}
	if t.kind != tokIdent {
		return Requirement{}, fmt.Errorf("found '%s', expected: identifier", t.lit)
	}
	key := t.lit
	if msg := checkKey(key); msg != "" {
		// kube's parser names no field path here: "<nil>".
		return Requirement{}, fmt.Errorf("<nil>: Invalid value: %q: %s", truncate(key), msg)
	}
	if not { // whatever follows "!key" must be "," or the end
		return Requirement{Key: key, Op: DoesNotExist}, nil
	}
	if n := p.peek().kind; n == tokEnd || n == tokComma {
		return Requirement{Key: key, Op: Exists}, nil
	}
	r := Requirement{Key: key}
	switch t := p.toks[p.pos]; t.kind { // operator position: "in" is a keyword
	case tokIn:
		r.Op = In
	case tokNotIn:
		r.Op = NotIn
	case tokEq, tokEqEq:
		r.Op = Equals
	case tokNotEq:
		r.Op = NotEquals
	case tokGt:
		r.Op = GreaterThan
	case tokLt:
		r.Op = LessThan
	default:
		return Requirement{}, fmt.Errorf("found '%s', expected: in, notin, =, ==, !=, gt, lt", t.lit)
	}
	p.pos++
	var err error
	if r.Op == In || r.Op == NotIn {
		r.Values, err = p.set()
	} else {
		r.Values, err = p.exact()
	}
	if err != nil {
		return Requirement{}, err
	}
	for i, v := range r.Values {
		if r.Op == GreaterThan || r.Op == LessThan {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return Requirement{}, fmt.Errorf("values[%d]: Invalid value: %q: for 'Gt', 'Lt' operators, the value must be an integer", i, truncate(v))
			}
		}
		if msg := checkValue(v); msg != "" {
			return Requirement{}, fmt.Errorf("values[%d][%s]: Invalid value: %q: %s", i, key, truncate(v), msg)
		}
	}
	return r, nil
}

// exact reads the value after =, == or !=; it may be empty.
func (p *labelParser) exact() ([]string, error) {
	switch t := p.peek(); t.kind {
	case tokEnd, tokComma:
		return []string{""}, nil
	case tokIdent:
		p.pos++
		return []string{t.lit}, nil
	default:
		return nil, fmt.Errorf("found '%s', expected: identifier", t.lit)
	}
}

// set reads "(v1,v2,...)"; empty members are the empty value, as in kube.
func (p *labelParser) set() ([]string, error) {
	if t := p.next(); t.kind != tokOpen {
		return nil, fmt.Errorf("found '%s' expected: '('", t.lit)
	}
	var vals []string
	want := true // a value or "," may come next, not only "," or ")"
	for {
		switch t := p.next(); {
		case t.kind == tokIdent && want:
			vals, want = append(vals, t.lit), false
		case t.kind == tokComma:
			if want {
				vals = append(vals, "")
			}
			want = true
		case t.kind == tokClose:
			if want {
				vals = append(vals, "")
			}
			slices.Sort(vals)
			return slices.Compact(vals), nil
		case want:
			return nil, fmt.Errorf("found '%s', expected: ',', ')' or identifier", t.lit)
		default:
			return nil, fmt.Errorf("found '%s', expected: ',' or ')'", t.lit)
		}
	}
}

// checkKey validates a label key as kube's selector parser does, returning
// what is wrong or "".
func checkKey(k string) string { return strings.Join(validation.IsQualifiedName(k), "; ") }

// checkValue validates a label value likewise.
func checkValue(v string) string { return strings.Join(validation.IsValidLabelValue(v), "; ") }

// Field selectors follow k8s.io/apimachinery/pkg/fields.

var escaper = strings.NewReplacer(`\`, `\\`, `,`, `\,`, `=`, `\=`)

// splitTerms splits at commas not escaped by a backslash; escapes stay in
// the terms.
func splitTerms(s string) []string {
	if s == "" {
		return nil
	}
	var terms []string
	start, slash := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case slash:
			slash = false
		case s[i] == '\\':
			slash = true
		case s[i] == ',':
			terms = append(terms, s[start:i])
			start = i + 1
		}
	}
	return append(terms, s[start:])
}

// splitTerm splits a term at its first operator: "!=", "==" or "=".
func splitTerm(t string) (key string, op Operator, raw string, ok bool) {
	for i := 0; i < len(t); i++ {
		switch {
		case strings.HasPrefix(t[i:], "!="):
			return t[:i], NotEquals, t[i+2:], true
		case strings.HasPrefix(t[i:], "=="):
			return t[:i], Equals, t[i+2:], true
		case t[i] == '=':
			return t[:i], Equals, t[i+1:], true
		}
	}
	return "", "", "", false
}

func unescape(s string) (string, error) {
	if !strings.ContainsAny(s, `\,=`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 == len(s) {
				return "", fieldErr(`invalid field selector: invalid escape sequence: \ at the end of a value; write \\ for a backslash`)
			}
			i++
			if n := s[i]; n != '\\' && n != ',' && n != '=' {
				r, _ := utf8.DecodeRuneInString(s[i:])
				return "", fieldErr(`invalid field selector: invalid escape sequence: \%c; only \\, \, and \= are allowed`, r)
			}
			b.WriteByte(s[i])
		case ',', '=':
			return "", fieldErr(`invalid field selector: unescaped character in value: %q; write \%c`, c, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func fieldErr(format string, args ...any) *SelectorError {
	return &SelectorError{Field: "fieldSelector", Msg: fmt.Sprintf(format, args...)}
}

// truncate keeps error messages readable when a client sends a huge value.
func truncate(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
