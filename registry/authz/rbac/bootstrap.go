package rbac

import "github.com/kapi-dev/kapi/registry/request"

// The metadata kube gives every bootstrap object: the label marks them as
// RBAC defaults, the annotation lets the server reconcile them at
// start-up (set it to "false" to keep an edited default as it is).
const (
	BootstrappingLabel = "kubernetes.io/bootstrapping"
	BootstrappingValue = "rbac-defaults"
)

// The labels by which the default roles gather others' rules: a
// ClusterRole with aggregate-to-view "true" adds its rules to view (and
// so to edit and admin, which aggregate view and edit in turn).
const (
	AggregateToAdmin = "rbac.authorization.k8s.io/aggregate-to-admin"
	AggregateToEdit  = "rbac.authorization.k8s.io/aggregate-to-edit"
	AggregateToView  = "rbac.authorization.k8s.io/aggregate-to-view"
)

var (
	readWrite = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
)

// Bootstrap returns kube-apiserver's default ClusterRoles and
// ClusterRoleBindings that a usable server needs, as kube's
// bootstrappolicy defines them (rules sorted as its rule builder sorts
// them, with its label and annotation):
//
//	cluster-admin              * on everything; bound to group system:masters
//	system:discovery           get /api, /apis, /openapi, /version, health; bound to system:authenticated
//	system:basic-user          create self-subject access, rules and reviews; bound to system:authenticated
//	system:public-info-viewer  get /healthz /livez /readyz /version /version/;
//	                           bound to system:authenticated and system:unauthenticated
//	admin, edit, view          aggregated (admin ⊇ edit ⊇ view, by the aggregate-to labels)
//	system:aggregate-to-admin  roles and rolebindings, localsubjectaccessreviews: into admin
//
// kube's system:aggregate-to-edit and system:aggregate-to-view grant its
// built-in workload kinds (pods, deployments, …), which kapi does not
// serve, so they are left out: edit and view hold the rules of the
// ClusterRoles an embedder (or a CRD's author) labels aggregate-to-edit
// or aggregate-to-view, and admin those and system:aggregate-to-admin's.
// Like kube's, admin, edit and view have no rules until the aggregation
// controller runs (Reaggregate). kube's roles for its own components
// (nodes, the scheduler, controllers) are left out too.
func Bootstrap() (clusterRoles []ClusterRole, bindings []ClusterRoleBinding) {
	aggregate := func(label string) *AggregationRule {
		return &AggregationRule{ClusterRoleSelectors: []LabelSelector{{MatchLabels: map[string]string{label: "true"}}}}
	}
	clusterRoles = []ClusterRole{
		{Metadata: ObjectMeta{Name: "cluster-admin"}, Rules: []PolicyRule{
			{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
		}},
		{Metadata: ObjectMeta{Name: "system:discovery"}, Rules: []PolicyRule{
			{Verbs: []string{"get"}, NonResourceURLs: []string{
				"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/",
			}},
		}},
		{Metadata: ObjectMeta{Name: "system:basic-user"}, Rules: []PolicyRule{
			{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}},
			{Verbs: []string{"create"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}},
		}},
		{Metadata: ObjectMeta{Name: "system:public-info-viewer"}, Rules: []PolicyRule{
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}},
		}},
		{Metadata: ObjectMeta{Name: "admin"}, AggregationRule: aggregate(AggregateToAdmin)},
		{Metadata: ObjectMeta{Name: "edit", Labels: map[string]string{AggregateToAdmin: "true"}}, AggregationRule: aggregate(AggregateToEdit)},
		{Metadata: ObjectMeta{Name: "view", Labels: map[string]string{AggregateToEdit: "true"}}, AggregationRule: aggregate(AggregateToView)},
		{Metadata: ObjectMeta{Name: "system:aggregate-to-admin", Labels: map[string]string{AggregateToAdmin: "true"}}, Rules: []PolicyRule{
			{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"localsubjectaccessreviews"}},
			{Verbs: readWrite, APIGroups: []string{GroupName}, Resources: []string{"rolebindings", "roles"}},
		}},
	}
	bind := func(role string, groups ...string) ClusterRoleBinding {
		b := ClusterRoleBinding{Metadata: ObjectMeta{Name: role}, RoleRef: RoleRef{APIGroup: GroupName, Kind: "ClusterRole", Name: role}}
		for _, g := range groups {
			b.Subjects = append(b.Subjects, Subject{APIGroup: GroupName, Kind: GroupKind, Name: g})
		}
		return b
	}
	bindings = []ClusterRoleBinding{
		bind("cluster-admin", request.SystemPrivileged),
		bind("system:discovery", request.AllAuthenticated),
		bind("system:basic-user", request.AllAuthenticated),
		bind("system:public-info-viewer", request.AllAuthenticated, request.AllUnauthenticated),
	}
	for i := range clusterRoles {
		defaultMetadata(&clusterRoles[i].Metadata)
	}
	for i := range bindings {
		defaultMetadata(&bindings[i].Metadata)
	}
	return clusterRoles, bindings
}

func defaultMetadata(m *ObjectMeta) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[BootstrappingLabel] = BootstrappingValue
	m.Annotations = map[string]string{AutoUpdateAnnotationKey: "true"}
}
