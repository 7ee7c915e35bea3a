// Package authn finds who sends a request: the Authenticator interface the
// registry calls before authorizing, and the authenticators
// kube-apiserver offers, each behaving as kube's (k8s.io/apiserver's
// pkg/authentication) so that a client configured for one works with the
// other:
//
//	BearerToken(t)       the token of "Authorization: Bearer <token>", looked up by a
//	                     TokenAuthenticator (the one a TokenReview asks, too)
//	WebSocketProtocol(t) the token of a WebSocket subprotocol
//	                     "base64url.bearer.authorization.k8s.io.<token>" (browsers)
//	Tokens               static tokens: kube's --token-auth-file (ParseTokenFile,
//	                     LoadTokenFile) or a Go map (NewTokens)
//	ClientCert(opts)     the TLS client certificate: CN the user, O the groups
//	                     (--client-ca-file)
//	RequestHeader(opts)  a front proxy's X-Remote-User, -Group and -Extra-* headers,
//	                     trusted for its client certificate (--requestheader-*)
//	Anonymous()          system:anonymous in system:unauthenticated (--anonymous-auth)
//	TokenReview(opts)    a TokenAuthenticator asking the main API server with a
//	                     TokenReview, answers cached (an aggregated server's delegation)
//
// and the ways kube combines them: Union (the first that accepts a request
// wins; when none does, their errors), UnionTokens, WithAuthenticatedGroup
// (system:authenticated added to every user but the anonymous one) and
// AnonymousFallback (anonymous only for a request with no credentials).
// New assembles kube-apiserver's chain from Options:
//
//	AnonymousFallback(WithAuthenticatedGroup(Union(
//		RequestHeader, ClientCert, BearerToken, WebSocketProtocol, Options.Authenticators...)))
//
// An authenticator answers ok=false for a request with no credentials it
// reads, and an error for credentials it reads but refuses; the error
// makes the request a 401 even when anonymous requests are allowed:
//
//	no Authorization header, no client certificate   anonymous (or 401 without it)
//	Authorization: Bearer <unknown token>            401 "authn: invalid bearer token"
//	Authorization: Basic ...                         anonymous (a scheme no one reads)
//	client certificate of an unknown CA              401 "authn: verifying certificate SN=… failed: x509: …"
//
// Authenticators that accept credentials remove the headers they read
// them from (Authorization, the front proxy's headers), as kube does, so
// no later stage sees them. Every authenticator here is safe for
// concurrent use and keeps no per-request state.
package authn
