package registry

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/registry/internal/negotiate"
)

// negotiateFor picks the representation of a response about res (package
// negotiate); 406 when nothing on offer is acceptable, in kube's words:
//
//   - a built-in kind's (not Custom) Accept header that go-restful's route
//     matching refuses (no element is */* or a media type the route
//     produces, parameters aside): go-restful's "406: Not Acceptable"
//     listing what the route produces;
//   - a watch asked in YAML, which has no stream form: the stream media
//     types;
//   - otherwise kube's negotiation's "only the following media types are
//     accepted", where a custom resource lists protobuf (kube's custom
//     resource serializer has it, for PartialObjectMetadata).
func negotiateFor(req *http.Request, res *Resource, e negotiate.Endpoint) (negotiate.Target, error) {
	protobuf := res.Protobuf != nil
	o := negotiate.For(protobuf, e)
	t, ok := o.Pick(req)
	switch {
	case !res.Custom && !negotiate.RouteAccepts(req.Header.Get("Accept"), negotiate.Produces(e)):
		return negotiate.Target{}, errRouteNotAcceptable(negotiate.Produces(e))
	case !ok && res.Custom:
		return negotiate.Target{}, errNotAcceptable(negotiate.For(true, e).Supported())
	case !ok:
		return negotiate.Target{}, errNotAcceptable(o.Supported())
	case e == negotiate.Watch && t.Format == negotiate.YAML:
		return negotiate.Target{}, errNotAcceptable(negotiate.StreamSupported)
	}
	return t, nil
}

// pick negotiates the request's Accept header against o; 406 when nothing
// on offer is acceptable.
func pick(o negotiate.Offers, req *http.Request) (negotiate.Target, error) {
	t, ok := o.Pick(req)
	if !ok {
		return negotiate.Target{}, errOffersNotAcceptable(o.Supported())
	}
	return t, nil
}

// errWrongPartial is kube's 406 for a negotiated negotiate.WrongPartial,
// once the request is served: PartialObjectMetadata asked of a list, or
// PartialObjectMetadataList of one object, naming the Go type kube had
// (goType).
func errWrongPartial(res *Resource, list bool) *StatusError {
	msg := fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (%s)", res.goType(false))
	if list {
		msg = fmt.Sprintf("you requested PartialObjectMetadata, but the requested object is a list (%s)", res.goType(true))
	}
	return newStatus(http.StatusNotAcceptable, "NotAcceptable", msg, nil)
}

// goType is the Go type kube-apiserver holds an object (or list) of res
// as, which some of its messages print: a custom resource is
// unstructured; a built-in kind is its internal type, in a package named
// after the group's first label ("core" for the core group and for
// events.k8s.io, whose Event is core's).
//
// Example: apps/v1 Deployment lists are "*apps.DeploymentList",
// rbac.authorization.k8s.io Roles "*rbac.Role".
func (res *Resource) goType(list bool) string {
	suffix := ""
	if list {
		suffix = "List"
	}
	if res.Custom {
		return "*unstructured.Unstructured" + suffix
	}
	pkg, _, _ := strings.Cut(res.Group, ".")
	if pkg == "" || res.Group == "events.k8s.io" {
		pkg = "core"
	}
	return "*" + pkg + "." + res.Kind + suffix
}
