package rbac

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

func TestLabelSelector(t *testing.T) {
	labels := map[string]string{"a": "1", "b": "2"}
	tests := []struct {
		name    string
		sel     LabelSelector
		want    bool
		invalid bool
	}{
		{"empty matches all", LabelSelector{}, true, false},
		{"matchLabels", LabelSelector{MatchLabels: map[string]string{"a": "1"}}, true, false},
		{"matchLabels value", LabelSelector{MatchLabels: map[string]string{"a": "2"}}, false, false},
		{"matchLabels missing", LabelSelector{MatchLabels: map[string]string{"c": "1"}}, false, false},
		{"In", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "a", Operator: "In", Values: s("0", "1")}}}, true, false},
		{"In other", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "a", Operator: "In", Values: s("0")}}}, false, false},
		{"In missing", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "c", Operator: "In", Values: s("0")}}}, false, false},
		{"NotIn", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "a", Operator: "NotIn", Values: s("0")}}}, true, false},
		{"NotIn listed", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "a", Operator: "NotIn", Values: s("1")}}}, false, false},
		{"NotIn missing", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "c", Operator: "NotIn", Values: s("1")}}}, true, false},
		{"Exists", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "b", Operator: "Exists"}}}, true, false},
		{"Exists missing", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "c", Operator: "Exists"}}}, false, false},
		{"DoesNotExist", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "c", Operator: "DoesNotExist"}}}, true, false},
		{"DoesNotExist present", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "a", Operator: "DoesNotExist"}}}, false, false},
		{"all must hold", LabelSelector{MatchLabels: map[string]string{"a": "1"}, MatchExpressions: []LabelSelectorRequirement{{Key: "b", Operator: "DoesNotExist"}}}, false, false},
		{"In without values", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "a", Operator: "In"}}}, false, true},
		{"Exists with values", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "a", Operator: "Exists", Values: s("1")}}}, false, true},
		{"unknown operator", LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "a", Operator: "Gt", Values: s("0")}}}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sel.Matches(labels); got != tt.want {
				t.Errorf("Matches: got %v; want %v", got, tt.want)
			}
			if err := tt.sel.Validate(); (err != nil) != tt.invalid || err != nil && !errors.Is(err, ErrInvalidSelector) {
				t.Errorf("Validate: got %v; want invalid=%v", err, tt.invalid)
			}
		})
	}
}

func TestAggregatedRules(t *testing.T) {
	sel := func(k string) LabelSelector { return LabelSelector{MatchLabels: map[string]string{k: "true"}} }
	ruleA := r(s(""), s("get"), s("a"))
	ruleB := r(s(""), s("get"), s("b"))
	ruleC := r(s(""), s("get"), s("c"))
	agg := ClusterRole{Metadata: ObjectMeta{Name: "agg", Labels: map[string]string{"x": "true"}}, Rules: []PolicyRule{ruleC},
		AggregationRule: &AggregationRule{ClusterRoleSelectors: []LabelSelector{sel("y"), sel("x")}}}
	all := []ClusterRole{
		agg,
		{Metadata: ObjectMeta{Name: "z", Labels: map[string]string{"x": "true"}}, Rules: []PolicyRule{ruleA, ruleB}},
		{Metadata: ObjectMeta{Name: "m", Labels: map[string]string{"x": "true", "y": "true"}}, Rules: []PolicyRule{ruleB}},
		{Metadata: ObjectMeta{Name: "b", Labels: map[string]string{"x": "true"}}, Rules: []PolicyRule{{APIGroups: s(""), Verbs: s("get"), Resources: s("a"), ResourceNames: []string{}}}},
		{Metadata: ObjectMeta{Name: "none"}, Rules: []PolicyRule{ruleC}},
	}
	// Selector y: m. Selector x: b, m, z (agg itself excluded); each rule once,
	// an empty resourceNames equal to none.
	want := []PolicyRule{ruleB, {APIGroups: s(""), Verbs: s("get"), Resources: s("a"), ResourceNames: []string{}}}
	if got := AggregatedRules(agg, all); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if got := AggregatedRules(all[1], all); got != nil {
		t.Errorf("no aggregationRule: got %v; want nil", got)
	}
	empty := ClusterRole{Metadata: ObjectMeta{Name: "e"}, AggregationRule: &AggregationRule{}}
	if got := AggregatedRules(empty, all); got == nil || len(got) != 0 {
		t.Errorf("no selectors: got %#v; want empty", got)
	}
	if got := Aggregating(all); !reflect.DeepEqual(got, []string{"agg"}) {
		t.Errorf("Aggregating: got %v", got)
	}
}

