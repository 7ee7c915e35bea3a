package schema

// Mirrors of k8s.io/api's admissionregistration/v1 webhook configuration
// types (see builtin.go). kube's defaults (SetDefaults_MutatingWebhook
// and the others) are default tags, so a stored configuration has them
// all. Every field is optional here: what kube requires (name,
// clientConfig, sideEffects, admissionReviewVersions, the rules' lists)
// its validation reports, with its own messages
// (github.com/kapi-dev/kapi/registry/admission/webhook.Validate).

type webhookRule struct {
	Operations  []string `json:"operations,omitempty" listType:"atomic"`
	APIGroups   []string `json:"apiGroups,omitempty" listType:"atomic"`
	APIVersions []string `json:"apiVersions,omitempty" listType:"atomic"`
	Resources   []string `json:"resources,omitempty" listType:"atomic"`
	Scope       *string  `json:"scope,omitempty" default:"*"`
}

type webhookClientConfig struct {
	URL     *string `json:"url,omitempty"`
	Service *struct {
		Namespace string  `json:"namespace,omitempty"`
		Name      string  `json:"name,omitempty"`
		Path      *string `json:"path,omitempty"`
		Port      *int32  `json:"port,omitempty" default:"443"`
	} `json:"service,omitempty"`
	CABundle []byte `json:"caBundle,omitempty"`
}

type matchCondition struct {
	Name       string `json:"name"`
	Expression string `json:"expression,omitempty"`
}

type validatingWebhook struct {
	Name                    string              `json:"name,omitempty"`
	ClientConfig            webhookClientConfig `json:"clientConfig,omitzero"`
	Rules                   []webhookRule       `json:"rules,omitempty" listType:"atomic"`
	FailurePolicy           *string             `json:"failurePolicy,omitempty" default:"Fail"`
	MatchPolicy             *string             `json:"matchPolicy,omitempty" default:"Equivalent"`
	NamespaceSelector       *labelSelector      `json:"namespaceSelector,omitempty" default:"{}" mapType:"atomic"`
	ObjectSelector          *labelSelector      `json:"objectSelector,omitempty" default:"{}" mapType:"atomic"`
	SideEffects             *string             `json:"sideEffects,omitempty"`
	TimeoutSeconds          *int32              `json:"timeoutSeconds,omitempty" default:"10"`
	AdmissionReviewVersions []string            `json:"admissionReviewVersions,omitempty" listType:"atomic"`
	MatchConditions         []matchCondition    `json:"matchConditions,omitempty" listType:"map" listMapKeys:"name" patchStrategy:"merge" patchMergeKey:"name"`
}

type mutatingWebhook struct {
	validatingWebhook  `json:",inline"`
	ReinvocationPolicy *string `json:"reinvocationPolicy,omitempty" default:"Never"`
}

type validatingWebhookConfiguration struct {
	typeMeta `json:",inline"`
	Metadata objectMeta          `json:"metadata,omitempty"`
	Webhooks []validatingWebhook `json:"webhooks,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}

type mutatingWebhookConfiguration struct {
	typeMeta `json:",inline"`
	Metadata objectMeta        `json:"metadata,omitempty"`
	Webhooks []mutatingWebhook `json:"webhooks,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}

// ValidatingWebhookConfiguration is the schema of an
// admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration:
// metadata and webhooks (merged by name), each with name, clientConfig
// (url, service — namespace, name, path, port defaulting to 443 — and
// caBundle), rules (an atomic list of operations, apiGroups, apiVersions
// and resources, each atomic, and scope defaulting to "*"),
// failurePolicy (default Fail), matchPolicy (default Equivalent),
// namespaceSelector and objectSelector (default {}), sideEffects,
// timeoutSeconds (default 10), admissionReviewVersions (atomic) and
// matchConditions (a map list keyed by name of name and expression).
func ValidatingWebhookConfiguration() *Schema {
	return described(mustFor(validatingWebhookConfiguration{}), "ValidatingWebhookConfiguration describes the configuration of an admission webhook that accepts or rejects an object without changing it.")
}

// MutatingWebhookConfiguration is the schema of an
// admissionregistration.k8s.io/v1 MutatingWebhookConfiguration: the
// fields of [ValidatingWebhookConfiguration], and each webhook's
// reinvocationPolicy (default Never).
func MutatingWebhookConfiguration() *Schema {
	return described(mustFor(mutatingWebhookConfiguration{}), "MutatingWebhookConfiguration describes the configuration of an admission webhook that accepts or rejects and may change an object.")
}
