// Package negotiate picks the representation of a response from the
// request's Accept header, as kube-apiserver does: a Format (JSON, YAML,
// protobuf, CBOR) and a View (the objects, a meta.k8s.io Table of them, or
// their PartialObjectMetadata), from what the endpoint offers (an object,
// a collection or a watch stream; protobuf only for resources with a
// message), or for a discovery document (DiscoveryOffers; Aggregated says
// whether /api and /apis are asked for the aggregated list). It also
// reads the request's other representation choices (pretty, gzip).
// Encoding the chosen representation is the registry's job.
package negotiate
