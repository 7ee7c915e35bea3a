package registry

import (
	"net/http"

	"github.com/kapi-dev/kapi/registry/internal/negotiate"
)

// negotiateFor picks the representation of a response about res (package
// negotiate); 406 when nothing on offer is acceptable.
func negotiateFor(req *http.Request, res *Resource, e negotiate.Endpoint) (negotiate.Target, error) {
	return pick(negotiate.For(res.Protobuf != nil, e), req)
}

// pick negotiates the request's Accept header against o; 406 when nothing
// on offer is acceptable.
func pick(o negotiate.Offers, req *http.Request) (negotiate.Target, error) {
	t, ok := o.Pick(req)
	if !ok {
		return negotiate.Target{}, errNotAcceptable(o.Supported())
	}
	return t, nil
}
