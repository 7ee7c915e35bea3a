package authn

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry/request"
)

func TestWebSocketProtocol(t *testing.T) {
	boom := errors.New("boom")
	tokens := NewTokens(map[string]request.User{"abc": {Name: "alice"}})
	failing := TokenFunc(func(context.Context, string) (*request.User, bool, error) { return nil, false, boom })
	enc := func(s string) string { return bearerProtocolPrefix + base64.RawURLEncoding.EncodeToString([]byte(s)) }
	ws := http.Header{"Upgrade": {"websocket"}, "Connection": {"keep-alive, Upgrade"}}
	tests := []struct {
		name      string
		auth      TokenAuthenticator
		header    http.Header // besides the protocols; ws when nil
		protocols []string
		want      *request.User
		err       error
		left      []string // the Sec-WebSocket-Protocol values after
	}{
		{name: "token", protocols: []string{enc("abc") + ", v4.channel.k8s.io"}, want: &request.User{Name: "alice"}, left: []string{"v4.channel.k8s.io"}},
		{name: "two headers", protocols: []string{"a", enc("abc"), " b , c"}, want: &request.User{Name: "alice"}, left: []string{"a,b,c"}},
		{name: "no token", protocols: []string{"v4.channel.k8s.io"}, left: []string{"v4.channel.k8s.io"}},
		{name: "empty token", protocols: []string{bearerProtocolPrefix, "x"}, left: []string{bearerProtocolPrefix, "x"}},
		{name: "unknown token", protocols: []string{enc("nope"), "x"}, err: ErrInvalidBearerToken, left: []string{enc("nope"), "x"}},
		{name: "authenticator error", auth: failing, protocols: []string{enc("abc"), "x"}, err: boom, left: []string{enc("abc"), "x"}},
		{name: "only the token", protocols: []string{enc("abc")}, err: ErrWebSocketSubprotocol, left: []string{enc("abc")}},
		{name: "two tokens", protocols: []string{enc("abc") + "," + enc("abc"), "x"}, err: ErrWebSocketTokens, left: []string{enc("abc") + "," + enc("abc"), "x"}},
		{name: "padded base64", protocols: []string{bearerProtocolPrefix + "YWJj=", "x"}, err: ErrWebSocketEncoding, left: []string{bearerProtocolPrefix + "YWJj=", "x"}},
		{name: "not UTF-8", protocols: []string{enc("\xff"), "x"}, err: ErrWebSocketToken, left: []string{enc("\xff"), "x"}},
		{name: "not a websocket", header: http.Header{"Connection": {"Upgrade"}, "Upgrade": {"h2c"}}, protocols: []string{enc("abc"), "x"}, left: []string{enc("abc"), "x"}},
		{name: "no connection upgrade", header: http.Header{"Upgrade": {"WebSocket"}, "Connection": {"keep-alive"}}, protocols: []string{enc("abc"), "x"}, left: []string{enc("abc"), "x"}},
		{name: "upgrade case", header: http.Header{"Upgrade": {"WebSocket"}, "Connection": {"UPGRADE"}}, protocols: []string{enc("abc"), "x"}, want: &request.User{Name: "alice"}, left: []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/a/pods/p/exec", nil)
			h := tt.header
			if h == nil {
				h = ws
			}
			req.Header = h.Clone()
			req.Header["Sec-Websocket-Protocol"] = tt.protocols
			auth := tt.auth
			if auth == nil {
				auth = tokens
			}
			u, ok, err := WebSocketProtocol(auth).Authenticate(req)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if ok != (tt.want != nil) || !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", u, ok, tt.want)
			}
			if got := req.Header["Sec-Websocket-Protocol"]; !reflect.DeepEqual(got, tt.left) {
				t.Fatalf("protocols left %q, want %q", got, tt.left)
			}
		})
	}
}

// FuzzWebSocketProtocol checks the subprotocol parsing never panics, and
// that a token it finds is the one of the only token subprotocol, with
// another subprotocol beside it.
func FuzzWebSocketProtocol(f *testing.F) {
	for _, s := range []string{"", "x", bearerProtocolPrefix + "YWJj, x", bearerProtocolPrefix + "YWJj", bearerProtocolPrefix + "_-_, ,", ",,," + bearerProtocolPrefix} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		token, others, err := protocolToken([]string{v})
		if err != nil {
			if token != "" || others != nil || !strings.HasPrefix(err.Error(), "authn: ") {
				t.Fatalf("%q: %q, %q, %v", v, token, others, err)
			}
			return
		}
		if token == "" {
			return
		}
		if len(others) == 0 {
			t.Fatalf("%q: token %q without another subprotocol", v, token)
		}
		// The token is what the one subprotocol with the prefix decodes to
		// (base64 that is not canonical decodes too, as in kube).
		found := 0
		for p := range strings.SplitSeq(v, ",") {
			if enc, ok := strings.CutPrefix(strings.TrimSpace(p), bearerProtocolPrefix); ok {
				found++
				if b, err := base64.RawURLEncoding.DecodeString(enc); err != nil || string(b) != token {
					t.Fatalf("%q: token %q, but %q decodes to %q, %v", v, token, enc, b, err)
				}
			}
		}
		if found != 1 {
			t.Fatalf("%q: token %q from %d token subprotocols", v, token, found)
		}
	})
}
