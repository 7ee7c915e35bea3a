package authn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry/request"
)

func TestBearerToken(t *testing.T) {
	boom := errors.New("webhook down")
	tokens := NewTokens(map[string]request.User{
		"abc":   {Name: "alice", UID: "1", Groups: []string{"dev"}},
		"a:b=c": {Name: "bob"},
	})
	failing := TokenFunc(func(context.Context, string) (*request.User, bool, error) { return nil, false, boom })
	okAndError := TokenFunc(func(context.Context, string) (*request.User, bool, error) {
		return &request.User{Name: "x"}, true, boom
	})
	tests := []struct {
		name    string
		auth    TokenAuthenticator
		headers []string // Authorization values
		want    *request.User
		wantErr error
		kept    bool // the Authorization header stays
	}{
		{name: "no header", auth: tokens, kept: true},
		{name: "empty header", auth: tokens, headers: []string{""}, kept: true},
		{name: "known", auth: tokens, headers: []string{"Bearer abc"}, want: &request.User{Name: "alice", UID: "1", Groups: []string{"dev"}}},
		{name: "scheme case", auth: tokens, headers: []string{"bEARer abc"}, want: &request.User{Name: "alice", UID: "1", Groups: []string{"dev"}}},
		{name: "surrounding space", auth: tokens, headers: []string{"  Bearer abc \t"}, want: &request.User{Name: "alice", UID: "1", Groups: []string{"dev"}}},
		{name: "trailing words ignored", auth: tokens, headers: []string{"Bearer abc def"}, want: &request.User{Name: "alice", UID: "1", Groups: []string{"dev"}}},
		{name: "token punctuation", auth: tokens, headers: []string{"Bearer a:b=c"}, want: &request.User{Name: "bob"}},
		{name: "first header only", auth: tokens, headers: []string{"Basic xyz", "Bearer abc"}, kept: true},
		{name: "unknown", auth: tokens, headers: []string{"Bearer nope"}, wantErr: ErrInvalidBearerToken, kept: true},
		{name: "token case matters", auth: tokens, headers: []string{"Bearer ABC"}, wantErr: ErrInvalidBearerToken, kept: true},
		{name: "authenticator error", auth: failing, headers: []string{"Bearer abc"}, wantErr: boom, kept: true},
		{name: "other scheme", auth: tokens, headers: []string{"Basic abc"}, kept: true},
		{name: "scheme only", auth: tokens, headers: []string{"Bearer"}, kept: true},
		{name: "scheme and space", auth: tokens, headers: []string{"Bearer "}, kept: true},
		{name: "two spaces", auth: tokens, headers: []string{"Bearer  abc"}, kept: true},
		{name: "tab separator", auth: tokens, headers: []string{"Bearer\tabc"}, kept: true},
		{name: "scheme with colon", auth: tokens, headers: []string{"Bearer: abc"}, kept: true},
		{name: "bear", auth: tokens, headers: []string{"bear abc"}, kept: true},
		{name: "ok with an error", auth: okAndError, headers: []string{"Bearer abc"}, wantErr: boom, kept: true},
		{name: "bearer prefix word", auth: tokens, headers: []string{"Bearerabc"}, kept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/api", nil)
			for _, h := range tt.headers {
				req.Header.Add("Authorization", h)
			}
			u, ok, err := BearerToken(tt.auth).Authenticate(req)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if ok != (tt.want != nil) || !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", u, ok, tt.want)
			}
			if _, kept := req.Header["Authorization"]; kept != (tt.kept && len(tt.headers) > 0) {
				t.Fatalf("Authorization header kept = %v, want %v", kept, tt.kept)
			}
		})
	}
}

func TestBearerTokenErrorMessage(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Authorization", "Bearer x")
	_, _, err := BearerToken(NewTokens(nil)).Authenticate(req)
	if err == nil || err.Error() != "authn: invalid bearer token" {
		t.Fatalf("err = %v", err)
	}
}

func TestBearerTokenPassesContext(t *testing.T) {
	type key struct{}
	var got any
	auth := TokenFunc(func(ctx context.Context, token string) (*request.User, bool, error) {
		got = ctx.Value(key{})
		return &request.User{Name: token}, true, nil
	})
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req = req.WithContext(context.WithValue(req.Context(), key{}, "v"))
	req.Header.Set("Authorization", "Bearer t")
	if u, ok, err := BearerToken(auth).Authenticate(req); !ok || err != nil || u.Name != "t" || got != "v" {
		t.Fatalf("got %+v %v %v, ctx value %v", u, ok, err, got)
	}
}

// BenchmarkBearerToken is one authentication of a bearer token against a
// 1,000-token file.
func BenchmarkBearerToken(b *testing.B) {
	var sb strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&sb, "token-%04d-0123456789abcdef,user-%d,uid-%d,\"group-a,group-%d\"\n", i, i, i, i%10)
	}
	tokens, err := ParseTokenFile(strings.NewReader(sb.String()))
	if err != nil || tokens.Len() != 1000 {
		b.Fatal(err, tokens.Len())
	}
	auth := BearerToken(tokens)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/a/pods", nil)
	const value = "Bearer token-0500-0123456789abcdef"
	hv := []string{value} // Del drops the key, not the slice: reused
	b.ReportAllocs()
	for b.Loop() {
		req.Header["Authorization"] = hv
		u, ok, err := auth.Authenticate(req)
		if !ok || err != nil || u.Name != "user-500" {
			b.Fatal(u, ok, err)
		}
	}
}
