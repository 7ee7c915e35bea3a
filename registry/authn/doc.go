// Package authn finds who sends a request: the Authenticator interface the
// registry calls before authorizing, and the authenticators kube-apiserver
// offers (static bearer tokens, client certificates, front-proxy request
// headers, anonymous), with a union that tries several in turn.
package authn
