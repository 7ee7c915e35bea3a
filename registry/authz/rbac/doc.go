// Package rbac is kube's RBAC authorizer (rbac.authorization.k8s.io/v1):
// Roles and ClusterRoles of PolicyRules, granted to users, groups and
// service accounts by RoleBindings and ClusterRoleBindings, decided as
// kube-apiserver decides them, with the checks kube makes when those
// objects are written (escalate, bind, Covers), ClusterRole aggregation
// and kube's default roles.
//
// The embedding registry feeds an Authorizer the objects as they change
// (SetRole, SetClusterRoleBinding, …, or SetJSON with the stored JSON)
// and puts it in its authorizer chain after authz.Privileged
// (system:masters); it is also the chain's authz.RuleResolver for
// SelfSubjectRulesReview.
//
// Invariants:
//
//   - A rule allows a resource request when its verbs, API groups,
//     resources and resource names each match ("*" matches any verb,
//     group or resource; a subresource is matched by "pods/status" or
//     "*/status", never by "pods"; no resource names means all names),
//     and a non-resource request when its verbs and URLs match ("*", the
//     path, or a prefix ending in "*": "/apis/*" matches "/apis/g", not
//     "/apis"). RBAC only allows: there are no deny rules, and a request
//     no rule allows gets NoOpinion.
//   - For a request in namespace N, the rules that count are those of the
//     ClusterRoleBindings that name the user, then of the RoleBindings in
//     N that name it (a RoleBinding to a ClusterRole grants its rules in
//     N only). A request with no namespace (cluster-scoped resources,
//     non-resource URLs, and lists across namespaces) counts only
//     ClusterRoleBindings.
//   - A subject names a user when it is the User of its name, a Group it
//     is a member of, or the ServiceAccount it authenticates as
//     (system:serviceaccount:NS:NAME; NS defaults, in a RoleBinding, to
//     the binding's namespace; a ClusterRoleBinding's ServiceAccount
//     with no namespace names no one). Other kinds name no one.
//   - Decisions are indexed by subject: the Authorizer keeps, per user
//     name and per group (and per namespace for RoleBindings), the
//     bindings that name it, so a decision looks up 1 + len(groups) keys
//     (twice with a namespace) and reads only those bindings' roles,
//     however many other bindings there are. A binding is visited once,
//     through the first of its subjects that names the user, as kube
//     visits it. Decisions allocate nothing, except the reason of a
//     NoOpinion when a binding names a missing role.
//   - Reads take no lock: the roles and indexes are one immutable state
//     behind an atomic pointer. A write (serialized with the others)
//     publishes a new state in which only the shards of the maps it
//     changed are copied (copy-on-write); a read sees each write whole or
//     not at all, and a write that returned is seen by every later read.
//   - A binding whose role is missing grants nothing; the NoOpinion's
//     reason then names the role as kube's does:
//     RBAC: clusterrole.rbac.authorization.k8s.io "x" not found.
//   - Writes of roles and bindings are checked as kube's registry checks
//     them (CheckRoleWrite, CheckBindingWrite): the author must be in
//     system:masters, be allowed the escalate (roles) or bind (bindings)
//     verb on the role, or already hold every rule granted (Covers) in
//     the namespace written; setting an aggregationRule needs
//     FullAuthority.
//
// Worked example, with Bootstrap's defaults set and
//
//	ClusterRole  pod-reader   get, list pods ("")
//	Role         a/cm-editor  * configmaps ("")
//	RoleBinding  a/read       ClusterRole pod-reader → User alice, ServiceAccount ci (ns a)
//	RoleBinding  a/edit       Role cm-editor → Group dev
//	ClusterRoleBinding gone   ClusterRole missing → Group dev
//
// decisions are:
//
//	alice (system:authenticated)    list pods in a     Allow: RBAC: allowed by RoleBinding "read/a" of ClusterRole "pod-reader" to User "alice"
//	alice                           list pods in b     NoOpinion, "" (the binding is a's)
//	alice                           list pods (all)    NoOpinion, "" (only ClusterRoleBindings count)
//	system:serviceaccount:a:ci      get pods/x in a    Allow (the ServiceAccount's namespace is the binding's)
//	alice                           get pods/log in a  NoOpinion (pods does not cover pods/log)
//	bob (dev)                       delete configmaps in a   Allow, via a/edit
//	bob (dev)                       get pods in a      NoOpinion: RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found
//	anyone (system:unauthenticated) get /healthz       Allow, via system:public-info-viewer
//
// and alice, who holds get and list on pods in a, may create in a a Role
// granting list pods, but not one granting delete pods:
//
//	roles.rbac.authorization.k8s.io "r" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
//	{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}
package rbac
