package schema

// Mirrors of k8s.io/api's rbac/v1, authorization/v1 and authentication/v1
// types (see builtin.go). Required fields are those kube's published OpenAPI
// marks required (+required, or no omitempty and no +optional), so the json
// tags here differ from k8s.io/api's where the two disagree: Role.rules has
// no omitempty but is optional, TokenReviewSpec.token has omitempty but is
// required.

type policyRule struct {
	Verbs           []string `json:"verbs" listType:"atomic"`
	APIGroups       []string `json:"apiGroups,omitempty" listType:"atomic"`
	Resources       []string `json:"resources,omitempty" listType:"atomic"`
	ResourceNames   []string `json:"resourceNames,omitempty" listType:"atomic"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty" listType:"atomic"`
}

type subject struct {
	Kind      string `json:"kind"`
	APIGroup  string `json:"apiGroup,omitempty"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type roleRef struct {
	APIGroup string `json:"apiGroup,omitempty"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

type labelSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty" listType:"atomic"`
}

type labelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty"`
	MatchExpressions []labelSelectorRequirement `json:"matchExpressions,omitempty" listType:"atomic"`
}

type role struct {
	typeMeta `json:",inline"`
	Metadata objectMeta   `json:"metadata,omitempty"`
	Rules    []policyRule `json:"rules,omitempty" listType:"atomic"`
}

type clusterRole struct {
	typeMeta        `json:",inline"`
	Metadata        objectMeta   `json:"metadata,omitempty"`
	Rules           []policyRule `json:"rules,omitempty" listType:"atomic"`
	AggregationRule *struct {
		ClusterRoleSelectors []labelSelector `json:"clusterRoleSelectors,omitempty" listType:"atomic" mapType:"atomic"`
	} `json:"aggregationRule,omitempty" goType:"v1.AggregationRule"`
}

type roleBinding struct {
	typeMeta `json:",inline"`
	Metadata objectMeta `json:"metadata,omitempty"`
	Subjects []subject  `json:"subjects,omitempty" listType:"atomic" mapType:"atomic"`
	RoleRef  roleRef    `json:"roleRef" mapType:"atomic"`
}

// resourceAttributes, nonResourceAttributes, subjectAccessReviewStatus:
// authorization/v1.
type resourceAttributes struct {
	Namespace     string `json:"namespace,omitempty"`
	Verb          string `json:"verb,omitempty"`
	Group         string `json:"group,omitempty"`
	Version       string `json:"version,omitempty"`
	Resource      string `json:"resource,omitempty"`
	Subresource   string `json:"subresource,omitempty"`
	Name          string `json:"name,omitempty"`
	FieldSelector *struct {
		RawSelector  string                     `json:"rawSelector,omitempty"`
		Requirements []labelSelectorRequirement `json:"requirements,omitempty" listType:"atomic"` // meta.v1.FieldSelectorRequirement: the same shape
	} `json:"fieldSelector,omitempty"`
	LabelSelector *struct {
		RawSelector  string                     `json:"rawSelector,omitempty"`
		Requirements []labelSelectorRequirement `json:"requirements,omitempty" listType:"atomic"`
	} `json:"labelSelector,omitempty"`
}

type nonResourceAttributes struct {
	Path string `json:"path,omitempty"`
	Verb string `json:"verb,omitempty"`
}

type subjectAccessReviewStatus struct {
	Allowed         bool   `json:"allowed"`
	Denied          bool   `json:"denied,omitempty"`
	Reason          string `json:"reason,omitempty"`
	EvaluationError string `json:"evaluationError,omitempty"`
}

type subjectAccessReview struct {
	typeMeta `json:",inline"`
	Metadata objectMeta `json:"metadata,omitempty"`
	Spec     struct {
		ResourceAttributes    *resourceAttributes    `json:"resourceAttributes,omitempty"`
		NonResourceAttributes *nonResourceAttributes `json:"nonResourceAttributes,omitempty"`
		User                  string                 `json:"user,omitempty"`
		Groups                []string               `json:"groups,omitempty" listType:"atomic"`
		Extra                 map[string][]string    `json:"extra,omitempty"`
		UID                   string                 `json:"uid,omitempty"`
	} `json:"spec"`
	Status subjectAccessReviewStatus `json:"status,omitempty"`
}

type selfSubjectAccessReview struct {
	typeMeta `json:",inline"`
	Metadata objectMeta `json:"metadata,omitempty"`
	Spec     struct {
		ResourceAttributes    *resourceAttributes    `json:"resourceAttributes,omitempty"`
		NonResourceAttributes *nonResourceAttributes `json:"nonResourceAttributes,omitempty"`
	} `json:"spec"`
	Status subjectAccessReviewStatus `json:"status,omitempty"`
}

type selfSubjectRulesReview struct {
	typeMeta `json:",inline"`
	Metadata objectMeta `json:"metadata,omitempty"`
	Spec     struct {
		Namespace string `json:"namespace,omitempty"`
	} `json:"spec"`
	Status struct {
		ResourceRules []struct {
			Verbs         []string `json:"verbs" listType:"atomic"`
			APIGroups     []string `json:"apiGroups,omitempty" listType:"atomic"`
			Resources     []string `json:"resources,omitempty" listType:"atomic"`
			ResourceNames []string `json:"resourceNames,omitempty" listType:"atomic"`
		} `json:"resourceRules" listType:"atomic"`
		NonResourceRules []struct {
			Verbs           []string `json:"verbs" listType:"atomic"`
			NonResourceURLs []string `json:"nonResourceURLs,omitempty" listType:"atomic"`
		} `json:"nonResourceRules" listType:"atomic"`
		Incomplete      bool   `json:"incomplete"`
		EvaluationError string `json:"evaluationError,omitempty"`
	} `json:"status,omitempty"`
}

