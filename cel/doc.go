// Package cel evaluates the x-kubernetes-validations (CEL) rules of a kapi
// schema with kube's own CRD validator
// (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel), so rule
// semantics, library functions, cost limits and messages are kube's.
//
// It lives in a module of its own so that kapi's core module does not pull
// in k8s.io/* and cel-go: plug Compile into the registry's hook,
//
//	reg := registry.New(registry.Options{Storage: store, CEL: cel.Compile})
//
// and the registry refuses schemas whose rules do not compile, and answers
// 422 Invalid with one cause per failed rule.
//
// CompileMatchConditions does the same for admission webhooks'
// matchConditions, with kube's own matcher
// (k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions); their
// authorizer variable asks the registry's authorizer as the request's
// user:
//
//	registry.Options{…, WebhookConditions: cel.CompileMatchConditions}
package cel
