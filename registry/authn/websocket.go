package authn

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/registry/request"
)

// bearerProtocolPrefix starts the WebSocket subprotocol that carries a
// bearer token.
const bearerProtocolPrefix = "base64url.bearer.authorization.k8s.io."

// Errors of WebSocketProtocol, kube's messages.
var (
	ErrWebSocketTokens      = errors.New("authn: multiple base64.bearer.authorization tokens specified")
	ErrWebSocketEncoding    = errors.New("authn: invalid base64.bearer.authorization token encoding")
	ErrWebSocketToken       = errors.New("authn: invalid base64.bearer.authorization token")
	ErrWebSocketSubprotocol = errors.New("authn: missing additional subprotocol")
)

// WebSocketProtocol authenticates the bearer token a WebSocket request
// (Upgrade: websocket, and a Connection header naming upgrade) carries as
// a subprotocol, for clients that cannot set headers (browsers), as
// kube's websocket protocol authenticator:
//
//	Sec-WebSocket-Protocol: base64url.bearer.authorization.k8s.io.YWJj, v4.channel.k8s.io
//
// is the token "abc" (base64url without padding). The request must offer
// another subprotocol too, the one the server answers with; on success
// the token's is removed from the header. A token t does not know is
// ErrInvalidBearerToken; two tokens, a token that is not base64url or
// not UTF-8, or no other subprotocol are errors too. Any other request is
// not ok.
func WebSocketProtocol(t TokenAuthenticator) Authenticator {
	return Func(func(req *http.Request) (*request.User, bool, error) {
		if !isWebSocket(req.Header) {
			return nil, false, nil
		}
		token, others, err := protocolToken(req.Header["Sec-Websocket-Protocol"])
		if err != nil || token == "" {
			return nil, false, err
		}
		u, ok, err := t.AuthenticateToken(req.Context(), token)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return nil, false, ErrInvalidBearerToken
		}
		req.Header.Set("Sec-Websocket-Protocol", strings.Join(others, ","))
		return u, true, nil
	})
}

// isWebSocket reports whether h asks for an upgrade to WebSocket.
func isWebSocket(h http.Header) bool {
	if !strings.EqualFold(h.Get("Upgrade"), "websocket") {
		return false
	}
	for _, v := range h["Connection"] {
		if strings.Contains(strings.ToLower(v), "upgrade") {
			return true
		}
	}
	return false
}

// protocolToken finds the bearer token among the subprotocols of the
// Sec-WebSocket-Protocol values vs (comma-separated lists), and the
// other subprotocols. The token is "" when there is none.
func protocolToken(vs []string) (token string, others []string, err error) {
	seen := false
	for _, v := range vs {
		for p := range strings.SplitSeq(v, ",") {
			p = strings.TrimSpace(p)
			enc, isToken := strings.CutPrefix(p, bearerProtocolPrefix)
			if !isToken {
				others = append(others, p)
				continue
			}
			if seen {
				return "", nil, ErrWebSocketTokens
			}
			seen = true
			b, err := base64.RawURLEncoding.DecodeString(enc)
			if err != nil {
				return "", nil, ErrWebSocketEncoding
			}
			if !utf8.Valid(b) {
				return "", nil, ErrWebSocketToken
			}
			token = string(b)
		}
	}
	if token != "" && len(others) == 0 {
		return "", nil, ErrWebSocketSubprotocol
	}
	return token, others, nil
}
