package envtest

import (
	"context"
	"net"
)

// An Environment with InProcess runs inside a testing/synctest bubble
// (README.md, "Virtual time"). One thing outside kapi stands in the way
// and is settled here: Go's net package makes its resolver's state (a
// channel, net.resolverConfig.ch) at the process's first name lookup, so
// when that lookup happens in a bubble — Start prepares the webhook
// serving certificate with controller-runtime, which looks up
// "localhost" — every later lookup outside that bubble, or in another,
// is a fatal error ("send on synctest channel from outside bubble"). A
// lookup at package initialization, outside any bubble, makes that state
// first. Its context is already done: only the resolver's configuration
// is read (files), no query is sent.
func init() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = net.DefaultResolver.LookupHost(ctx, "localhost")
}
