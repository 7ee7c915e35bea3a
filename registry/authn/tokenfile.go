package authn

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kapi-dev/kapi/registry/request"
)

// Tokens is a static set of bearer tokens, each standing for a user:
// kube-apiserver's --token-auth-file. It is read-only once made and safe
// for concurrent use.
type Tokens struct {
	users    map[string]*request.User
	warnings []string
}

var _ TokenAuthenticator = (*Tokens)(nil)

// NewTokens returns the tokens of m, a user for each token (the map and
// the users are copied). An empty token is left out: no request can send
// it.
func NewTokens(m map[string]request.User) *Tokens {
	t := &Tokens{users: make(map[string]*request.User, len(m))}
	for token, u := range m {
		if token == "" {
			continue
		}
		c := u
		c.Groups = append([]string(nil), u.Groups...)
		if u.Extra != nil {
			c.Extra = make(map[string][]string, len(u.Extra))
			for k, v := range u.Extra {
				c.Extra[k] = append([]string(nil), v...)
			}
		}
		t.users[token] = &c
	}
	return t
}

// AuthenticateToken returns the user token stands for; ok is false for a
// token not in t. The user is a copy the caller may change, except its
// Extra and the elements of its Groups, which t shares.
func (t *Tokens) AuthenticateToken(_ context.Context, token string) (*request.User, bool, error) {
	u, ok := t.users[token]
	if !ok {
		return nil, false, nil
	}
	c := *u
	c.Groups = c.Groups[:len(c.Groups):len(c.Groups)] // an append copies
	return &c, true, nil
}

// Len is the number of tokens in t.
func (t *Tokens) Len() int { return len(t.users) }

// Warnings are what ParseTokenFile accepted but kube-apiserver logs a
// warning for: a record with an empty token (left out), a token that
// appears twice (the later record wins). Each names its line.
func (t *Tokens) Warnings() []string { return t.warnings }

// TokenFileError is ParseTokenFile's error: the line of the file and
// what is wrong with it (for a CSV syntax error, the error of
// encoding/csv such as csv.ErrQuote, which Unwrap returns).
type TokenFileError struct {
	Path   string // the file's path; empty for ParseTokenFile
	Line   int    // 1-based
	Column int    // 1-based, for a CSV syntax error; else 0
	Err    error
}

func (e *TokenFileError) Error() string {
	where := "token file"
	if e.Path != "" {
		where = fmt.Sprintf("token file %q", e.Path)
	}
	what := strings.TrimPrefix(e.Err.Error(), "authn: ")
	if e.Column > 0 {
		return fmt.Sprintf("authn: %s line %d, column %d: %s", where, e.Line, e.Column, what)
	}
	return fmt.Sprintf("authn: %s line %d: %s", where, e.Line, what)
}

func (e *TokenFileError) Unwrap() error { return e.Err }

// ErrTooFewColumns is the error of a token file's record with fewer than
// three columns.
var ErrTooFewColumns = errors.New("authn: a token file record must have at least 3 columns (token, user name, user uid)")

// LoadTokenFile reads the token file at path (see ParseTokenFile).
func LoadTokenFile(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("authn: token file: %w", err)
	}
	defer f.Close()
	t, err := ParseTokenFile(f)
	var fe *TokenFileError
	if errors.As(err, &fe) {
		fe.Path = path
	}
	return t, err
}

// ParseTokenFile reads kube-apiserver's --token-auth-file format, one
// CSV record a line (RFC 4180, as encoding/csv reads it):
//
//	token,user,uid
//	token,user,uid,"group1,group2"
//
// The fourth column, when present, is a comma-separated list of groups
// (quoted, since it holds commas); empty names in it are left out.
// Columns after the fourth are ignored, blank lines are skipped, and
// spaces are kept (" alice" is not "alice"). As in kube, a line starting
// with # is not a comment but a record like any other. A record with an
// empty token is left out, and of two records with the same token the
// later wins; both give a warning (Tokens.Warnings). A record with fewer
// than three columns, or a CSV syntax error, is a *TokenFileError naming
// the line.
func ParseTokenFile(r io.Reader) (*Tokens, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	t := &Tokens{users: make(map[string]*request.User)}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, &TokenFileError{Line: pe.Line, Column: pe.Column, Err: pe.Err}
			}
			return nil, fmt.Errorf("authn: token file: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) < 3 {
			return nil, &TokenFileError{Line: line, Err: fmt.Errorf("%w, found %d", ErrTooFewColumns, len(rec))}
		}
		if rec[0] == "" {
			t.warnings = append(t.warnings, fmt.Sprintf("authn: token file line %d: empty token, record left out", line))
			continue
		}
		if _, dup := t.users[rec[0]]; dup {
			t.warnings = append(t.warnings, fmt.Sprintf("authn: token file line %d: duplicate token, the later record wins", line))
		}
		u := &request.User{Name: rec[1], UID: rec[2]}
		if len(rec) >= 4 {
			u.Groups = splitGroups(rec[3])
		}
		t.users[rec[0]] = u
	}
}

// splitGroups splits a token file's comma-separated group list, leaving
// out empty names; the result's length is its capacity.
func splitGroups(s string) []string {
	n := 0
	for g := range strings.SplitSeq(s, ",") {
		if g != "" {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	groups := make([]string, 0, n)
	for g := range strings.SplitSeq(s, ",") {
		if g != "" {
			groups = append(groups, g)
		}
	}
	return groups
}
