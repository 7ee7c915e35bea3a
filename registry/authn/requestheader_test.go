package authn

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/registry/request"
)

func TestRequestHeader(t *testing.T) {
	proxyCA := newCA(t, "front-proxy-ca")
	clientCA := newCA(t, "client-ca")
	proxy := newCert(t, certSpec{subject: pkix.Name{CommonName: "front-proxy"}, parent: proxyCA})
	otherProxy := newCert(t, certSpec{subject: pkix.Name{CommonName: "someone"}, parent: proxyCA})
	user := newCert(t, certSpec{subject: pkix.Name{CommonName: "alice"}, parent: clientCA})

	defaults := RequestHeaderOptions{ClientCA: pool(proxyCA)}
	named := RequestHeaderOptions{ClientCA: pool(proxyCA), AllowedNames: []string{"aggregator", "front-proxy"}}
	custom := RequestHeaderOptions{
		ClientCA:            pool(proxyCA),
		UsernameHeaders:     []string{"X-User", " x-remote-user "},
		UIDHeaders:          []string{"X-Remote-Uid"},
		GroupHeaders:        []string{"X-Group", "X-Remote-Group"},
		ExtraHeaderPrefixes: []string{"X-Extra-", "x-remote-extra-"},
	}
	twoPrefixes := RequestHeaderOptions{
		ClientCA:            pool(proxyCA),
		UIDHeaders:          []string{"X-Remote-UID"},
		GroupHeaders:        []string{"X-Remote-Group-1", "X-Remote-Group-2"},
		ExtraHeaderPrefixes: []string{"X-Remote-Extra-1-", "X-Remote-Extra-2-"},
	}
	var unknownAuthority x509.UnknownAuthorityError
	tests := []struct {
		name    string
		opts    RequestHeaderOptions
		chain   []*testCert
		noTLS   bool
		headers http.Header
		want    *request.User
		errAs   any      // a pointer to the error type wanted, nil for none
		left    []string // the headers left on the request
	}{
		{
			name: "defaults", opts: defaults, chain: []*testCert{proxy},
			headers: http.Header{"X-Remote-User": {"alice"}, "X-Remote-Group": {"dev", "", "ops"}, "Accept": {"*/*"}},
			want:    &request.User{Name: "alice", Groups: []string{"dev", "ops"}},
			left:    []string{"Accept"},
		},
		{
			name: "extras", opts: defaults, chain: []*testCert{proxy},
			headers: http.Header{
				"X-Remote-User":                     {"alice"},
				"X-Remote-Extra-Acme.com%2fproject": {"x", "y"},
				"X-Remote-Extra-Scopes":             {"a"},
				"X-Remote-Extra-Bad%zz":             {"kept"},
				"X-Remote-Extra-%61bc":              {"2"}, // after "Abc"
				"X-Remote-Extra-Abc":                {"1"},
				"X-Remote-Extra-%41":                {"upper"},
			},
			want: &request.User{Name: "alice", Extra: map[string][]string{
				"acme.com/project": {"x", "y"}, "scopes": {"a"}, "bad%zz": {"kept"}, "abc": {"2", "1"}, "A": {"upper"},
			}},
		},
		{
			name: "no user header", opts: defaults, chain: []*testCert{proxy},
			headers: http.Header{"X-Remote-Group": {"dev"}, "X-Remote-Extra-A": {"b"}},
			left:    []string{"X-Remote-Group", "X-Remote-Extra-A"},
		},
		{
			name: "no TLS", opts: defaults, noTLS: true,
			headers: http.Header{"X-Remote-User": {"alice"}},
			left:    []string{"X-Remote-User"},
		},
		{
			name: "no certificate", opts: defaults,
			headers: http.Header{"X-Remote-User": {"alice"}},
			left:    []string{"X-Remote-User"},
		},
		{
			name: "certificate of another CA", opts: defaults, chain: []*testCert{user},
			headers: http.Header{"X-Remote-User": {"mallory"}},
			errAs:   &unknownAuthority,
			left:    []string{"X-Remote-User"},
		},
		{
			name: "allowed name", opts: named, chain: []*testCert{proxy},
			headers: http.Header{"X-Remote-User": {"alice"}},
			want:    &request.User{Name: "alice"},
		},
		{
			name: "name not allowed", opts: named, chain: []*testCert{otherProxy},
			headers: http.Header{"X-Remote-User": {"alice"}},
			errAs:   new(*ProxyNameError),
			left:    []string{"X-Remote-User"},
		},
		{
			name: "custom headers in turn", opts: custom, chain: []*testCert{proxy},
			headers: http.Header{
				"X-User": {""}, "X-Remote-User": {"bob"}, "X-Remote-Uid": {"u1"},
				"X-Group": {"g1"}, "X-Remote-Group": {"g2"},
				"X-Extra-K": {"v1"}, "X-Remote-Extra-K": {"v2"}, "X-Other": {"o"},
			},
			want: &request.User{Name: "bob", UID: "u1", Groups: []string{"g1", "g2"}, Extra: map[string][]string{"k": {"v1", "v2"}}},
			left: []string{"X-Other"},
		},
		{
			// kube's cases: raw (not canonical) header names, two prefixes.
			name: "extra prefixes in turn", opts: twoPrefixes, chain: []*testCert{proxy},
			headers: http.Header{
				"X-Group-Remote":        {"snorlax"},
				"X-Remote-User":         {"Bob"},
				"X-Remote-Uid":          {"2ca80fb0"},
				"X-Remote-Group-1":      {"one-a", "one-b"},
				"X-Remote-Group-2":      {"two-a", "two-b"},
				"X-Remote-extra-1-key1": {"alfa", "bravo"},
				"X-Remote-Extra-1-Key2": {"charlie", "delta"},
				"X-Remote-Extra-1-":     {"india", "juliet"},
				"X-Remote-extra-2-":     {"kilo", "lima"},
				"X-Remote-extra-2-Key1": {"echo", "foxtrot"},
				"X-Remote-Extra-2-key2": {"golf", "hotel"},
			},
			want: &request.User{Name: "Bob", UID: "2ca80fb0", Groups: []string{"one-a", "one-b", "two-a", "two-b"}, Extra: map[string][]string{
				"key1": {"alfa", "bravo", "echo", "foxtrot"},
				"key2": {"charlie", "delta", "golf", "hotel"},
				"":     {"india", "juliet", "kilo", "lima"},
			}},
			left: []string{"X-Group-Remote"},
		},
		{
			name: "escaped extra keys", opts: defaults, chain: []*testCert{proxy},
			headers: http.Header{
				"X-Remote-User":                                            {"Bob"},
				"X-Remote-Extra-Alph4num3r1c":                              {"alphanumeric"},
				"X-Remote-Extra-Percent%20encoded":                         {"percent encoded"},
				"X-Remote-Extra-Almost%zzpercent%xxencoded":                {"not quite percent encoded"},
				"X-Remote-Extra-Example.com%2fpercent%2520encoded":         {"url with double percent encoding"},
				"X-Remote-Extra-Example.com%2F%E4%BB%8A%E6%97%A5%E3%81%AF": {"url with unicode"},
				"X-Remote-Extra-Abc123!#$+.-_*\\^`~|'":                     {"header key legal characters"},
			},
			want: &request.User{Name: "Bob", Extra: map[string][]string{
				"alph4num3r1c":                  {"alphanumeric"},
				"percent encoded":               {"percent encoded"},
				"almost%zzpercent%xxencoded":    {"not quite percent encoded"},
				"example.com/percent%20encoded": {"url with double percent encoding"},
				"example.com/今日は":               {"url with unicode"},
				"abc123!#$+.-_*\\^`~|'":         {"header key legal characters"},
			}},
		},
		{
			name: "first user header wins", opts: custom, chain: []*testCert{proxy},
			headers: http.Header{"X-User": {"carol"}, "X-Remote-User": {"bob"}},
			want:    &request.User{Name: "carol"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			auth, err := RequestHeader(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			req := tlsRequest(tt.chain...)
			if tt.noTLS {
				req.TLS = nil
			}
			req.Header = tt.headers
			u, ok, err := auth.Authenticate(req)
			if (err != nil) != (tt.errAs != nil) || (err != nil && !errors.As(err, tt.errAs)) {
				t.Fatalf("err = %v, want %T", err, tt.errAs)
			}
			if ok != (tt.want != nil) || !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", u, ok, tt.want)
			}
			var left []string
			for k := range req.Header {
				left = append(left, k)
			}
			if !sameSet(left, tt.left) {
				t.Fatalf("headers left %q, want %q", left, tt.left)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestRequestHeaderOptions(t *testing.T) {
	ca := pool(newCA(t, "ca"))
	tests := []struct {
		name string
		opts RequestHeaderOptions
		want error
	}{
		{name: "no CA", opts: RequestHeaderOptions{}, want: ErrNoRoots},
		{name: "empty user header", opts: RequestHeaderOptions{ClientCA: ca, UsernameHeaders: []string{"X-A", " "}}, want: ErrEmptyHeaderName},
		{name: "empty uid header", opts: RequestHeaderOptions{ClientCA: ca, UIDHeaders: []string{""}}, want: ErrEmptyHeaderName},
		{name: "empty group header", opts: RequestHeaderOptions{ClientCA: ca, GroupHeaders: []string{""}}, want: ErrEmptyHeaderName},
		{name: "empty extra prefix", opts: RequestHeaderOptions{ClientCA: ca, ExtraHeaderPrefixes: []string{"\t"}}, want: ErrEmptyHeaderName},
		{name: "valid", opts: RequestHeaderOptions{ClientCA: ca, UsernameHeaders: []string{"X-A"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := RequestHeader(tt.opts); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestProxyNameErrorMessage(t *testing.T) {
	err := &ProxyNameError{CommonName: "someone"}
	if want := "authn: x509: subject with cn=someone is not in the allowed list"; err.Error() != want {
		t.Fatalf("got %q, want %q", err.Error(), want)
	}
}

func TestExtraKey(t *testing.T) {
	for in, want := range map[string]string{
		"Acme.com%2Fproject": "acme.com/project",
		"acme.com%2fproject": "acme.com/project",
		"Scopes":             "scopes",
		"%41":                "A",
		"a%zz":               "a%zz",
		"50%":                "50%",
		"a+b":                "a+b",
		"":                   "",
	} {
		if got := extraKey(in); got != want {
			t.Errorf("extraKey(%q) = %q, want %q", in, got, want)
		}
	}
}
