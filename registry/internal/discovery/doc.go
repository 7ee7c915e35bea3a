// Package discovery builds the discovery documents of served resources, in
// kube-apiserver's shape (URI-4): the legacy per-path documents (the
// APIGroup of /apis and /apis/{group}, the APIResourceList of a group
// version) and the aggregated apidiscovery.k8s.io/v2 list that clients ask
// for first. The registry describes its groups with Group and serves the
// documents.
package discovery
