package authn

import (
	"crypto/x509/pkix"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry/request"
)

// FuzzParseTokenFile checks ParseTokenFile never panics, refuses input
// only with an error of its own naming a line, and when it accepts the
// input holds what encoding/csv reads from it by kube's rules.
func FuzzParseTokenFile(f *testing.F) {
	for _, s := range []string{
		"", "abc,alice,1\n", "abc,alice,1,\"dev,ops\"\n", "#c\n", ",a,b\nx,y,z\nx,y,w,g\n",
		"a,b\n", "\"a\"b,c,d\n", "a,b,c,\"d\n", "\xef\xbb\xbfa,b,c\n", "a,b,c\r\n\r\n", "a,b,c,\",,,\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tokens, err := ParseTokenFile(strings.NewReader(s))
		if err != nil {
			var fe *TokenFileError
			if !errors.As(err, &fe) || fe.Line < 1 || !strings.HasPrefix(err.Error(), "authn: token file line ") {
				t.Fatalf("err = %#v (%v), want a *TokenFileError with a line", err, err)
			}
			return
		}
		want := map[string]*request.User{}
		cr := csv.NewReader(strings.NewReader(s))
		cr.FieldsPerRecord = -1
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil || len(rec) < 3 {
				t.Fatalf("accepted, but encoding/csv reads %q, %v", rec, err)
			}
			if rec[0] == "" {
				continue
			}
			u := &request.User{Name: rec[1], UID: rec[2]}
			if len(rec) > 3 {
				for _, g := range strings.Split(rec[3], ",") {
					if g != "" {
						u.Groups = append(u.Groups, g)
					}
				}
			}
			want[rec[0]] = u
		}
		if !reflect.DeepEqual(tokens.users, want) {
			t.Fatalf("tokens %v, want %v", tokens.users, want)
		}
	})
}

// kubeBearer is kube's bearertoken parsing as it is written there, the
// reference FuzzParseBearer holds parseBearer to.
func kubeBearer(h string) (string, bool) {
	auth := strings.TrimSpace(h)
	if auth == "" {
		return "", false
	}
	parts := strings.SplitN(auth, " ", 3)
	if len(parts) < 2 || strings.ToLower(parts[0]) != "bearer" {
		return "", false
	}
	if parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

// FuzzParseBearer checks parseBearer reads an Authorization header as
// kube's bearertoken authenticator does, and never panics.
func FuzzParseBearer(f *testing.F) {
	for _, s := range []string{
		"", "Bearer abc", "bearer abc", "BEARER  abc", "Bearer abc def", "Bearer", "Bearer ", " Bearer\tabc ",
		"Basic abc", "Bearerabc", "\u00a0Bearer abc\u00a0", "Bearer \xff", "bEaReR a b c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		token, ok := parseBearer(h)
		wantToken, wantOK := kubeBearer(h)
		if token != wantToken || ok != wantOK {
			t.Fatalf("parseBearer(%q) = %q, %v; kube: %q, %v", h, token, ok, wantToken, wantOK)
		}
		if ok && (token == "" || strings.Contains(token, " ")) {
			t.Fatalf("parseBearer(%q) = %q", h, token)
		}
	})
}

// FuzzExtraKey checks the Extra key of a front proxy's extra header:
// never a panic, the lower-cased name when it holds no %, and a key
// %-escaped by a proxy comes back as it was. Through RequestHeader, the
// header gives that key and is removed.
func FuzzExtraKey(f *testing.F) {
	for _, s := range []string{"Acme.com%2Fproject", "scopes", "%", "%zz", "%41", "a%2", "%e2%98%83", "A b", "\xff"} {
		f.Add(s)
	}
	ca := newCA(f, "front-proxy-ca")
	proxy := newCert(f, certSpec{subject: pkix.Name{CommonName: "front-proxy"}, parent: ca})
	auth, err := RequestHeader(RequestHeaderOptions{ClientCA: pool(ca)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := extraKey(s)
		if !strings.Contains(s, "%") && k != strings.ToLower(s) {
			t.Fatalf("extraKey(%q) = %q, want it lower-cased", s, k)
		}
		lower := asciiLower(s)
		if got := extraKey(url.PathEscape(lower)); got != lower {
			t.Fatalf("extraKey(PathEscape(%q)) = %q", lower, got)
		}

		req := tlsRequest(proxy)
		name := http.CanonicalHeaderKey("X-Remote-Extra-" + s)
		req.Header = http.Header{"X-Remote-User": {"alice"}, name: {"v"}}
		u, ok, err := auth.Authenticate(req)
		if !ok || err != nil {
			t.Fatalf("got %v, %v", ok, err)
		}
		suffix := name[len("X-Remote-Extra-"):]
		if want := map[string][]string{extraKey(suffix): {"v"}}; !reflect.DeepEqual(u.Extra, want) {
			t.Fatalf("header %q: extra %q, want %q", name, u.Extra, want)
		}
		if len(req.Header) != 0 {
			t.Fatalf("headers left: %q", req.Header)
		}
	})
}

// asciiLower is s with its ASCII upper-case letters lower-cased, every
// other byte kept.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
