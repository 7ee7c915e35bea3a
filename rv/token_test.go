package rv

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

var secret = Tokens{Secret: []byte("0123456789abcdef0123456789abcdef")}

func TestTokenRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		tok  Token
	}{
		{"zero", Token{}},
		{"typical", Token{Revision: 42, Key: "ns1/web-7", Offset: 500}},
		{"latest", Token{Revision: 0, Key: "b", Offset: 3}},
		{"max revision", Token{Revision: 1<<64 - 1, Key: "x", Offset: 1 << 62}},
		{"binary key", Token{Revision: 7, Key: "a\x00b\xff/é", Offset: 1}},
		{"long key", Token{Revision: 7, Key: strings.Repeat("k", 4000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := secret.Encode("/g/r/", tt.tok)
			if strings.ContainsAny(s, "+/=") {
				t.Errorf("token %q; want URL-safe characters only", s)
			}
			got, err := secret.Decode("/g/r/", s)
			if err != nil || got != tt.tok {
				t.Fatalf("Decode(Encode(%+v)) = %+v, %v; want the token back", tt.tok, got, err)
			}
			if again := secret.Encode("/g/r/", got); again != s {
				t.Errorf("re-encoded %q; want %q", again, s)
			}
		})
	}
}

func TestTokenRejected(t *testing.T) {
	const prefix = "/g/r/ns1/"
	good := secret.Encode(prefix, Token{Revision: 42, Key: "web-7", Offset: 500})
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	if len(raw)%3 == 0 {
		t.Fatalf("token of %d bytes has no unused bits; the non-canonical case needs some", len(raw))
	}
	enc := base64.RawURLEncoding.EncodeToString
	mac := func(b []byte) string { // a correctly signed body
		return enc(append(b, secret.mac(prefix, b)...))
	}
	tests := []struct {
		name, prefix, token, why string
		tokens                   Tokens
		// kube: the message is kube's (a token kube's decoder refuses
		// too): "continue key is not valid: " why.
		kube bool
	}{
		{name: "empty", token: "", why: "unexpected end of JSON input", kube: true},
		{name: "not base64", token: "a token!", why: "illegal base64 data at input byte 1", kube: true},
		{name: "std base64", token: strings.NewReplacer("-", "+", "_", "/").Replace(good) + "+/", why: "illegal base64 data at input byte", kube: true},
		{name: "padding", token: good + "==", why: "illegal base64 data at input byte", kube: true},
		{name: "non-canonical last character", token: good[:len(good)-1] + string(b64[strings.IndexByte(b64, good[len(good)-1])^1]), why: `invalid character '\x01' looking for beginning of value`, kube: true},
		{name: "too long", token: strings.Repeat("A", 9000), why: "too long"},
		{name: "truncated", token: enc(raw[:len(raw)-1]), why: "not issued for this collection or was altered"},
		{name: "too short", token: enc(raw[:10]), why: `invalid character '\x01' looking for beginning of value`, kube: true},
		{name: "extended", token: enc(append(raw[:len(raw):len(raw)], 0)), why: "not issued for this collection or was altered"},
		{name: "other version", token: enc(append([]byte{2}, raw[1:]...)), why: `invalid character '\x02' looking for beginning of value`, kube: true},
		{name: "kube's garbage", token: "garbage", why: `invalid character '\u0081' looking for beginning of value`, kube: true},
		{name: "kube's other version", token: enc([]byte(`{"v":"meta.k8s.io/v2"}`)), why: "server does not recognize this encoded version meta.k8s.io/v2", kube: true},
		{name: "kube's no revision", token: enc([]byte(`{"v":"meta.k8s.io/v1","start":"a"}`)), why: "incorrect encoded start resourceVersion (version meta.k8s.io/v1)", kube: true},
		{name: "kube's no key", token: enc([]byte(`{"v":"meta.k8s.io/v1","rv":5}`)), why: "encoded start key empty (version meta.k8s.io/v1)", kube: true},
		{name: "kube's escaping key", token: enc([]byte(`{"v":"meta.k8s.io/v1","rv":5,"start":"a/../../b"}`)), why: "continue key is not valid: a/../../b", kube: true},
		{name: "kube's valid token", token: enc([]byte(`{"v":"meta.k8s.io/v1","rv":5,"start":"a"}`)), why: "unknown version"},
		{name: "other prefix", prefix: "/g/r/ns2/", token: good, why: "not issued for this collection"},
		{name: "narrower prefix", prefix: "/g/r/ns1/web-", token: good, why: "not issued for this collection"},
		{name: "other secret", tokens: Tokens{Secret: []byte("another secret")}, token: good, why: "not issued for this collection"},
		{name: "fresh secret", tokens: NewTokens(), token: good, why: "not issued for this collection"},
		{name: "signed bad revision", token: mac([]byte{1, 0x80, 0x80, 0x80}), why: "bad revision"},
		{name: "signed bad offset", token: mac([]byte{1, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}), why: "bad offset"},
		{name: "signed escaping key", token: mac(append([]byte{1, 5, 0}, "a/../../x"...)), why: "bad key"},
		{name: "signed relative key", token: mac(append([]byte{1, 5, 0}, "../x"...)), why: "bad key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.prefix == "" {
				tt.prefix = prefix
			}
			if tt.tokens.Secret == nil {
				tt.tokens = secret
			}
			got, err := tt.tokens.Decode(tt.prefix, tt.token)
			if err == nil {
				t.Fatalf("Decode = %+v; want an error", got)
			}
			if tt.kube {
				var e *Error
				if !errors.As(err, &e) || !errors.Is(err, ErrBadRequest) ||
					!strings.HasPrefix(e.Msg, "invalid continue token: continue key is not valid: ") || !strings.Contains(e.Msg, tt.why) {
					t.Errorf("error %v; want kube's 400 \"invalid continue token: continue key is not valid: ...%s\"", err, tt.why)
				}
				return
			}
			checkTokenErr(t, err, tt.why)
		})
	}
}

