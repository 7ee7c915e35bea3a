// Command builtin generates kapi's built-in kinds from Kubernetes' own
// sources: the protobuf files (codec/protobuf/proto/k8s.io/api/...) from
// k8s.io/api's Go types, and the builtin package's schemas
// (builtin/schemas.json.gz) and kinds table (builtin/zz_generated_kinds.go)
// from the OpenAPI v3 and discovery documents k8s.io/kubernetes commits;
// and the field table of kube's internal types its messages print
// (builtin/zz_generated_gostruct.go) with a test table of kube's own
// rendering of sample values (builtin/zz_generated_gostruct_test.go).
//
// It is a module of its own so that kapi's core module never imports
// k8s.io/*: the core embeds what this writes. Run it with `make generate`
// (then `make proto`); its test fails when the committed output is stale.
package main
