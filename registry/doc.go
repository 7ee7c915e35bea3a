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
// Storage keeps each object's JSON without its resourceVersion; JSON
// responses splice the revision into the stored bytes
// (registry/internal/jsonobj). A response takes the representation the
// client negotiates (registry/internal/negotiate): JSON, YAML, protobuf
// for resources with a message (Resource.Protobuf), or CBOR; the objects
// themselves, a meta.k8s.io Table, or their PartialObjectMetadata. Every
// encoding of a stored state, and every watch event's frame, is computed
// once and shared through the state's storage.Memo (encode.go), so lists
// are assembled from cached item encodings and a thousand watchers cost
// one encoding per format.
//
// The stages with no need of the registry's types live in packages under
// registry/internal, each with one job: negotiate (the representation of
// a response), jsonobj (the JSON forms of an object), stream (watch-event
// framing and batching), table (Table cells and column paths),
// deleteopts (DeleteOptions), openapi and discovery (the documents), gc
// (the garbage collector, through a small interface) and inproc (the
// in-process RoundTripper of Transport). None imports registry.
package registry
