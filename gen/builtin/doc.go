// Command builtin generates kapi's built-in kinds from Kubernetes' own
// sources: the protobuf files (codec/protobuf/proto/k8s.io/api/...) from
// k8s.io/api's Go types, and the builtin package's schemas
// (builtin/schemas.json.gz) and kinds table (builtin/zz_generated_kinds.go)
// from the OpenAPI v3 and discovery documents k8s.io/kubernetes commits.
//
// It is a module of its own so that kapi's core module never imports
// k8s.io/*: the core embeds what this writes. Run it with `make generate`
// (then `make proto`); its test fails when the committed output is stale.
package main
