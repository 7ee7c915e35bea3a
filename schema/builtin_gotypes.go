package schema

// The Go types the mirrors stand for, as reflect prints them in
// encoding/json's decode errors ("json: cannot unmarshal number into Go
// struct field ConfigMap.data of type string"): For records them as each
// object node's GoType.

func (objectMeta) GoTypeName() string                     { return "v1.ObjectMeta" }
func (ownerReference) GoTypeName() string                 { return "v1.OwnerReference" }
func (managedFieldEntry) GoTypeName() string              { return "v1.ManagedFieldsEntry" }
func (namespace) GoTypeName() string                      { return "v1.Namespace" }
func (namespaceCondition) GoTypeName() string             { return "v1.NamespaceCondition" }
func (configMap) GoTypeName() string                      { return "v1.ConfigMap" }
func (policyRule) GoTypeName() string                     { return "v1.PolicyRule" }
func (subject) GoTypeName() string                        { return "v1.Subject" }
func (roleRef) GoTypeName() string                        { return "v1.RoleRef" }
func (labelSelectorRequirement) GoTypeName() string       { return "v1.LabelSelectorRequirement" }
func (labelSelector) GoTypeName() string                  { return "v1.LabelSelector" }
func (role) GoTypeName() string                           { return "v1.Role" }
func (clusterRole) GoTypeName() string                    { return "v1.ClusterRole" }
func (roleBinding) GoTypeName() string                    { return "v1.RoleBinding" }
func (webhookRule) GoTypeName() string                    { return "v1.RuleWithOperations" }
func (webhookClientConfig) GoTypeName() string            { return "v1.WebhookClientConfig" }
func (matchCondition) GoTypeName() string                 { return "v1.MatchCondition" }
func (validatingWebhook) GoTypeName() string              { return "v1.ValidatingWebhook" }
func (mutatingWebhook) GoTypeName() string                { return "v1.MutatingWebhook" }
func (validatingWebhookConfiguration) GoTypeName() string { return "v1.ValidatingWebhookConfiguration" }
func (mutatingWebhookConfiguration) GoTypeName() string   { return "v1.MutatingWebhookConfiguration" }
func (resourceAttributes) GoTypeName() string             { return "v1.ResourceAttributes" }
func (nonResourceAttributes) GoTypeName() string          { return "v1.NonResourceAttributes" }
func (subjectAccessReviewStatus) GoTypeName() string      { return "v1.SubjectAccessReviewStatus" }
func (subjectAccessReview) GoTypeName() string            { return "v1.SubjectAccessReview" }
func (selfSubjectAccessReview) GoTypeName() string        { return "v1.SelfSubjectAccessReview" }
func (selfSubjectRulesReview) GoTypeName() string         { return "v1.SelfSubjectRulesReview" }
func (userInfo) GoTypeName() string                       { return "v1.UserInfo" }
func (selfSubjectReview) GoTypeName() string              { return "v1.SelfSubjectReview" }
func (tokenReview) GoTypeName() string                    { return "v1.TokenReview" }
