// Package registry turns resource definitions and a storage backend into an
// http.Handler that serves the Kubernetes resource API: discovery, the
// get/list/watch/create/update/patch/delete/deletecollection verbs, the
// status and scale subresources, metadata management, finalizers and
// namespaces. Real clients (client-go, kubectl) use it unchanged.
//
// It is the only package that imports all the others. Every request goes
// through one path per verb: route, decode, strategy (defaults, prepare),
// validation, storage, encode. Errors become Status objects in one place
// (status.go). The same path serves Go callers in-process through Client.
//
// Objects travel as JSON. Storage keeps the encoded object without its
// resourceVersion; responses splice the revision into the stored bytes
// (see withRV), so a list is assembled from stored bytes without
// re-encoding any item.
package registry
