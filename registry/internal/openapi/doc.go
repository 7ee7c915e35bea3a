// Package openapi builds the OpenAPI documents of served resources, in
// kube-apiserver's shape: the v3 document of one group version (V3, for
// /openapi/v3/{api/v1,apis/G/V}) and the Swagger 2.0 document of every
// resource (Swagger, and NewV2 for its JSON and gnostic protobuf forms, for
// /openapi/v2). kubectl reads them to learn that the server validates
// fields itself, for `kubectl explain`, client-side validation and
// client-side apply's patch types and merge keys.
//
// The v2 forms of the schemas are converted as kube converts a CRD's
// structural schema (toV2): Swagger 2.0 cannot say everything v3 can, and
// kubectl refuses what it cannot read. Serving the documents (caching,
// ETags, negotiation of the response) is the registry's job; PickV2 is
// kube-openapi's choice of /openapi/v2's media type.
package openapi