// userInfo is authentication/v1's.
type userInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty" listType:"atomic"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

type selfSubjectReview struct {
	typeMeta `json:",inline"`
	Metadata objectMeta `json:"metadata,omitempty"`
	Status   struct {
		UserInfo userInfo `json:"userInfo,omitempty"`
	} `json:"status,omitempty"`
}

type tokenReview struct {
	typeMeta `json:",inline"`
	Metadata objectMeta `json:"metadata,omitempty"`
	Spec     struct {
		Token     string   `json:"token"`
		Audiences []string `json:"audiences,omitempty" listType:"atomic"`
	} `json:"spec"`
	Status struct {
		Authenticated bool     `json:"authenticated,omitempty"`
		User          userInfo `json:"user,omitempty"`
		Audiences     []string `json:"audiences,omitempty" listType:"atomic"`
		Error         string   `json:"error,omitempty"`
	} `json:"status,omitempty"`
}

func described(s *Schema, d string) *Schema {
	s.Description = d
	return s
}

// Role is the schema of an rbac.authorization.k8s.io/v1 Role: apiVersion,
// kind, metadata (ObjectMeta) and rules, an atomic list of PolicyRules
// (verbs, required; apiGroups, resources, resourceNames and
// nonResourceURLs; each an atomic list of strings).
func Role() *Schema {
	return described(mustFor(role{}), "Role is a namespaced set of PolicyRules, bound to subjects by a RoleBinding.")
}

// ClusterRole is the schema of an rbac.authorization.k8s.io/v1
// ClusterRole: as [Role], plus aggregationRule.clusterRoleSelectors, an
// atomic list of atomic label selectors (matchLabels; matchExpressions an
// atomic list of key, operator and values).
func ClusterRole() *Schema {
	return described(mustFor(clusterRole{}), "ClusterRole is a cluster-wide set of PolicyRules, bound by a RoleBinding or ClusterRoleBinding.")
}

// RoleBinding is the schema of an rbac.authorization.k8s.io/v1
// RoleBinding: apiVersion, kind, metadata, subjects (an atomic list of
// atomic Subjects: kind and name required, apiGroup, namespace) and roleRef
// (required, atomic: apiGroup, kind and name, the last two required).
func RoleBinding() *Schema {
	return described(mustFor(roleBinding{}), "RoleBinding grants the permissions of a Role or ClusterRole to subjects within its namespace.")
}

// ClusterRoleBinding is the schema of an rbac.authorization.k8s.io/v1
// ClusterRoleBinding: the fields of [RoleBinding].
func ClusterRoleBinding() *Schema {
	return described(mustFor(roleBinding{}), "ClusterRoleBinding grants the permissions of a ClusterRole to subjects cluster-wide.")
}

// SubjectAccessReview is the schema of an authorization.k8s.io/v1
// SubjectAccessReview: spec (required: resourceAttributes with its
// fieldSelector and labelSelector, nonResourceAttributes, user, groups, an
// atomic list, extra, a map of string lists, and uid) and status (allowed,
// required, denied, reason, evaluationError).
func SubjectAccessReview() *Schema {
	return described(mustFor(subjectAccessReview{}), "SubjectAccessReview asks whether a user or group can perform an action.")
}

// LocalSubjectAccessReview is the schema of an authorization.k8s.io/v1
// LocalSubjectAccessReview: the fields of [SubjectAccessReview].
func LocalSubjectAccessReview() *Schema {
	s := described(mustFor(subjectAccessReview{}), "LocalSubjectAccessReview asks whether a user or group can perform an action in a namespace.")
	s.GoType = "v1.LocalSubjectAccessReview"
	return s
}

// SelfSubjectAccessReview is the schema of an authorization.k8s.io/v1
// SelfSubjectAccessReview: spec (required: resourceAttributes,
// nonResourceAttributes) and the status of [SubjectAccessReview].
func SelfSubjectAccessReview() *Schema {
	return described(mustFor(selfSubjectAccessReview{}), "SelfSubjectAccessReview asks whether the current user can perform an action.")
}

// SelfSubjectRulesReview is the schema of an authorization.k8s.io/v1
// SelfSubjectRulesReview: spec.namespace (spec required) and status
// (resourceRules, nonResourceRules and incomplete required; the rule lists
// and their string lists atomic; evaluationError).
func SelfSubjectRulesReview() *Schema {
	return described(mustFor(selfSubjectRulesReview{}), "SelfSubjectRulesReview enumerates the actions the current user can perform within a namespace.")
}

// SelfSubjectReview is the schema of an authentication.k8s.io/v1
// SelfSubjectReview: status.userInfo (username, uid, groups, an atomic
// list, and extra, a map of string lists).
func SelfSubjectReview() *Schema {
	return described(mustFor(selfSubjectReview{}), "SelfSubjectReview returns the user information the server has for the current user.")
}

// TokenReview is the schema of an authentication.k8s.io/v1 TokenReview:
// spec (required: token, required, and audiences, an atomic list) and
// status (authenticated, user as in [SelfSubjectReview], audiences, error).
func TokenReview() *Schema {
	return described(mustFor(tokenReview{}), "TokenReview authenticates a token against the known users.")
}
