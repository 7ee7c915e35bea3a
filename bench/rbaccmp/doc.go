// Package rbaccmp sets kapi's RBAC authorizer (registry/authz/rbac) beside
// kube's own (k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac, over
// client-go listers as kube-apiserver runs it) on the same roles and
// bindings: a test that they decide alike, and the benchmarks side by
// side. BENCHMARKS.md ("RBAC decisions beside kube's RBAC authorizer")
// holds the figures and the commands.
//
// The same objects reach both as JSON: kapi's types marshal with
// apiVersion and kind, and decode into k8s.io/api/rbac/v1 types.
package rbaccmp
