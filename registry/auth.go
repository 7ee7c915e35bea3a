package registry

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

// The authentication, impersonation and authorization stages of the
// request pipeline (EXT-3, EXT-8): every request, whatever its route,
// passes them in ServeHTTP before its handler runs.

// anonymous is who sends a request when no authenticator is set. Like
// every User in a request's context, it is read-only.
var anonymous = &request.User{Name: request.Anonymous, Groups: []string{request.AllUnauthenticated}}

func anonymousUser() *request.User { return anonymous }

// authenticate finds who sends req: 401 when its credentials are not
// valid or no authenticator accepts it.
func (r *Registry) authenticate(req *http.Request) (*request.User, error) {
	if r.opts.Authenticator == nil {
		return anonymousUser(), nil
	}
	u, ok, err := r.opts.Authenticator.Authenticate(req)
	if err != nil || !ok || u == nil {
		if err != nil {
			r.log.Debug("unable to authenticate the request", "err", err)
		}
		return nil, errUnauthorized()
	}
	return u, nil
}

func errUnauthorized() *StatusError {
	return newStatus(http.StatusUnauthorized, "Unauthorized", "Unauthorized", nil)
}

// authorize asks the authorizer whether u may do what a asks: nil, or
// kube's 403.
// Authorize asks the registry's authorizer (Options.Authorizer; allow
// all when unset) about a, for a check a strategy makes beyond the
// request's own route, as kube's admission plugins ask their authorizer:
// a CertificateSigningRequest's approval needs "approve" on
// certificates.k8s.io signers named by its signerName.
func (r *Registry) Authorize(ctx context.Context, a authz.Attributes) (authz.Decision, string, error) {
	return r.authorizer.Authorize(ctx, a)
}

func (r *Registry) authorize(ctx context.Context, a authz.Attributes) error {
	d, reason, err := r.authorizer.Authorize(ctx, a)
	if d == authz.Allow {
		return nil
	}
	if err != nil && reason == "" {
		reason = err.Error()
	}
	return errForbidden(a, reason)
}

// errForbidden is kube's 403 for a denied request (responsewriters.Forbidden):
//
//	configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "b"
//	forbidden: User "alice" cannot get path "/version"
func errForbidden(a authz.Attributes, reason string) *StatusError {
	user := ""
	if a.User != nil {
		user = a.User.Name
	}
	var msg string
	if !a.ResourceRequest {
		msg = fmt.Sprintf("User %q cannot %s path %q", user, a.Verb, a.Path)
	} else {
		res := a.Resource
		if a.Subresource != "" {
			res += "/" + a.Subresource
		}
		if a.Namespace != "" {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", user, a.Verb, res, a.APIGroup, a.Namespace)
		} else {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", user, a.Verb, res, a.APIGroup)
		}
	}
	if reason != "" {
		msg += ": " + reason
	}
	return forbidden(a.APIGroup, a.Resource, a.Name, msg)
}

// forbidden is apimachinery's NewForbidden: the message names the group
// resource and the object when there are any.
func forbidden(group, resource, name, msg string) *StatusError {
	gr := resource
	if group != "" {
		gr += "." + group
	}
	switch {
	case gr == "" && name == "":
		msg = "forbidden: " + msg
	case name == "":
		msg = gr + " is forbidden: " + msg
	default:
		msg = fmt.Sprintf("%s %q is forbidden: %s", gr, name, msg)
	}
	return newStatus(http.StatusForbidden, "Forbidden", msg, &StatusDetails{Name: name, Group: group, Kind: resource})
}

// serviceAccountName splits "system:serviceaccount:NS:NAME".
func serviceAccountName(user string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return "", "", false
	}
	ns, name, ok = strings.Cut(rest, ":")
	if !ok || ns == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return ns, name, true
}

// unsafeDeleteVerb is what a delete with
// ignoreStoreReadErrorWithClusterBreakingPotential must be allowed
// besides delete, as in kube.
const unsafeDeleteVerb = "unsafe-delete-ignore-read-errors"

// authorizeUnsafeDelete asks the authorizer for unsafeDeleteVerb on the
// object rq deletes: nil, or kube's 403.
func (r *Registry) authorizeUnsafeDelete(rq *routed) error {
	ctx := rq.Context()
	info, ok := request.InfoFrom(ctx)
	if !ok {
		info = &request.Info{IsResourceRequest: true, APIGroup: rq.res.Group, APIVersion: rq.res.Version, Resource: rq.res.Plural, Namespace: rq.namespace, Name: rq.name}
	}
	a := authz.AttributesFrom(requestUser(ctx), info)
	a.Verb = unsafeDeleteVerb
	d, reason, err := r.authorizer.Authorize(ctx, a)
	switch {
	case err != nil:
		return forbidden(a.APIGroup, a.Resource, a.Name, fmt.Sprintf("error while checking permission for %q, %v", unsafeDeleteVerb, err))
	case d != authz.Allow:
		return forbidden(a.APIGroup, a.Resource, a.Name, fmt.Sprintf("not permitted to do %q, reason: %s", unsafeDeleteVerb, reason))
	}
	return nil
}
