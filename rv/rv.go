package rv

import (
	"errors"
	"fmt"
	"strconv"
)

// Match is how a read chooses the revision it is served at.
type Match int

const (
	// MostRecent reads at the store's current revision (a consistent read).
	MostRecent Match = iota
	// Any reads at any revision; the newest available is preferred.
	Any
	// NotOlderThan reads at a revision at least as new as the one given.
	NotOlderThan
	// Exact reads at exactly the revision given, from history.
	Exact
)

func (m Match) String() string {
	switch m {
	case MostRecent:
		return "MostRecent"
	case Any:
		return "Any"
	case NotOlderThan:
		return "NotOlderThan"
	case Exact:
		return "Exact"
	}
	return "Match(" + strconv.Itoa(int(m)) + ")"
}

// The kinds of Error. They map to HTTP status codes in the registry.
var (
	// ErrBadRequest marks malformed input: a resource version or continue
	// token that cannot be parsed, or a continue with a resource version
	// (HTTP 400).
	ErrBadRequest = errors.New("rv: bad request")
	// ErrInvalid marks option combinations the spec forbids
	// (HTTP 422, kind ListOptions, as kube-apiserver answers).
	ErrInvalid = errors.New("rv: invalid options")
)

// Cause is one reason an Error was returned, naming the query parameter.
type Cause struct {
	Field  string // query parameter, e.g. "resourceVersionMatch"
	Type   string // "FieldValueForbidden", "FieldValueNotSupported" or "FieldValueInvalid"
	Value  string // the offending value, if any
	Detail string // what is wrong and how to fix it
}

// Error is returned for bad resource versions, tokens and option
// combinations. errors.Is(err, ErrBadRequest) or errors.Is(err, ErrInvalid)
// tells which kind it is.
type Error struct {
	Kind   error // ErrBadRequest or ErrInvalid
	Msg    string
	Causes []Cause
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Kind }

func badRequest(format string, args ...any) *Error {
	return &Error{Kind: ErrBadRequest, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads a resource version. "" and "0" are 0; anything else must be a
// positive decimal revision.
func Parse(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		// kube's words (its APIObjectVersioner's field error, quoting
		// strconv's), the value truncated.
		why := err
		var ne *strconv.NumError
		if errors.As(err, &ne) {
			why = ne.Err
		}
		t := truncate(s)
		return 0, badRequest("invalid resource version: resourceVersion: Invalid value: %q: strconv.ParseUint: parsing %q: %v", t, t, why)
	}
	if (len(s) > 1 && s[0] == '0') || s[0] == '+' {
		return 0, badRequest("invalid resource version %q: must be a decimal number as returned by the server", truncate(s))
	}
	return v, nil
}

// Format writes a revision the way clients see it.
func Format(v uint64) string { return strconv.FormatUint(v, 10) }

// Append appends the decimal form of v to b, for allocation-free encoders.
func Append(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }

// truncate keeps error messages readable when a client sends a huge value.
func truncate(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
