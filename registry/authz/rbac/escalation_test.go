package rbac

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

func r(groups, verbs, resources []string) PolicyRule {
	return PolicyRule{APIGroups: groups, Verbs: verbs, Resources: resources}
}

func s(v ...string) []string { return v }

// The cases of kube's component-helpers/auth/rbac/validation
// policy_comparator_test.go.
func TestCovers(t *testing.T) {
	tests := []struct {
		name      string
		owner     []PolicyRule
		servant   []PolicyRule
		covered   bool
		uncovered []PolicyRule
	}{
		{"ExactMatch", []PolicyRule{r(s("v1"), s("get"), s("builds"))}, []PolicyRule{r(s("v1"), s("get"), s("builds"))}, true, nil},
		{"SubresourceWildcard", []PolicyRule{r(s("v1"), s("get"), s("*/scale"))}, []PolicyRule{r(s("v1"), s("get"), s("foo/scale"))}, true, nil},
		{"MultipleRulesCoveringSingleRule", []PolicyRule{
			r(s("v1"), s("delete"), s("deployments")), r(s("v1"), s("delete"), s("builds")), r(s("v1"), s("update"), s("builds", "deployments")),
		}, []PolicyRule{r(s("v1"), s("delete", "update"), s("builds", "deployments"))}, true, nil},
		{"MultipleAPIGroupsCoveringSingleRule", []PolicyRule{
			r(s("group1"), s("delete"), s("deployments")), r(s("group1"), s("delete"), s("builds")), r(s("group1"), s("update"), s("builds", "deployments")),
			r(s("group2"), s("delete"), s("deployments")), r(s("group2"), s("delete"), s("builds")), r(s("group2"), s("update"), s("builds", "deployments")),
		}, []PolicyRule{r(s("group1", "group2"), s("delete", "update"), s("builds", "deployments"))}, true, nil},
		{"SingleAPIGroupsCoveringMultiple", []PolicyRule{r(s("group1", "group2"), s("delete", "update"), s("builds", "deployments"))}, []PolicyRule{
			r(s("group1"), s("delete"), s("deployments")), r(s("group1"), s("delete"), s("builds")), r(s("group1"), s("update"), s("builds", "deployments")),
			r(s("group2"), s("delete"), s("deployments")), r(s("group2"), s("delete"), s("builds")), r(s("group2"), s("update"), s("builds", "deployments")),
		}, true, nil},
		{"MultipleRulesMissingSingleVerbResourceCombination", []PolicyRule{
			r(s("v1"), s("delete", "update"), s("builds", "deployments")), r(s("v1"), s("delete"), s("pods")),
		}, []PolicyRule{r(s("v1"), s("delete", "update"), s("builds", "deployments", "pods"))}, false, []PolicyRule{r(s("v1"), s("update"), s("pods"))}},
		{"APIGroupStarCoveringMultiple", []PolicyRule{r(s("*"), s("get"), s("roles"))}, []PolicyRule{r(s("group1", "group2"), s("get"), s("roles"))}, true, nil},
		{"EnumerationNotCoveringAPIGroupStar", []PolicyRule{r(s("dummy-group"), s("get"), s("roles"))}, []PolicyRule{r(s("*"), s("get"), s("roles"))}, false, []PolicyRule{r(s("*"), s("get"), s("roles"))}},
		{"APIGroupStarCoveringStar", []PolicyRule{r(s("*"), s("get"), s("roles"))}, []PolicyRule{r(s("*"), s("get"), s("roles"))}, true, nil},
		{"VerbStarCoveringMultiple", []PolicyRule{r(s("v1"), s("*"), s("roles"))}, []PolicyRule{r(s("v1"), s("watch", "list"), s("roles"))}, true, nil},
		{"EnumerationNotCoveringVerbStar", []PolicyRule{r(s("v1"), s("get", "list", "watch", "create", "update", "delete", "exec"), s("roles"))}, []PolicyRule{r(s("v1"), s("*"), s("roles"))}, false, []PolicyRule{r(s("v1"), s("*"), s("roles"))}},
		{"VerbStarCoveringStar", []PolicyRule{r(s("v1"), s("*"), s("roles"))}, []PolicyRule{r(s("v1"), s("*"), s("roles"))}, true, nil},
		{"ResourceStarCoveringMultiple", []PolicyRule{r(s("v1"), s("get"), s("*"))}, []PolicyRule{r(s("v1"), s("get"), s("resourcegroup:deployments"))}, true, nil},
		{"EnumerationNotCoveringResourceStar", []PolicyRule{r(s("v1"), s("get"), s("roles", "resourcegroup:deployments"))}, []PolicyRule{r(s("v1"), s("get"), s("*"))}, false, []PolicyRule{r(s("v1"), s("get"), s("*"))}},
		{"ResourceStarCoveringStar", []PolicyRule{r(s("v1"), s("get"), s("*"))}, []PolicyRule{r(s("v1"), s("get"), s("*"))}, true, nil},
		{"ResourceNameEmptyCoveringMultiple", []PolicyRule{{APIGroups: s("v1"), Verbs: s("get"), Resources: s("pods"), ResourceNames: []string{}}},
			[]PolicyRule{{APIGroups: s("v1"), Verbs: s("get"), Resources: s("pods"), ResourceNames: s("foo", "bar")}}, true, nil},
		{"EnumerationNotCoveringResourceNameEmpty", []PolicyRule{{APIGroups: s("v1"), Verbs: s("get"), Resources: s("pods"), ResourceNames: s("foo", "bar")}},
			[]PolicyRule{{APIGroups: s("v1"), Verbs: s("get"), Resources: s("pods"), ResourceNames: []string{}}}, false, []PolicyRule{r(s("v1"), s("get"), s("pods"))}},
		{"NonResourceURLs", []PolicyRule{{NonResourceURLs: s("/apis"), Verbs: s("*")}}, []PolicyRule{{NonResourceURLs: s("/apis"), Verbs: s("*")}}, true, nil},
		{"NonResourceURLsStar", []PolicyRule{{NonResourceURLs: s("*"), Verbs: s("*")}}, []PolicyRule{{NonResourceURLs: s("/apis", "/apis/v1", "/"), Verbs: s("*")}}, true, nil},
		{"NonResourceURLsStarAfterPrefixDoesntCover", []PolicyRule{{NonResourceURLs: s("/apis/*"), Verbs: s("*")}}, []PolicyRule{{NonResourceURLs: s("/apis", "/apis/v1"), Verbs: s("get")}},
			false, []PolicyRule{{NonResourceURLs: s("/apis"), Verbs: s("get")}}},
		{"NonResourceURLsStarAfterPrefix", []PolicyRule{{NonResourceURLs: s("/apis/*"), Verbs: s("*")}}, []PolicyRule{{NonResourceURLs: s("/apis/v1/foo", "/apis/v1"), Verbs: s("get")}}, true, nil},
		{"NonResourceURLsWithOtherFields", []PolicyRule{{APIGroups: s("v1"), Verbs: s("get"), Resources: s("builds"), NonResourceURLs: s("/apis")}},
			[]PolicyRule{{APIGroups: s("v1"), Verbs: s("get"), Resources: s("builds"), NonResourceURLs: s("/apis")}}, true, nil},
		{"NonResourceURLsWithOtherFieldsFailure", []PolicyRule{r(s("v1"), s("get"), s("builds"))},
			[]PolicyRule{{APIGroups: s("v1"), Verbs: s("get"), Resources: s("builds"), NonResourceURLs: s("/apis")}}, false, []PolicyRule{{NonResourceURLs: s("/apis"), Verbs: s("get")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			covered, uncovered := Covers(tt.owner, tt.servant)
			if covered != tt.covered {
				t.Errorf("covered: got %v; want %v", covered, tt.covered)
			}
			if len(uncovered) != len(tt.uncovered) {
				t.Fatalf("uncovered: got %v; want %v", uncovered, tt.uncovered)
			}
			for _, w := range tt.uncovered {
				found := false
				for _, g := range uncovered {
					found = found || reflect.DeepEqual(g, w)
				}
				if !found {
					t.Errorf("uncovered: got %v; want %v", uncovered, tt.uncovered)
				}
			}
		})
	}
}

func TestNonResourceURLCovers(t *testing.T) {
	for _, tc := range []struct {
		owner, requested string
		want             bool
	}{
		{"*", "", true}, {"*", "/", true}, {"*", "/api", true}, {"/*", "", false}, {"/*", "/", true}, {"/*", "/foo", true},
		{"/api", "/api", true}, {"/apis", "/api", false}, {"/api/v1", "/api", false}, {"/api/v1", "/api/v1", true},
		{"/api/*", "/api/v1", true}, {"/api/*", "/api", false}, {"/api/*/*", "/api/v1", false}, {"/*/v1/*", "/api/v1", false},
	} {
		if got := nonResourceURLCovers(tc.owner, tc.requested); got != tc.want {
			t.Errorf("nonResourceURLCovers(%q, %q): got %v; want %v", tc.owner, tc.requested, got, tc.want)
		}
	}
}

func TestCompactRules(t *testing.T) {
	in := []PolicyRule{
		r(s("apps"), s("get"), s("deployments")),
		{NonResourceURLs: s("/x"), Verbs: s("get")},
		r(s("apps"), s("list"), s("deployments")),
		{APIGroups: s(""), Resources: s("pods"), ResourceNames: s("a"), Verbs: s("get")},
		{APIGroups: s(""), Resources: s("pods"), ResourceNames: s("b"), Verbs: s("get")},
		{APIGroups: s(""), Resources: s("pods"), ResourceNames: s("a"), Verbs: s("delete")},
	}
	want := []PolicyRule{
		{NonResourceURLs: s("/x"), Verbs: s("get")},
		r(s("apps"), s("get", "list"), s("deployments")),
		{APIGroups: s(""), Resources: s("pods"), ResourceNames: s("a"), Verbs: s("get", "delete")},
		{APIGroups: s(""), Resources: s("pods"), ResourceNames: s("b"), Verbs: s("get")},
	}
	if got := CompactRules(in); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if in[0].Verbs[0] != "get" || len(in[0].Verbs) != 1 {
		t.Errorf("CompactRules modified its input: %v", in[0])
	}
}

func TestConfirmNoEscalation(t *testing.T) {
	z := example()
	alice := user("alice", request.AllAuthenticated)
	// alice holds get, list pods in a.
	if err := z.ConfirmNoEscalation(alice, "a", []PolicyRule{r(s(""), s("list"), s("pods"))}); err != nil {
		t.Errorf("covered: got %v", err)
	}
	err := z.ConfirmNoEscalation(alice, "a", []PolicyRule{r(s(""), s("get", "delete", "patch"), s("pods", "secrets"))})
	want := `user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["pods"], Verbs:["delete" "patch"]}
{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete" "patch"]}`
	if !errors.Is(err, ErrEscalation) || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if got := ForbiddenMessage("roles", "r", err); got != `roles.rbac.authorization.k8s.io "r" is forbidden: `+want {
		t.Errorf("ForbiddenMessage: got %s", got)
	}
	// In b (or cluster-wide) alice holds nothing of pod-reader's.
	if err := z.ConfirmNoEscalation(alice, "b", []PolicyRule{r(s(""), s("list"), s("pods"))}); err == nil {
		t.Error("in b: got nil; want an escalation error")
	}
	// Resolution errors are appended, with storage's plural names.
	err = z.ConfirmNoEscalation(user("bob", "dev"), "a", []PolicyRule{r(s(""), s("get"), s("secrets"))})
	want = `user "bob" (groups=["dev"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}; resolution errors: [clusterroles.rbac.authorization.k8s.io "missing" not found]`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if err := z.ConfirmNoEscalation(nil, "", nil); !errors.Is(err, ErrNoUser) {
		t.Errorf("nil user: got %v", err)
	}
}

func TestCheckWrites(t *testing.T) {
	z := example()
	// carol may escalate roles in a and bind the ClusterRole pod-reader.
	z.SetClusterRole(&ClusterRole{Metadata: ObjectMeta{Name: "delegate"}, Rules: []PolicyRule{
		{Verbs: s("escalate"), APIGroups: s(GroupName), Resources: s("roles")},
		{Verbs: s("bind"), APIGroups: s(GroupName), Resources: s("clusterroles"), ResourceNames: s("pod-reader")},
	}})
	z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "a", Name: "carol"}, RoleRef: clusterRoleRef("delegate"), Subjects: []Subject{{Kind: UserKind, Name: "carol"}}})
	secrets := []PolicyRule{r(s(""), s("*"), s("secrets"))}
	roleInfo := func(ns string) *request.Info {
		return &request.Info{IsResourceRequest: true, Verb: "create", APIGroup: GroupName, APIVersion: "v1", Resource: "roles", Namespace: ns}
	}
	alice, carol, root := user("alice"), user("carol"), user("root", request.SystemPrivileged)
	var az authz.Authorizer = z
	for _, tt := range []struct {
		name string
		err  error
		want error
	}{
		{"masters write any role", z.CheckRoleWrite(ctx, az, root, roleInfo("a"), secrets, false), nil},
		{"escalate allows any rules", z.CheckRoleWrite(ctx, az, carol, roleInfo("a"), secrets, false), nil},
		{"escalate is per namespace", z.CheckRoleWrite(ctx, az, carol, roleInfo("b"), secrets, false), ErrEscalation},
		{"covered rules", z.CheckRoleWrite(ctx, az, alice, roleInfo("a"), []PolicyRule{r(s(""), s("get"), s("pods"))}, false), nil},
		{"uncovered rules", z.CheckRoleWrite(ctx, az, alice, roleInfo("a"), secrets, false), ErrEscalation},
		{"aggregation needs full authority", z.CheckRoleWrite(ctx, az, alice, roleInfo(""), nil, true), ErrEscalation},
		{"bind allowed", z.CheckBindingWrite(ctx, az, carol, "a", clusterRoleRef("pod-reader")), nil},
		{"bind of another role, not held", z.CheckBindingWrite(ctx, az, carol, "a", roleRef("cm-editor")), ErrEscalation},
		{"bind by covering", z.CheckBindingWrite(ctx, az, alice, "a", clusterRoleRef("pod-reader")), nil},
		{"bind uncovered", z.CheckBindingWrite(ctx, az, alice, "a", clusterRoleRef("cluster-admin")), ErrEscalation},
		{"bind missing role", z.CheckBindingWrite(ctx, az, alice, "a", roleRef("nope")), ErrNotFound},
		{"masters bind missing role", z.CheckBindingWrite(ctx, az, root, "a", roleRef("nope")), nil},
	} {
		if (tt.want == nil) != (tt.err == nil) || tt.want != nil && !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: got %v; want %v", tt.name, tt.err, tt.want)
		}
	}
	if err := z.ConfirmAggregationRule(alice); err == nil || err.Error() != "must have cluster-admin privileges to use the aggregationRule" {
		t.Errorf("ConfirmAggregationRule: got %v", err)
	}
	if err := z.ConfirmAggregationRule(root); err != nil {
		t.Errorf("ConfirmAggregationRule(masters, bound to cluster-admin): got %v", err)
	}
}
