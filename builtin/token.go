package builtin

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/registry/request"
)

// Tokens issues and checks service account tokens: what
// serviceaccounts/NAME/token answers a TokenRequest with, and what an
// authenticator accepts back as system:serviceaccount:NAMESPACE:NAME
// (with groups system:serviceaccounts and system:serviceaccounts:NAMESPACE),
// as kube's ServiceAccount token authenticator does. Tokens are JWTs
// signed with ES256 (kube's bound tokens' shape: iss, sub, aud, exp, iat,
// nbf, jti and the kubernetes.io claim).
//
// Use the same Tokens in Options.Tokens and, through
// authn.Options.Tokens (registry/authn), in the registry's authenticator.
// Tokens are safe for concurrent use.
type Tokens struct {
	key    *ecdsa.PrivateKey
	kid    string
	issuer string
	now    func() time.Time
}

// TokenOptions configure Tokens.
type TokenOptions struct {
	// Key signs the tokens; nil generates one (tokens then stop working
	// when the process ends, as a kube-apiserver's whose key changed).
	Key *ecdsa.PrivateKey
	// Issuer is the iss claim and the default audience (default
	// "https://kubernetes.default.svc.cluster.local", kube's).
	Issuer string
	// Now is the clock of the tokens' issue, expiry and checks (default
	// time.Now). Give it the registry's Options.Now so that a
	// TokenRequest's times and the registry's agree (the example server
	// does).
	Now func() time.Time
}

// NewTokens returns a token issuer and authenticator.
func NewTokens(opts TokenOptions) (*Tokens, error) {
	if opts.Key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		opts.Key = k
	}
	if opts.Key.Curve != elliptic.P256() {
		return nil, errors.New("builtin: TokenOptions.Key: want a P-256 key (ES256)")
	}
	if opts.Issuer == "" {
		opts.Issuer = "https://kubernetes.default.svc.cluster.local"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	pub := append(opts.Key.X.FillBytes(make([]byte, 32)), opts.Key.Y.FillBytes(make([]byte, 32))...)
	sum := sha256.Sum256(pub)
	return &Tokens{key: opts.Key, kid: base64.RawURLEncoding.EncodeToString(sum[:]), issuer: opts.Issuer, now: opts.Now}, nil
}

// Issuer is the tokens' iss claim and default audience: the server's API
// audience (registry.Options.APIAudiences), as kube-apiserver's
// --service-account-issuer is its --api-audiences by default.
func (t *Tokens) Issuer() string { return t.issuer }

// claims are a service account token's.
type claims struct {
	Issuer    string   `json:"iss"`
	Subject   string   `json:"sub"`
	Audience  []string `json:"aud"`
	Expiry    int64    `json:"exp"`
	IssuedAt  int64    `json:"iat"`
	NotBefore int64    `json:"nbf"`
	ID        string   `json:"jti"`
	Kube      struct {
		Namespace      string `json:"namespace"`
		ServiceAccount struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"serviceaccount"`
	} `json:"kubernetes.io"`
}

// issue signs a token for a service account.
func (t *Tokens) issue(ns, name, uid string, audiences []string, ttl time.Duration) (string, time.Time, error) {
	now := t.now()
	c := claims{Issuer: t.issuer, Subject: "system:serviceaccount:" + ns + ":" + name, Audience: audiences,
		Expiry: now.Add(ttl).Unix(), IssuedAt: now.Unix(), NotBefore: now.Unix(), ID: randomID()}
	if len(c.Audience) == 0 {
		c.Audience = []string{t.issuer}
	}
	c.Kube.Namespace, c.Kube.ServiceAccount.Name, c.Kube.ServiceAccount.UID = ns, name, uid
	header, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": t.kid})
	payload, err := json.Marshal(c)
	if err != nil {
		return "", time.Time{}, err
	}
	signing := b64(header) + "." + b64(payload)
	sum := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, t.key, sum[:])
	if err != nil {
		return "", time.Time{}, err
	}
	sig := append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	return signing + "." + b64(sig), time.Unix(c.Expiry, 0).UTC(), nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func randomID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// AuthenticateToken accepts a token t issued, unexpired and for the API's
// audience (the issuer): its user is the service account. A token that is
// not a JWT of t's key is not known (false, nil), so that other token
// authenticators may know it.
func (t *Tokens) AuthenticateToken(_ context.Context, token string) (*request.User, bool, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, false, nil
	}
	header, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	payload, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || len(sig) != 64 {
		return nil, false, nil
	}
	var h struct{ Alg, Kid string }
	if json.Unmarshal(header, &h) != nil || h.Alg != "ES256" || h.Kid != t.kid {
		return nil, false, nil
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(&t.key.PublicKey, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, false, nil
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, false, fmt.Errorf("builtin: service account token: %w", err)
	}
	now := t.now().Unix()
	switch {
	case c.Issuer != t.issuer:
		return nil, false, nil
	case now >= c.Expiry:
		return nil, false, errors.New("service account token has expired")
	case now < c.NotBefore:
		return nil, false, errors.New("service account token is not valid yet")
	case !slices.Contains(c.Audience, t.issuer):
		return nil, false, errors.New("token audiences is invalid for the target audiences")
	}
	ns, name := c.Kube.Namespace, c.Kube.ServiceAccount.Name
	if c.Subject != "system:serviceaccount:"+ns+":"+name {
		return nil, false, errors.New("service account token: subject does not match its kubernetes.io claim")
	}
	return &request.User{
		Name:   c.Subject,
		UID:    c.Kube.ServiceAccount.UID,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns},
		Extra:  map[string][]string{"authentication.kubernetes.io/credential-id": {"JTI=" + c.ID}},
	}, true, nil
}
