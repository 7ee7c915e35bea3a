// Package request describes an API request as every stage of the request
// pipeline reads it: what it asks (Info: verb, API group, version,
// resource, subresource, namespace, name, or a non-resource path) and who
// asks it (User).
//
// Parse reads the Info from a request's method, path and query by
// kube-apiserver's request-info rules, without knowing which resources are
// served, so an authorizer or a user's func(http.Handler) http.Handler
// middleware sees what kube's would:
//
//	GET    /api/v1/namespaces/a/configmaps            list configmaps in a
//	GET    /api/v1/namespaces/a/configmaps?watch=true watch configmaps in a
//	GET    /api/v1/watch/namespaces/a/configmaps/x    watch configmaps x in a
//	DELETE /apis/g/v1/widgets                          deletecollection widgets
//	PUT    /api/v1/namespaces/a/status                 update namespaces a, subresource status
//	GET    /apis/g                                     non-resource get /apis/g
//
// The registry routes every request once, stores the Info and, after
// authentication, the User in the request's context (WithInfo, WithUser),
// and every later stage reads them from there (InfoFrom, UserFrom).
package request
