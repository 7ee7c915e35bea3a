package authn

import (
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry/request"
)

func TestParseTokenFile(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		want     map[string]request.User
		warnings []string
		err      string // the error's message, "" for none
		errIs    error
	}{
		{name: "empty file", file: "", want: map[string]request.User{}},
		{name: "three columns", file: "abc,alice,1\n", want: map[string]request.User{"abc": {Name: "alice", UID: "1"}}},
		{name: "no final newline", file: "abc,alice,1", want: map[string]request.User{"abc": {Name: "alice", UID: "1"}}},
		{name: "CRLF", file: "abc,alice,1\r\ndef,bob,2\r\n", want: map[string]request.User{"abc": {Name: "alice", UID: "1"}, "def": {Name: "bob", UID: "2"}}},
		{name: "groups", file: "abc,alice,1,\"dev,ops\"\n", want: map[string]request.User{"abc": {Name: "alice", UID: "1", Groups: []string{"dev", "ops"}}}},
		{name: "one group unquoted", file: "abc,alice,1,dev\n", want: map[string]request.User{"abc": {Name: "alice", UID: "1", Groups: []string{"dev"}}}},
		{name: "empty groups left out", file: "abc,alice,1,\",dev,,\"\n", want: map[string]request.User{"abc": {Name: "alice", UID: "1", Groups: []string{"dev"}}}},
		{name: "empty group column", file: "abc,alice,1,\n", want: map[string]request.User{"abc": {Name: "alice", UID: "1"}}},
		{name: "extra columns ignored", file: "abc,alice,1,dev,x,y\n", want: map[string]request.User{"abc": {Name: "alice", UID: "1", Groups: []string{"dev"}}}},
		{name: "empty uid", file: "abc,alice,\n", want: map[string]request.User{"abc": {Name: "alice"}}},
		{name: "spaces kept", file: "abc, alice ,1\n", want: map[string]request.User{"abc": {Name: " alice ", UID: "1"}}},
		{name: "blank lines skipped", file: "\nabc,alice,1\n\n\ndef,bob,2\n", want: map[string]request.User{"abc": {Name: "alice", UID: "1"}, "def": {Name: "bob", UID: "2"}}},
		{name: "hash is a record", file: "#abc,alice,1\n", want: map[string]request.User{"#abc": {Name: "alice", UID: "1"}}},
		{name: "quoted token with comma", file: "\"a,b\",alice,1\n", want: map[string]request.User{"a,b": {Name: "alice", UID: "1"}}},
		{
			name:     "empty token left out",
			file:     "abc,alice,1\n,bob,2\n",
			want:     map[string]request.User{"abc": {Name: "alice", UID: "1"}},
			warnings: []string{"authn: token file line 2: empty token, record left out"},
		},
		{
			name:     "duplicate: the later wins",
			file:     "abc,alice,1\ndef,bob,2\nabc,carol,3,admins\n",
			want:     map[string]request.User{"abc": {Name: "carol", UID: "3", Groups: []string{"admins"}}, "def": {Name: "bob", UID: "2"}},
			warnings: []string{"authn: token file line 3: duplicate token, the later record wins"},
		},
		{name: "too few columns", file: "abc,alice,1\n\nabc,alice\n", err: "authn: token file line 3: a token file record must have at least 3 columns (token, user name, user uid), found 2", errIs: ErrTooFewColumns},
		{name: "comment line is too short", file: "# tokens\nabc,alice,1\n", err: "authn: token file line 1: a token file record must have at least 3 columns (token, user name, user uid), found 1", errIs: ErrTooFewColumns},
		{name: "bare quote", file: "abc,alice,1\nab\"c,alice,1\n", err: "authn: token file line 2, column 3: bare \" in non-quoted-field", errIs: csv.ErrBareQuote},
		{name: "unterminated quote", file: "abc,alice,1,\"dev\n", err: "authn: token file line 1, column 18: extraneous or missing \" in quoted-field", errIs: csv.ErrQuote},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tokens, err := ParseTokenFile(strings.NewReader(tt.file))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || !errors.Is(err, tt.errIs) {
					t.Fatalf("err = %v, want %q (is %v)", err, tt.err, tt.errIs)
				}
				var fe *TokenFileError
				if !errors.As(err, &fe) || fe.Line == 0 {
					t.Fatalf("err = %#v, want a *TokenFileError with a line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tokens.Len() != len(tt.want) {
				t.Fatalf("%d tokens, want %d", tokens.Len(), len(tt.want))
			}
			for token, want := range tt.want {
				u, ok, err := tokens.AuthenticateToken(context.Background(), token)
				if !ok || err != nil || !reflect.DeepEqual(*u, want) {
					t.Errorf("token %q: got %+v, %v, %v; want %+v", token, u, ok, err, want)
				}
			}
			if !reflect.DeepEqual(tokens.Warnings(), tt.warnings) {
				t.Errorf("warnings %q, want %q", tokens.Warnings(), tt.warnings)
			}
		})
	}
}

func TestLoadTokenFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tokens.csv")
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(good, []byte("abc,alice,1,\"dev\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := LoadTokenFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if u, ok, _ := tokens.AuthenticateToken(context.Background(), "abc"); !ok || u.Name != "alice" {
		t.Fatalf("got %+v, %v", u, ok)
	}
	_, err = LoadTokenFile(bad)
	want := `authn: token file "` + bad + `" line 1: a token file record must have at least 3 columns (token, user name, user uid), found 1`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	if _, err = LoadTokenFile(filepath.Join(dir, "missing.csv")); !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "authn: ") {
		t.Fatalf("err = %v, want a not-exist error", err)
	}
}

func TestNewTokensCopies(t *testing.T) {
	groups := []string{"dev"}
	m := map[string]request.User{"abc": {Name: "alice", Groups: groups, Extra: map[string][]string{"k": {"v"}}}, "": {Name: "nobody"}}
	tokens := NewTokens(m)
	groups[0] = "changed"
	m["abc"].Extra["k"][0] = "changed"
	delete(m, "abc")
	if tokens.Len() != 1 {
		t.Fatalf("%d tokens, want 1 (the empty token left out)", tokens.Len())
	}
	u, ok, err := tokens.AuthenticateToken(context.Background(), "abc")
	want := &request.User{Name: "alice", Groups: []string{"dev"}, Extra: map[string][]string{"k": {"v"}}}
	if !ok || err != nil || !reflect.DeepEqual(u, want) {
		t.Fatalf("got %+v, %v, %v; want %+v", u, ok, err, want)
	}
	if _, ok, _ := tokens.AuthenticateToken(context.Background(), ""); ok {
		t.Fatal("the empty token authenticates")
	}
	// The user returned is the caller's: appending to its groups or
	// changing its name does not change the next one.
	u.Name = "mallory"
	u.Groups = append(u.Groups, "system:masters")
	u2, _, _ := tokens.AuthenticateToken(context.Background(), "abc")
	if !reflect.DeepEqual(u2, want) {
		t.Fatalf("second lookup %+v, want %+v", u2, want)
	}
}
