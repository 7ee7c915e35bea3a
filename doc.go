// Package kapi serves a Kubernetes-style resource API from inside any Go
// program.
//
// kapi is a set of small packages, each with one job:
//
//   - rv: resourceVersion values, read semantics, list-option validation and
//     continue tokens;
//   - watch: change events and the non-blocking fan-out broadcaster;
//   - storage: the storage Interface every backend implements, with
//     storage/memory (the MVCC in-memory default) and storage/storagetest
//     (the conformance suite every backend passes); the etcd backend
//     (storage/etcd3) and the durable single-process one on pebble
//     (storage/durable) are modules of their own;
//   - registry: resource definitions turned into an http.Handler that real
//     Kubernetes clients (client-go, kubectl) use unchanged, with the
//     request pipeline's stages a program implements or calls in packages
//     of their own: registry/request (a request's Info and User),
//     registry/authn (authenticators), registry/authz and
//     registry/authz/rbac (authorizers, kube's RBAC) and
//     registry/admission (admission hooks) with registry/admission/webhook
//     (admission webhooks);
//   - serve: a registry (any http.Handler) served as kube-apiserver serves
//     its API: TLS, HTTP/2, in-flight limits, timeouts, health checks,
//     graceful shutdown, request logs, a hook for metrics (the module
//     github.com/kapi-dev/kapi/metrics exports them for Prometheus);
//   - builtin: Kubernetes' built-in kinds (pods, deployments, services,
//     secrets, jobs, leases, events, …) with kube's schemas, defaults,
//     protobuf messages and columns, registered on a registry (their data
//     generated from k8s.io/api by the separate module gen/builtin).
//
// Controller authors test against kapi with the separate module
// github.com/kapi-dev/kapi/envtest, a drop-in for controller-runtime's
// envtest.
//
// This package itself holds no code; import the packages you need.
package kapi
