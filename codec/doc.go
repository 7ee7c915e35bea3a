// Package codec turns HTTP content headers into decisions: it parses media
// types and Accept headers and negotiates which of the server's offered
// representations a client gets, the way kube-apiserver does. It also
// converts YAML bodies to JSON and back as kube does (bounded against
// alias expansion and deep nesting). The binary formats live in its
// subpackages: codec/protobuf and codec/cbor.
//
// An offer is a media type the server can produce, with the parameters that
// select a representation: "application/json" for the object itself,
// "application/json;as=Table;g=meta.k8s.io;v=v1" for a Table rendering,
// "application/json;stream=watch" for a watch stream. A range the client sends
// matches an offer only when both carry the same parameters (q, charset and
// pretty aside), so a client that did not ask for a Table never gets one.
//
// Malformed headers are errors wrapping [ErrInvalidMediaType]; a failed
// negotiation is reported with [NotAcceptable] (HTTP 406) and an unsupported
// request body type with [UnsupportedMediaType] (HTTP 415), both with
// kube-apiserver's messages.
package codec
