package authn

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/registry/request"
)

// fixed is an authenticator with a fixed answer, counting its calls.
type fixed struct {
	u     *request.User
	ok    bool
	err   error
	calls int
}

func (f *fixed) Authenticate(*http.Request) (*request.User, bool, error) {
	f.calls++
	return f.u, f.ok, f.err
}

func TestUnion(t *testing.T) {
	e1, e2 := errors.New("e1"), errors.New("e2")
	alice := &request.User{Name: "alice"}
	bob := &request.User{Name: "bob"}
	tests := []struct {
		name   string
		auths  []*fixed
		want   *request.User
		errs   []error // each must be in the error
		called []int   // calls of each
	}{
		{name: "none", called: []int{}},
		{name: "nobody ok", auths: []*fixed{{}, {}}, called: []int{1, 1}},
		{name: "first ok wins", auths: []*fixed{{u: alice, ok: true}, {u: bob, ok: true}}, want: alice, called: []int{1, 0}},
		{name: "second ok", auths: []*fixed{{}, {u: bob, ok: true}}, want: bob, called: []int{1, 1}},
		{name: "ok after an error", auths: []*fixed{{err: e1}, {u: bob, ok: true}}, want: bob, called: []int{1, 1}},
		{name: "one error", auths: []*fixed{{err: e1}, {}}, errs: []error{e1}, called: []int{1, 1}},
		{name: "errors joined", auths: []*fixed{{err: e1}, {}, {err: e2}}, errs: []error{e1, e2}, called: []int{1, 1, 1}},
		{name: "ok with an error is an error", auths: []*fixed{{u: alice, ok: true, err: e1}}, want: alice, errs: []error{e1}, called: []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			auths := make([]Authenticator, len(tt.auths))
			for i, a := range tt.auths {
				auths[i] = a
			}
			u, ok, err := Union(auths...).Authenticate(httptest.NewRequest(http.MethodGet, "/", nil))
			if len(tt.auths) == 1 {
				// Union of one is that one, whatever it answers.
				if u != tt.auths[0].u || ok != tt.auths[0].ok || err != tt.auths[0].err {
					t.Fatalf("got %v %v %v", u, ok, err)
				}
				return
			}
			if (err != nil) != (len(tt.errs) > 0) {
				t.Fatalf("err = %v, want %v", err, tt.errs)
			}
			for _, e := range tt.errs {
				if !errors.Is(err, e) {
					t.Fatalf("err = %v, want it to hold %v", err, e)
				}
			}
			if len(tt.errs) == 1 && err != tt.errs[0] {
				t.Fatalf("err = %#v, want %v itself", err, tt.errs[0])
			}
			if ok != (tt.want != nil) || u != tt.want {
				t.Fatalf("got %+v, %v; want %+v", u, ok, tt.want)
			}
			for i, a := range tt.auths {
				if a.calls != tt.called[i] {
					t.Fatalf("authenticator %d called %d times, want %d", i, a.calls, tt.called[i])
				}
			}
		})
	}
}

func TestUnionTokens(t *testing.T) {
	boom := errors.New("boom")
	a := NewTokens(map[string]request.User{"a": {Name: "alice"}, "x": {Name: "first"}})
	b := NewTokens(map[string]request.User{"b": {Name: "bob"}, "x": {Name: "second"}})
	failing := TokenFunc(func(context.Context, string) (*request.User, bool, error) { return nil, false, boom })
	ctx := context.Background()
	for _, tt := range []struct {
		ts    []TokenAuthenticator
		token string
		want  string
		err   error
	}{
		{ts: []TokenAuthenticator{a, b}, token: "a", want: "alice"},
		{ts: []TokenAuthenticator{a, b}, token: "b", want: "bob"},
		{ts: []TokenAuthenticator{a, b}, token: "x", want: "first"},
		{ts: []TokenAuthenticator{a, b}, token: "z"},
		{ts: []TokenAuthenticator{failing, b}, token: "b", want: "bob"},
		{ts: []TokenAuthenticator{failing, b}, token: "z", err: boom},
		{ts: []TokenAuthenticator{b}, token: "b", want: "bob"},
	} {
		u, ok, err := UnionTokens(tt.ts...).AuthenticateToken(ctx, tt.token)
		if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) || ok != (tt.want != "") || (ok && u.Name != tt.want) {
			t.Errorf("token %q: got %+v, %v, %v; want %q, %v", tt.token, u, ok, err, tt.want, tt.err)
		}
	}
}

func TestAnonymous(t *testing.T) {
	u, ok, err := Anonymous().Authenticate(httptest.NewRequest(http.MethodGet, "/", nil))
	want := &request.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}
	if !ok || err != nil || !reflect.DeepEqual(u, want) {
		t.Fatalf("got %+v, %v, %v", u, ok, err)
	}
}

