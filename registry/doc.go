// Package registry turns resource definitions and a storage backend into an
// http.Handler that serves the Kubernetes resource API: discovery, the
// get/list/watch/create/update/patch/delete/deletecollection verbs, the
// status and scale subresources, metadata management, finalizers and
// namespaces. Real clients (client-go, kubectl) use it unchanged.
//
// It is the only package that imports all the others. Every request goes
// through one path (ServeHTTP): route (request.Parse gives its Info, by
// kube-apiserver's request-info rules), authenticate (Options.
// Authenticator: its User, or 401), impersonate (the Impersonate-*
// headers, each authorized with the impersonate verb), authorize
// (Options.Authorizer, or 403 with kube's message), then the handler the
// route table names (routes.go): decode, the verb, encode. Every route
// asks the authorizer, discovery, OpenAPI, health and the reviews
// included; routes_test.go proves it from the table itself. Every write — create,
// update, each patch type, apply, status, scale, delete,
// deletecollection, and the writes the registry makes itself (the garbage
// collector's, namespace emptying and finalization) — then goes through
// one write pipeline (pipeline.go), in one order: mutating admission
// (Options.Admission, package registry/admission), strategy (defaults,
// prepare), validation (schema, CEL, strategy), managedFields, validating
// admission, storage (unless dry run). Kind-specific behaviour is the
// kind's Strategy, hooks for create, update and delete (the built-in
// namespaces are one, namespace.go), never a branch in a verb. A hook
// stamps times on the registry's clock, Options.Now, read with Now(ctx)
// (clock.go; carried in the request's context with its warnings, so
// reading it allocates nothing). Errors
// stay typed Go errors until the edge, where they become Status objects
// in one place (status.go); a StatusError unwraps to the error it was
// made from. The same path serves Go callers in-process through Client.
//
// Storage keeps each object's JSON without its resourceVersion; JSON
// responses splice the revision into the stored bytes
// (registry/internal/jsonobj). A response takes the representation the
// client negotiates (registry/internal/negotiate): JSON, YAML, protobuf
// for resources with a message (Resource.Protobuf), or CBOR; the objects
// themselves, a meta.k8s.io Table, or their PartialObjectMetadata; what
// cannot be had answers 406 in kube's words (negotiate.go: go-restful's
// route check first for built-in kinds, then kube's negotiation). Every
// encoding of a stored state, and every watch event's frame, is computed
// once and shared through the state's storage.Memo (encode.go), so lists
// are assembled from cached item encodings and a thousand watchers cost
// one encoding per format.
//
// The stages with no need of the registry's types live in packages under
// registry/internal, each with one job: negotiate (the representation of
// a response), jsonobj (the JSON forms of an object), gojson (a built-in
// kind's body checked against its Go types, in encoding/json's words),
// stream (watch-event framing and batching), table (Table cells and
// column paths), deleteopts (DeleteOptions), openapi and discovery (the documents), gc
// (the garbage collector, through a small interface) and inproc (the
// in-process RoundTripper of Transport). None imports registry. The
// stages users implement or call are exported from small packages:
// request (a request's Info and User), authn (authenticators: tokens,
// client certificates, front proxy, anonymous), authz (the Authorizer,
// unions, allow-all) with authz/rbac (kube's RBAC, fed by the registry
// from the stored roles and bindings, rbac.go) and admission (the
// admission hooks and their chain) with admission/webhook (admission
// webhooks, fed by the registry from the stored webhook configurations,
// webhooks.go, and called after the chain's hooks). The review resources
// (SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview,
// LocalSubjectAccessReview, SelfSubjectReview, TokenReview) answer from
// the same authenticator and authorizer (reviews.go).
//
// The table of served resources changes while serving (restable.go):
// Register, Replace and Unregister publish a new immutable table behind
// an atomic pointer (copy-on-write), which every request reads without a
// lock; discovery, aggregated discovery and OpenAPI v2/v3 are built once
// per table, and per group version only where a change touched it, and
// served with kube's ETags and caching headers (openapi.go, discovery.go). A
// replaced or removed resource's watches end (a second later, as kube's).
// apiextensions.k8s.io/v1 CustomResourceDefinitions are served as a
// resource (apiextensions.go, kube's validation in
// apiextensions_validate.go): the CRD feed (crd_feed.go), kube's naming,
// establishing and finalizer controllers as one watch, serves each CRD's
// kinds through that table before the CRD's write returns. The versions
// of a kind share one storage prefix; with Resource.StorageVersion set,
// objects are stored at that version and converted on every read, write,
// list and watch (convert.go: None, or a ConversionReview webhook,
// conversion_webhook.go), each stored state once per version; with
// Resource.StorageGroup, the kind shares another group's prefix and
// storage version too, as kube's events.k8s.io Events are core Events.
// The field manager compares a managedFields entry of another version of
// the group in that version, the objects converted the same way
// (ops.go's converter, patch.ConvertFunc), a CRD's versions listed but
// not served included (crd.go's unservedVersions, never registered);
// another group's entries are dropped, as kube drops them.
package registry
