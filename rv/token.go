package rv

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"path"
	"strings"
)

// Token is the state a paginated list carries from one page to the next.
type Token struct {
	// Revision is the snapshot the first page was served at; 0 asks to go
	// on at the latest revision (the inconsistent continuation offered
	// with a 410 when the snapshot was compacted).
	Revision uint64
	// Key is the next key to read, relative to the list's prefix, so a
	// token can never reach outside the collection it was issued for.
	Key string
	// Offset counts the items already returned, for remainingItemCount.
	Offset int64
}

// Tokens encodes and decodes continue tokens. A token is opaque to clients:
//
//	base64url( version=1 | uvarint Revision | uvarint Offset | Key | mac )
//
// where mac is the first 16 bytes of HMAC-SHA256(Secret, prefix | 0 | the
// bytes before it). A token changed by one bit, cut short, or issued for
// another collection fails the MAC and is a 400, never a panic.
// Replicas that share a backend must share Secret.
type Tokens struct {
	Secret []byte
}

// NewTokens returns Tokens keyed with a fresh random secret.
func NewTokens() Tokens {
	s := make([]byte, 32)
	_, _ = rand.Read(s) // crypto/rand.Read never fails (Go 1.24+)
	return Tokens{Secret: s}
}

const (
	tokenVersion = 1
	macLen       = 16
	maxTokenLen  = 8 << 10 // longer than any key a store accepts
)

// Encode returns the token for a list of prefix.
func (k Tokens) Encode(prefix string, t Token) string {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(t.Key)+macLen)
	b = append(b, tokenVersion)
	b = binary.AppendUvarint(b, t.Revision)
	b = binary.AppendUvarint(b, uint64(t.Offset))
	b = append(b, t.Key...)
	b = append(b, k.mac(prefix, b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode checks and reads a token issued by Encode for the same prefix.
func (k Tokens) Decode(prefix, s string) (Token, error) {
	if len(s) > maxTokenLen {
		return Token{}, badToken("too long")
	}
	if strings.ContainsAny(s, "\r\n") { // the base64 decoder would skip them
		return Token{}, notAToken(s, "not base64url")
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return Token{}, notAToken(s, "not base64url")
	}
	if len(b) < 1+2+macLen {
		return Token{}, notAToken(s, "too short")
	}
	if b[0] != tokenVersion {
		return Token{}, notAToken(s, "unknown version")
	}
	body, sum := b[:len(b)-macLen], b[len(b)-macLen:]
	if !hmac.Equal(sum, k.mac(prefix, body)) {
		return Token{}, badToken("it was not issued for this collection or was altered")
	}
	rest := body[1:]
	rev, n := binary.Uvarint(rest)
	if n <= 0 {
		return Token{}, badToken("bad revision")
	}
	rest = rest[n:]
	off, n := binary.Uvarint(rest)
	if n <= 0 || off > 1<<62 {
		return Token{}, badToken("bad offset")
	}
	key := string(rest[n:])
	if strings.Contains(key, "/../") || strings.HasPrefix(key, "../") {
		return Token{}, badToken("bad key")
	}
	return Token{Revision: rev, Key: key, Offset: int64(off)}, nil
}

func (k Tokens) mac(prefix string, body []byte) []byte {
	h := hmac.New(sha256.New, k.Secret)
	h.Write([]byte(prefix))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)[:macLen]
}

// notAToken is the error for s, which is not a token of this format at
// all: kube's words for what its own decoder finds wrong with s (a client
// that sends garbage gets kube's answer), else badToken(why).
func notAToken(s, why string) *Error {
	if msg := kubeTokenError(s); msg != "" {
		return badRequest("invalid continue token: continue key is not valid%s", msg)
	}
	return badToken(why)
}

// kubeTokenError is what k8s.io/apiserver's DecodeContinue finds wrong
// with s (base64url of a JSON object {"v": "meta.k8s.io/v1", "rv": N,
// "start": KEY}), after "continue key is not valid"; "" for a token it
// would read.
func kubeTokenError(s string) string {
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return ": " + err.Error()
	}
	var c struct {
		APIVersion      string `json:"v"`
		ResourceVersion int64  `json:"rv,omitempty"`
		StartKey        string `json:"start"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return ": " + err.Error()
	}
	switch {
	case c.APIVersion != "meta.k8s.io/v1":
		return ": server does not recognize this encoded version " + c.APIVersion
	case c.ResourceVersion == 0:
		return ": incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
	case c.StartKey == "":
		return ": encoded start key empty (version meta.k8s.io/v1)"
	}
	key := c.StartKey
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if path.Clean(key) != key {
		return ": " + c.StartKey
	}
	return ""
}

func badToken(why string) *Error {
	return badRequest("invalid continue token: %s; start the list again without continue", why)
}
