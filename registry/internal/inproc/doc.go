// Package inproc serves HTTP requests in-process: Transport is an
// http.RoundTripper that hands each request to an http.Handler without a
// socket, as registry.Transport offers it to client-go.
//
// The handler runs in its own goroutine, as under net/http's server.
// RoundTrip returns as soon as the handler writes its header (WriteHeader,
// its first Write or Flush, or returning); the body then streams through
// an unbuffered pipe, so each Write reaches the reader as it happens and
// watch events arrive as they are sent. The handler's request context ends
// when the handler returns, when the caller's request context ends, or when
// the caller closes the response body; its writes then fail rather than
// block. A panic before the header is sent is returned as RoundTrip's
// error, a later one as the body's read error (as a dropped connection
// would be).
package inproc