func TestBootstrapAggregation(t *testing.T) {
	crs, _ := Bootstrap()
	crs = append(crs, ClusterRole{Metadata: ObjectMeta{Name: "widget-view", Labels: map[string]string{AggregateToView: "true"}},
		Rules: []PolicyRule{r(s("example.com"), s("get", "list", "watch"), s("widgets"))}})
	changed := Reaggregate(crs)
	got := map[string][]PolicyRule{}
	for _, c := range changed {
		got[c.Metadata.Name] = c.Rules
	}
	widgets := r(s("example.com"), s("get", "list", "watch"), s("widgets"))
	adminOwn := crs[7].Rules // system:aggregate-to-admin
	want := map[string][]PolicyRule{
		"view":  {widgets},
		"edit":  {widgets},
		"admin": {widgets, adminOwn[0], adminOwn[1]}, // edit first (by name), then system:aggregate-to-admin
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	// A fixed point: once written, nothing changes.
	for i := range crs {
		if rules, ok := got[crs[i].Metadata.Name]; ok {
			crs[i].Rules = rules
		}
	}
	if again := Reaggregate(crs); len(again) != 0 {
		t.Errorf("second run: got %v; want no change", again)
	}
	// Bound to admin in a namespace, the user gets the aggregated rules there.
	z := New()
	for i := range crs {
		z.SetClusterRole(&crs[i])
	}
	if n := len(z.ClusterRoles()); n != len(crs) {
		t.Errorf("ClusterRoles: got %d; want %d", n, len(crs))
	}
	z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "a", Name: "admins"}, RoleRef: clusterRoleRef("admin"), Subjects: []Subject{{Kind: UserKind, Name: "alice"}}})
	for _, tt := range []struct {
		a    authz.Attributes
		want authz.Decision
	}{
		{in("a", res("watch", "example.com", "widgets", "", "")), authz.Allow},
		{in("a", res("delete", "example.com", "widgets", "", "w")), authz.NoOpinion},
		{in("a", res("create", GroupName, "rolebindings", "", "")), authz.Allow},
		{in("b", res("create", GroupName, "rolebindings", "", "")), authz.NoOpinion},
	} {
		tt.a.User = user("alice")
		if d, _, _ := z.Authorize(ctx, tt.a); d != tt.want {
			t.Errorf("%+v: got %v; want %v", tt.a, d, tt.want)
		}
	}
}

func TestBootstrapObjects(t *testing.T) {
	crs, bs := Bootstrap()
	names := func(n int, name func(int) string) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, name(i))
		}
		return out
	}
	wantRoles := []string{"cluster-admin", "system:discovery", "system:basic-user", "system:public-info-viewer", "admin", "edit", "view", "system:aggregate-to-admin"}
	if got := names(len(crs), func(i int) string { return crs[i].Metadata.Name }); !reflect.DeepEqual(got, wantRoles) {
		t.Errorf("roles: got %v; want %v", got, wantRoles)
	}
	for _, c := range crs {
		if c.Metadata.Labels[BootstrappingLabel] != BootstrappingValue || c.Metadata.Annotations[AutoUpdateAnnotationKey] != "true" {
			t.Errorf("%s: metadata %+v lacks kube's label or annotation", c.Metadata.Name, c.Metadata)
		}
	}
	data, err := json.Marshal(bs[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"cluster-admin","labels":{"kubernetes.io/bootstrapping":"rbac-defaults"},"annotations":{"rbac.authorization.kubernetes.io/autoupdate":"true"}},"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:masters"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"}}`
	if string(data) != want {
		t.Errorf("got %s\nwant %s", data, want)
	}
	data, _ = json.Marshal(crs[6])
	want = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"view","labels":{"kubernetes.io/bootstrapping":"rbac-defaults","rbac.authorization.k8s.io/aggregate-to-edit":"true"},"annotations":{"rbac.authorization.kubernetes.io/autoupdate":"true"}},"rules":null,"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"rbac.authorization.k8s.io/aggregate-to-view":"true"}}]}}`
	if string(data) != want {
		t.Errorf("got %s\nwant %s", data, want)
	}
	// Each round-trips through SetJSON.
	z := New()
	for _, o := range crs {
		data, _ := json.Marshal(o)
		if err := z.SetJSON("ClusterRole", data); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range bs {
		data, _ := json.Marshal(o)
		if err := z.SetJSON("ClusterRoleBinding", data); err != nil {
			t.Fatal(err)
		}
	}
	a := nonRes("get", "/version/")
	a.User = user(request.Anonymous, request.AllUnauthenticated)
	if d, _, _ := z.Authorize(ctx, a); d != authz.Allow {
		t.Errorf("anonymous /version/: got %v; want Allow", d)
	}
	for _, o := range []any{Role{Metadata: ObjectMeta{Name: "r", Namespace: "a"}}, RoleBinding{Metadata: ObjectMeta{Name: "b", Namespace: "a"}}} {
		data, _ := json.Marshal(o)
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		if m["apiVersion"] != APIVersion || m["kind"] == "" {
			t.Errorf("%T: got %s", o, data)
		}
	}
}
