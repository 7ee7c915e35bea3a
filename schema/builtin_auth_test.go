package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A good and a bad object of each RBAC, authorization and authentication
// kind: the good one validates, prunes nothing and converts for
// server-side apply; the bad one fails with kube's message.
func TestBuiltinAuthValidate(t *testing.T) {
	const meta = `"apiVersion":"rbac.authorization.k8s.io/v1","metadata":{"name":"pod-reader","namespace":"team-a","labels":{"app":"web"},"creationTimestamp":"2026-11-23T07:38:04Z"}`
	tests := []struct {
		name      string
		s         *Schema
		good, bad string
		errs      []string // of bad, in order
	}{
		{"Role", Role(),
			`{"kind":"Role",` + meta + `,"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"],"resourceNames":["a"]}]}`,
			`{"kind":"Role","rules":[{"apiGroups":[""],"resources":"pods"}]}`,
			[]string{`rules[0].resources: Invalid value: "string": rules[0].resources in body must be of type array: "string"`, `rules[0].verbs: Required value`}},
		{"ClusterRole", ClusterRole(),
			`{"kind":"ClusterRole","metadata":{"name":"monitoring"},"rules":[{"verbs":["get"],"nonResourceURLs":["/metrics"]}],"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"rbac.example.com/aggregate-to-monitoring":"true"}},{"matchExpressions":[{"key":"tier","operator":"In","values":["a"]}]}]}}`,
			`{"kind":"ClusterRole","aggregationRule":{"clusterRoleSelectors":[{"matchExpressions":[{"key":"tier"}]},{"matchLabels":{"a":1}}]}}`,
			[]string{`aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Required value`, `aggregationRule.clusterRoleSelectors[1].matchLabels.a: Invalid value: "integer": aggregationRule.clusterRoleSelectors[1].matchLabels.a in body must be of type string: "integer"`}},
		{"RoleBinding", RoleBinding(),
			`{"kind":"RoleBinding",` + meta + `,"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"jane"},{"kind":"ServiceAccount","name":"default","namespace":"team-a"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"pod-reader"}}`,
			`{"kind":"RoleBinding","subjects":[{"kind":"User"}]}`,
			[]string{`subjects[0].name: Required value`, `roleRef: Required value`}},
		{"ClusterRoleBinding", ClusterRoleBinding(),
			`{"kind":"ClusterRoleBinding","metadata":{"name":"admins"},"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:masters"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"}}`,
			`{"kind":"ClusterRoleBinding","roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole"}}`,
			[]string{`roleRef.name: Required value`}},
		{"SubjectAccessReview", SubjectAccessReview(),
			`{"kind":"SubjectAccessReview","spec":{"resourceAttributes":{"namespace":"a","verb":"get","resource":"pods","fieldSelector":{"requirements":[{"key":"spec.nodeName","operator":"In","values":["n1"]}]},"labelSelector":{"rawSelector":"app=web"}},"user":"jane","groups":["dev"],"extra":{"scopes":["a","b"]},"uid":"u"},"status":{"allowed":true,"reason":"ok"}}`,
			`{"kind":"SubjectAccessReview","spec":{"groups":"dev","extra":{"scopes":"a"}},"status":{"denied":true}}`,
			[]string{`spec.extra.scopes: Invalid value: "string": spec.extra.scopes in body must be of type array: "string"`, `spec.groups: Invalid value: "string": spec.groups in body must be of type array: "string"`, `status.allowed: Required value`}},
		{"LocalSubjectAccessReview", LocalSubjectAccessReview(),
			`{"kind":"LocalSubjectAccessReview","metadata":{"namespace":"a"},"spec":{"resourceAttributes":{"namespace":"a","verb":"delete","resource":"pods"},"user":"jane"}}`,
			`{"kind":"LocalSubjectAccessReview","metadata":{"namespace":"a"}}`,
			[]string{`spec: Required value`}},
		{"SelfSubjectAccessReview", SelfSubjectAccessReview(),
			`{"kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/healthz","verb":"get"}},"status":{"allowed":false}}`,
			`{"kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":["get"]}}}`,
			[]string{`spec.resourceAttributes.verb: Invalid value: "array": spec.resourceAttributes.verb in body must be of type string: "array"`}},
		{"SelfSubjectRulesReview", SelfSubjectRulesReview(),
			`{"kind":"SelfSubjectRulesReview","spec":{"namespace":"a"},"status":{"resourceRules":[{"verbs":["create"],"apiGroups":["authorization.k8s.io"],"resources":["selfsubjectaccessreviews"]}],"nonResourceRules":[{"verbs":["get"],"nonResourceURLs":["/api"]}],"incomplete":false}}`,
			`{"kind":"SelfSubjectRulesReview","spec":{},"status":{"resourceRules":[{}]}}`,
			[]string{`status.resourceRules[0].verbs: Required value`, `status.nonResourceRules: Required value`, `status.incomplete: Required value`}},
		{"SelfSubjectReview", SelfSubjectReview(),
			`{"kind":"SelfSubjectReview","metadata":{"creationTimestamp":"2026-11-23T07:38:04Z"},"status":{"userInfo":{"username":"jane","uid":"u","groups":["dev"],"extra":{"k":["v"]}}}}`,
			`{"kind":"SelfSubjectReview","status":{"userInfo":{"groups":[1]}}}`,
			[]string{`status.userInfo.groups[0]: Invalid value: "integer": status.userInfo.groups[0] in body must be of type string: "integer"`}},
		{"TokenReview", TokenReview(),
			`{"kind":"TokenReview","spec":{"token":"eyJ.x.y","audiences":["api"]},"status":{"authenticated":true,"user":{"username":"system:serviceaccount:a:b"},"audiences":["api"]}}`,
			`{"kind":"TokenReview","spec":{"audiences":["api"]},"status":{"authenticated":"yes"}}`,
			[]string{`spec.token: Required value`, `status.authenticated: Invalid value: "string": status.authenticated in body must be of type boolean: "string"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.s.Description == "" {
				t.Error("no description")
			}
			good := decodeObj(t, tt.good)
			if pruned := tt.s.Prune(good); len(pruned) > 0 {
				t.Errorf("good object: pruned %v", pruned)
			}
			if errs := tt.s.Validate(good); len(errs) > 0 {
				t.Errorf("good object: %v", errs)
			}
			if _, err := tt.s.SMD(); err != nil {
				t.Errorf("SMD: %v", err)
			}
			var got []string
			for _, e := range tt.s.Validate(decodeObj(t, tt.bad)) {
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, tt.errs) {
				t.Errorf("bad object:\ngot  %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tt.errs, "\n     "))
			}
			roundTrip(t, tt.s)
		})
	}
}

// The list types and merge semantics kube's +listType and +structType
// markers give the RBAC kinds.
func TestBuiltinAuthListTypes(t *testing.T) {
	tests := []struct {
		s        *Schema
		path     string
		list     string // x-kubernetes-list-type of the node
		itemsMap string // x-kubernetes-map-type of its items (or itself, for an object)
	}{
		{Role(), "rules", "atomic", ""},
		{Role(), "rules.[].verbs", "atomic", ""},
		{Role(), "rules.[].apiGroups", "atomic", ""},
		{ClusterRole(), "rules.[].nonResourceURLs", "atomic", ""},
		{ClusterRole(), "aggregationRule.clusterRoleSelectors", "atomic", "atomic"},
		{ClusterRole(), "aggregationRule.clusterRoleSelectors.[].matchExpressions", "atomic", ""},
		{RoleBinding(), "subjects", "atomic", "atomic"},
		{ClusterRoleBinding(), "roleRef", "", "atomic"},
		{SubjectAccessReview(), "spec.groups", "atomic", ""},
		{SelfSubjectRulesReview(), "status.resourceRules", "atomic", ""},
		{SelfSubjectRulesReview(), "status.nonResourceRules.[].nonResourceURLs", "atomic", ""},
		{TokenReview(), "spec.audiences", "atomic", ""},
		{SelfSubjectReview(), "status.userInfo.groups", "atomic", ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.s.Description[:strings.Index(tt.s.Description, " ")], tt.path), func(t *testing.T) {
			n := at(tt.s, tt.path)
			if n == nil {
				t.Fatal("no such node")
			}
			mt := n.MapType
			if n.Items != nil {
				mt = n.Items.MapType
			}
			if n.ListType != tt.list || mt != tt.itemsMap {
				t.Errorf("got list type %q, map type %q; want %q, %q", n.ListType, mt, tt.list, tt.itemsMap)
			}
		})
	}
}

func decodeObj(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("bad test JSON: %v", err)
	}
	return m
}