func checkTokenErr(t *testing.T, err error, why string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrBadRequest) {
		t.Fatalf("error %#v; want an *Error of kind ErrBadRequest", err)
	}
	if !strings.HasPrefix(e.Msg, "invalid continue token: ") || !strings.Contains(e.Msg, why) ||
		!strings.HasSuffix(e.Msg, "start the list again without continue") {
		t.Errorf("message %q; want it to say the continue token is invalid (%s) and what to do", e.Msg, why)
	}
}

// Every single-bit change anywhere in a token, and every cut, is caught.
func TestTokenTamper(t *testing.T) {
	const prefix = "/g/r/"
	good := secret.Encode(prefix, Token{Revision: 1234567, Key: "ns/name", Offset: 99})
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	for i := range raw {
		for bit := range 8 {
			b := append([]byte(nil), raw...)
			b[i] ^= 1 << bit
			if tok, err := secret.Decode(prefix, base64.RawURLEncoding.EncodeToString(b)); err == nil {
				t.Fatalf("byte %d bit %d flipped: Decode = %+v; want an error", i, bit, tok)
			}
		}
	}
	for n := range len(good) {
		if tok, err := secret.Decode(prefix, good[:n]); err == nil {
			t.Fatalf("cut to %d characters: Decode = %+v; want an error", n, tok)
		}
	}
}

func TestNewTokens(t *testing.T) {
	a, b := NewTokens(), NewTokens()
	if len(a.Secret) < 32 || string(a.Secret) == string(b.Secret) {
		t.Fatalf("secrets %x and %x; want two random 32-byte secrets", a.Secret, b.Secret)
	}
	s := a.Encode("/p/", Token{Revision: 1, Key: "k"})
	if _, err := a.Decode("/p/", s); err != nil {
		t.Fatalf("Decode with the issuing Tokens: %v", err)
	}
	if _, err := b.Decode("/p/", s); err == nil {
		t.Fatalf("Decode with another NewTokens: no error; want one")
	}
}

func FuzzDecodeToken(f *testing.F) {
	f.Add(secret.Encode("/g/r/", Token{Revision: 42, Key: "ns/a", Offset: 3}), uint64(42), "ns/a", int64(3))
	f.Add(secret.Encode("/g/r/", Token{}), uint64(0), "", int64(0))
	f.Add("", uint64(1), "../x", int64(-1))
	f.Add("AQIDBAUGBwgJCgsMDQ4PEBESExQV", uint64(1<<63), "a/../b", int64(1<<62))
	f.Fuzz(func(t *testing.T, s string, rev uint64, key string, off int64) {
		// Decoding arbitrary input never panics; what decodes re-encodes
		// to the same token.
		if tok, err := secret.Decode("/g/r/", s); err == nil {
			if again := secret.Encode("/g/r/", tok); again != s {
				t.Fatalf("Decode(%q) = %+v, which encodes to %q; want one encoding per token", s, tok, again)
			}
		} else if !errors.Is(err, ErrBadRequest) {
			t.Fatalf("Decode(%q) error %v; want ErrBadRequest", s, err)
		}
		// Encoding round-trips, unless the token holds what Decode refuses.
		tok := Token{Revision: rev, Key: key, Offset: off}
		s = secret.Encode("/g/r/", tok)
		got, err := secret.Decode("/g/r/", s)
		refused := off < 0 || off > 1<<62 || strings.Contains(key, "/../") || strings.HasPrefix(key, "../") || len(s) > maxTokenLen
		switch {
		case refused && err == nil:
			t.Fatalf("Decode(Encode(%+v)) = %+v; want an error", tok, got)
		case !refused && (err != nil || got != tok):
			t.Fatalf("Decode(Encode(%+v)) = %+v, %v; want the token back", tok, got, err)
		}
	})
}
