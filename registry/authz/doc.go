// Package authz decides whether a user may do what a request asks: the
// Authorizer interface every route of the registry consults with the
// request's Attributes, an allow-all authorizer, and a union that asks
// several in turn, as kube-apiserver's --authorization-mode list does.
//
// A decision is Allow, Deny or NoOpinion. A union stops at the first
// Allow or Deny; when every member has no opinion the request is denied,
// and the reasons the members gave are joined into the 403's message:
//
//	Union(privileged, rbac) on user alice (groups system:authenticated),
//	"list configmaps in b":
//	  privileged: NoOpinion (alice is not in system:masters)
//	  rbac:       NoOpinion (no binding of alice grants it)
//	  → denied: configmaps is forbidden: User "alice" cannot list
//	    resource "configmaps" in API group "" in the namespace "b"
//
// SubjectAccessReview delegates the decision to the main API server (an
// aggregated API server's --authorization-kubeconfig), answers cached, as
// kube's delegating authorizer. Other implementations are in subpackages
// (rbac).
package authz
