// Package webhook calls admission webhooks: it is kube-apiserver's
// MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins
// (k8s.io/apiserver/pkg/admission/plugin/webhook) as an
// admission.Mutator and admission.Validator.
//
// A Dispatcher holds the live set of webhook configurations
// (admissionregistration.k8s.io/v1 MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration, in their JSON form); the registry feeds
// it every stored configuration as it changes. For each write it selects
// the webhooks kube would call — rules (operations, groups, versions,
// resources with subresources and wildcards, scope), namespaceSelector
// (Options.NamespaceLabels), objectSelector, matchPolicy (Equivalent
// through Options.Equivalents: such a webhook is sent, and its
// matchConditions see, the object converted by Options.Convert, and its
// patch is converted back), matchConditions (Options.Conditions, whose
// authorizer variable asks Options.Authorizer) —
// and sends each an admission.k8s.io AdmissionReview over HTTPS: to the
// configuration's URL or to the service Options.ResolveService resolves,
// trusting the caBundle. Mutating webhooks are called in order
// (configurations by name, webhooks in their order) and their JSONPatch
// applied to the object, which the registry then validates; when one
// changes the object, the registry runs its Go mutating hooks again and
// a second round calls the webhooks with reinvocationPolicy IfNeeded that
// are due (Reinvocation, kube's reinvocation). Validating webhooks are
// called concurrently. Answers are kube's:
//
//	denial:        <code> admission webhook "x" denied the request: <message>
//	failed call:   500 Internal error occurred: failed calling webhook "x": <why>
//	               (failurePolicy Fail; Ignore admits)
//	dry run:       400 admission webhook "x" does not support dry run
//	               (sideEffects other than None and NoneOnDryRun)
//
// A failed call is a connection that fails, a timeout (timeoutSeconds),
// an answer that is not an AdmissionReview for the request's UID, that
// is larger than Options.MaxResponseBytes, or that carries a patch a
// validating webhook may not send; a patch that does not apply is kube's
// 500 whatever the failure policy.
//
// Concurrency: configurations are replaced whole (Set, Delete) and read
// without locks by calls; a call sees the set of one moment. The webhooks
// of one configuration that share a CA bundle share one HTTP/2 client,
// whose idle connections are closed when the configuration is replaced
// or deleted, and by Close. Every call is bounded by its webhook's
// timeout and returns only when its request is over: no goroutine
// outlives the write that made it.
package webhook