func TestWithAuthenticatedGroup(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		in   fixed
		want *request.User
		err  error
	}{
		{name: "added", in: fixed{u: &request.User{Name: "alice", UID: "1", Groups: []string{"dev"}, Extra: map[string][]string{"k": {"v"}}}, ok: true},
			want: &request.User{Name: "alice", UID: "1", Groups: []string{"dev", "system:authenticated"}, Extra: map[string][]string{"k": {"v"}}}},
		{name: "no groups", in: fixed{u: &request.User{Name: "alice"}, ok: true}, want: &request.User{Name: "alice", Groups: []string{"system:authenticated"}}},
		{name: "already in", in: fixed{u: &request.User{Name: "alice", Groups: []string{"system:authenticated", "dev"}}, ok: true},
			want: &request.User{Name: "alice", Groups: []string{"system:authenticated", "dev"}}},
		{name: "unauthenticated group", in: fixed{u: &request.User{Name: "x", Groups: []string{"system:unauthenticated"}}, ok: true},
			want: &request.User{Name: "x", Groups: []string{"system:unauthenticated"}}},
		{name: "anonymous", in: fixed{u: &request.User{Name: "system:anonymous"}, ok: true}, want: &request.User{Name: "system:anonymous"}},
		{name: "not ok", in: fixed{}},
		{name: "ok without a user", in: fixed{ok: true}, err: ErrNoUser},
		{name: "error", in: fixed{err: boom}, err: boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before *request.User
			if tt.in.u != nil {
				c := *tt.in.u
				c.Groups = append([]string(nil), c.Groups...)
				before = &c
			}
			u, ok, err := WithAuthenticatedGroup(&tt.in).Authenticate(httptest.NewRequest(http.MethodGet, "/", nil))
			if err != tt.err || ok != (tt.want != nil) || !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("got %+v, %v, %v; want %+v, %v", u, ok, err, tt.want, tt.err)
			}
			if before != nil && !reflect.DeepEqual(tt.in.u, before) {
				t.Fatalf("the inner user changed: %+v, was %+v", tt.in.u, before)
			}
		})
	}
}

func TestAnonymousFallback(t *testing.T) {
	boom := errors.New("boom")
	alice := &request.User{Name: "alice"}
	anon := &request.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}
	for _, tt := range []struct {
		name string
		in   fixed
		want *request.User
		err  error
	}{
		{name: "authenticated", in: fixed{u: alice, ok: true}, want: alice},
		{name: "no credentials", in: fixed{}, want: anon},
		{name: "bad credentials", in: fixed{err: boom}, err: boom},
	} {
		u, ok, err := AnonymousFallback(&tt.in).Authenticate(httptest.NewRequest(http.MethodGet, "/", nil))
		if err != tt.err || ok != (tt.want != nil) || !reflect.DeepEqual(u, tt.want) {
			t.Errorf("%s: got %+v, %v, %v; want %+v, %v", tt.name, u, ok, err, tt.want, tt.err)
		}
	}
}

