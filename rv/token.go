package rv

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
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
		return Token{}, badToken("not base64url")
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return Token{}, badToken("not base64url")
	}
	if len(b) < 1+2+macLen {
		return Token{}, badToken("too short")
	}
	if b[0] != tokenVersion {
		return Token{}, badToken("unknown version")
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

func badToken(why string) *Error {
	return badRequest("invalid continue token: %s; start the list again without continue", why)
}
