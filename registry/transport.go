package registry

import (
	"net/http"

	"github.com/kapi-dev/kapi/registry/internal/inproc"
)

// Transport returns an http.RoundTripper that serves requests with r
// itself, without a socket:
//
//	rest.Config{Host: "http://kapi", Transport: reg.Transport()}
//
// gives client-go (and kubectl's factories) a client that skips TCP and TLS
// entirely. The URL's scheme and host are ignored; its path is served as
// is (no prefix is stripped).
//
// The handler runs in its own goroutine, as under net/http's server.
// RoundTrip returns as soon as the handler writes its header (WriteHeader,
// its first Write or Flush, or returning); the body then streams through
// an unbuffered pipe, so each Write reaches the reader as it happens and
// watch events arrive as they are sent. The handler's request context ends
// when the handler returns, when the caller's request context ends, or when
// the caller closes the response body; its writes then fail rather than
// block. A panic before the header is sent is returned as RoundTrip's error,
// a later one as the body's read error (as a dropped connection would be).
// The RoundTripper is safe for concurrent use.
func (r *Registry) Transport() http.RoundTripper {
	return inproc.New(r, r.log)
}
