// Package conformance tests kapi from the outside. It starts the example
// server (github.com/kapi-dev/kapi/examples/apiserver/server) in-process,
// one fresh server per test, and drives it with unmodified Kubernetes
// clients in their default configuration: client-go discovery and
// RESTMapper, the dynamic, typed (protobuf), metadata and scale clients, the
// dynamic client with the CBOR feature gates on, shared informers with the
// WatchList client feature off and on, controller-runtime's client and
// manager, and kubectl built from k8s.io/kubectl/pkg/cmd. The expected
// answers are kube-apiserver's; test
// comments name the REQUIREMENTS.md rows they cover.
//
// # The differential corpus
//
// TestDiff (diff_test.go) runs the request scripts of testdata/diff/*.yaml
// against kapi's example server and the real kube-apiserver (both with the
// token file refTokens, RBAC, and the widgets and gadgets CRDs), each case
// in a namespace of its own, and compares the answers once normalised
// (uids and resourceVersions by order of appearance, timestamps, generated
// names, continue tokens, each server's own URL, Table Age cells;
// managedFields in one order; a YAML body as its document and as its text
// with quoted numbers masked): status code, content type, Warning headers
// and body, a Status's message included. With -v it logs the tally:
// cases, identical, marked, open.
//
// The reference runs with the CBORServingAndStorage feature gate on
// (kubeapiserver_test.go): it is alpha and off by default in v1.37, but
// kapi serves CBOR (CODEC-4), and the kube that serves it too is the one
// whose 406 and 415 lists, patch types and watch types kapi must match.
//
// To add a case, append to the cases of a file of testdata/diff (or add
// a file):
//
//	cases:
//	- name: configmap with a label
//	  steps:
//	  - method: POST
//	    path: /api/v1/namespaces/{ns}/configmaps
//	    body: {metadata: {name: a, labels: {x: "1"}}}
//	    save: {rv: metadata.resourceVersion}  # {rv} in later steps
//	    kube: 201                             # what kube answers
//	  - method: GET
//	    path: /api/v1/namespaces/{ns}/configmaps/a
//	    user: alice                           # a refTokens user; admin by default
//
// A body written as YAML structure is sent as JSON; a string is sent as
// it is (with headers: {Content-Type: ...} for other formats). A family
// of cases is one case with `each:` (a list of maps) and {key}
// placeholders in its name and steps. A step may compare only "status"
// or the "code" (compare:), and `retry: true` re-sends a read kube may
// serve from its watch cache before it has seen the case's writes.
//
// Where kapi deliberately answers otherwise — beyond kube, a kube 500 on
// bad input, behaviour of kube's controllers — the case says why
// (differs: ...) and records kapi's own answer on the steps that differ
// (kapi: {code: 400, reason: BadRequest, message: ...}), which is then
// checked; the mark must stay needed. Differences found and not yet
// closed are listed in testdata/diff/open.yaml (case: what differs),
// which KAPI_DIFF_WRITE_OPEN=1 go test -run TestDiff rewrites; a listed
// case fails once it answers as kube does, so the list stays true.
// KAPI_DIFF_CASE=substring runs the matching cases alone, and
// KAPI_COMPARE_LOG=1 logs both answers of every step.
//
// It is its own Go module so that kapi's users never get k8s.io/* in their
// module graph. The package holds only tests; run them with:
//
//	cd conformance && go test -race ./...
package conformance