// TestNew runs kube-apiserver's chain: front proxy, client certificate,
// bearer token, with and without anonymous.
func TestNew(t *testing.T) {
	proxyCA, clientCA := newCA(t, "front-proxy-ca"), newCA(t, "client-ca")
	proxy := newCert(t, certSpec{subject: pkix.Name{CommonName: "front-proxy"}, parent: proxyCA})
	alice := newCert(t, certSpec{subject: pkix.Name{CommonName: "alice", Organization: []string{"dev"}}, parent: clientCA})
	stranger := newCert(t, certSpec{subject: pkix.Name{CommonName: "eve"}, parent: newCA(t, "other")})
	tokens := NewTokens(map[string]request.User{"tok": {Name: "bob", Groups: []string{"ops"}}})
	own := Func(func(req *http.Request) (*request.User, bool, error) {
		if req.Header.Get("X-Own") == "" {
			return nil, false, nil
		}
		return &request.User{Name: "own"}, true, nil
	})
	base := Options{
		RequestHeader:  &RequestHeaderOptions{ClientCA: pool(proxyCA), AllowedNames: []string{"front-proxy"}},
		ClientCert:     &ClientCertOptions{Roots: pool(clientCA)},
		Tokens:         tokens,
		Authenticators: []Authenticator{own},
	}
	withAnon := base
	withAnon.Anonymous = true
	anonymousOnly := Options{Anonymous: true}

	anon := &request.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}
	var unknownAuthority x509.UnknownAuthorityError
	tests := []struct {
		name    string
		opts    Options
		chain   []*testCert
		headers map[string]string
		want    *request.User // Extra not compared
		errAs   any
		errIs   error
	}{
		{name: "front proxy", opts: base, chain: []*testCert{proxy}, headers: map[string]string{"X-Remote-User": "carol", "X-Remote-Group": "g"},
			want: &request.User{Name: "carol", Groups: []string{"g", "system:authenticated"}}},
		{name: "client certificate", opts: base, chain: []*testCert{alice}, headers: map[string]string{"X-Remote-User": "mallory"},
			want: &request.User{Name: "alice", Groups: []string{"dev", "system:authenticated"}}},
		{name: "bearer token", opts: base, headers: map[string]string{"Authorization": "Bearer tok"},
			want: &request.User{Name: "bob", Groups: []string{"ops", "system:authenticated"}}},
		{name: "websocket token", opts: base, headers: map[string]string{"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Protocol": bearerProtocolPrefix + "dG9r, x"},
			want: &request.User{Name: "bob", Groups: []string{"ops", "system:authenticated"}}},
		{name: "program's own", opts: base, headers: map[string]string{"X-Own": "1"},
			want: &request.User{Name: "own", Groups: []string{"system:authenticated"}}},
		{name: "nothing", opts: base},
		{name: "nothing, anonymous", opts: withAnon, want: anon},
		{name: "bad token, anonymous", opts: withAnon, headers: map[string]string{"Authorization": "Bearer nope"}, errIs: ErrInvalidBearerToken},
		{name: "unknown certificate, anonymous", opts: withAnon, chain: []*testCert{stranger}, errAs: &unknownAuthority},
		{name: "unknown certificate with a good token", opts: withAnon, chain: []*testCert{stranger}, headers: map[string]string{"Authorization": "Bearer tok"},
			want: &request.User{Name: "bob", Groups: []string{"ops", "system:authenticated"}}},
		{name: "other scheme, anonymous", opts: withAnon, headers: map[string]string{"Authorization": "Basic eDp5"}, want: anon},
		{name: "anonymous only", opts: anonymousOnly, headers: map[string]string{"Authorization": "Bearer tok"}, want: anon},
		{name: "nothing configured", opts: Options{}, headers: map[string]string{"Authorization": "Bearer tok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			auth, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			req := tlsRequest(tt.chain...)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			u, ok, err := auth.Authenticate(req)
			if (err != nil) != (tt.errAs != nil || tt.errIs != nil) ||
				(tt.errAs != nil && !errors.As(err, tt.errAs)) || (tt.errIs != nil && !errors.Is(err, tt.errIs)) {
				t.Fatalf("err = %v", err)
			}
			if u != nil {
				u.Extra = nil
			}
			if ok != (tt.want != nil) || !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", u, ok, tt.want)
			}
		})
	}
}

func TestNewOptionErrors(t *testing.T) {
	if _, err := New(Options{ClientCert: &ClientCertOptions{}}); !errors.Is(err, ErrNoRoots) {
		t.Errorf("client cert without roots: %v", err)
	}
	if _, err := New(Options{RequestHeader: &RequestHeaderOptions{}}); !errors.Is(err, ErrNoRoots) {
		t.Errorf("request header without a CA: %v", err)
	}
	ca := pool(newCA(t, "ca"))
	if _, err := New(Options{RequestHeader: &RequestHeaderOptions{ClientCA: ca, GroupHeaders: []string{" "}}}); !errors.Is(err, ErrEmptyHeaderName) {
		t.Errorf("empty group header: %v", err)
	}
}

// BenchmarkNew is one authentication through kube's chain (front proxy,
// client certificates, 1,000 tokens, anonymous) of a request with a
// bearer token and no client certificate: the common case.
func BenchmarkNew(b *testing.B) {
	m := make(map[string]request.User, 1000)
	for i := range 1000 {
		m[fmt.Sprintf("token-%04d-0123456789abcdef", i)] = request.User{Name: fmt.Sprint("user-", i), Groups: []string{"group-a"}}
	}
	ca := pool(newCA(b, "ca"))
	auth, err := New(Options{
		RequestHeader: &RequestHeaderOptions{ClientCA: ca},
		ClientCert:    &ClientCertOptions{Roots: ca},
		Tokens:        NewTokens(m),
		Anonymous:     true,
	})
	if err != nil {
		b.Fatal(err)
	}
	req := tlsRequest()
	const value = "Bearer token-0500-0123456789abcdef"
	hv := []string{value} // Del drops the key, not the slice: reused
	b.ReportAllocs()
	for b.Loop() {
		req.Header["Authorization"] = hv
		u, ok, err := auth.Authenticate(req)
		if !ok || err != nil || u.Name != "user-500" || len(u.Groups) != 2 {
			b.Fatal(u, ok, err)
		}
	}
}
