package rbac

// The types below mirror rbac.authorization.k8s.io/v1 with the fields the
// authorizer reads; each decodes with encoding/json from the object's JSON
// as kube stores it (unknown fields, such as metadata.uid, are ignored).

// GroupName is the RBAC API group.
const GroupName = "rbac.authorization.k8s.io"

// The wildcards of a PolicyRule, and the subject kinds.
const (
	APIGroupAll    = "*"
	ResourceAll    = "*"
	VerbAll        = "*"
	NonResourceAll = "*"

	UserKind           = "User"
	GroupKind          = "Group"
	ServiceAccountKind = "ServiceAccount"
)

// ServiceAccountUsernamePrefix begins the user name of a service account:
// system:serviceaccount:NAMESPACE:NAME.
const ServiceAccountUsernamePrefix = "system:serviceaccount:"

// AutoUpdateAnnotationKey marks a bootstrap object kube-apiserver
// reconciles at start-up unless it is set to "false".
const AutoUpdateAnnotationKey = "rbac.authorization.kubernetes.io/autoupdate"

// ObjectMeta is the part of an object's metadata RBAC reads.
type ObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PolicyRule is rbac/v1 PolicyRule: the verbs allowed on the resources of
// the API groups (optionally only the named ones), or on non-resource URLs.
type PolicyRule struct {
	Verbs           []string `json:"verbs"`
	APIGroups       []string `json:"apiGroups,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	ResourceNames   []string `json:"resourceNames,omitempty"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// Subject is who a binding grants its role to: a User, a Group, or a
// ServiceAccount (whose Namespace defaults, in a RoleBinding, to the
// binding's).
type Subject struct {
	Kind      string `json:"kind"`
	APIGroup  string `json:"apiGroup,omitempty"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// RoleRef names the role a binding grants: a Role in the binding's
// namespace, or a ClusterRole.
type RoleRef struct {
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// Role is a namespaced set of rules.
type Role struct {
	Metadata ObjectMeta   `json:"metadata"`
	Rules    []PolicyRule `json:"rules"`
}

// ClusterRole is a cluster-wide set of rules; with an AggregationRule,
// its rules are the union of the rules of the ClusterRoles the selectors
// match (AggregatedRules), written into Rules by the aggregation
// controller.
type ClusterRole struct {
	Metadata        ObjectMeta       `json:"metadata"`
	Rules           []PolicyRule     `json:"rules"`
	AggregationRule *AggregationRule `json:"aggregationRule,omitempty"`
}

// AggregationRule selects the ClusterRoles whose rules a ClusterRole
// aggregates: those any of the selectors matches.
type AggregationRule struct {
	ClusterRoleSelectors []LabelSelector `json:"clusterRoleSelectors,omitempty"`
}

// RoleBinding grants a Role, or a ClusterRole's rules within its
// namespace, to its subjects.
type RoleBinding struct {
	Metadata ObjectMeta `json:"metadata"`
	Subjects []Subject  `json:"subjects,omitempty"`
	RoleRef  RoleRef    `json:"roleRef"`
}

// ClusterRoleBinding grants a ClusterRole in every namespace and on
// cluster-scoped resources and non-resource URLs to its subjects.
type ClusterRoleBinding struct {
	Metadata ObjectMeta `json:"metadata"`
	Subjects []Subject  `json:"subjects,omitempty"`
	RoleRef  RoleRef    `json:"roleRef"`
}

// HasAggregationRule reports whether the role aggregates others (it has
// at least one selector), as kube's registry decides it.
func (c *ClusterRole) HasAggregationRule() bool {
	return c.AggregationRule != nil && len(c.AggregationRule.ClusterRoleSelectors) > 0
}
