package conformance

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeproto "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kapi-dev/kapi/codec/protobuf"
)

// The rbac.v1, authorization.v1 and authentication.v1 kinds against
// k8s.io/api's generated code, both ways, as TestProtobufWireMessages does
// for ConfigMap; and each in kapi's envelope through apimachinery's
// protobuf serializer.

func pbwRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods", "pods/log"}, ResourceNames: []string{"web-0", ""}},
		{Verbs: []string{"*"}, APIGroups: []string{"apps", "batch"}, Resources: []string{"deployments", "jobs"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/version/*"}},
		{}, // verbs null: protobuf cannot tell [] from null, for kube's own code neither
	}
}

func pbwSubjects() []rbacv1.Subject {
	return []rbacv1.Subject{
		{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "jane"},
		{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "team-a"},
		{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:authenticated"},
		{},
	}
}

func pbwRole() *rbacv1.Role { return &rbacv1.Role{ObjectMeta: pbwMeta(), Rules: pbwRules()} }

func pbwClusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "monitoring", CreationTimestamp: pbwTime(1_800_000_000), Labels: map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}},
		Rules:      pbwRules(),
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"rbac.example.com/aggregate-to-monitoring": "true"}},
			{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
				{Key: "x", Operator: metav1.LabelSelectorOpExists},
			}},
			{},
		}},
	}
}

func pbwRoleBinding() *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: pbwMeta(), Subjects: pbwSubjects(),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
	}
}

func pbwClusterRoleBinding() *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:masters"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
	}
}

func pbwResourceAttributes() *authorizationv1.ResourceAttributes {
	return &authorizationv1.ResourceAttributes{
		Namespace: "team-a", Verb: "list", Group: "apps", Version: "v1", Resource: "deployments", Subresource: "scale", Name: "web",
		FieldSelector: &authorizationv1.FieldSelectorAttributes{RawSelector: "spec.nodeName=n1", Requirements: []metav1.FieldSelectorRequirement{
			{Key: "spec.nodeName", Operator: metav1.FieldSelectorOpIn, Values: []string{"n1"}},
			{Key: "metadata.name", Operator: metav1.FieldSelectorOpNotIn},
		}},
		LabelSelector: &authorizationv1.LabelSelectorAttributes{Requirements: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}},
	}
}

func pbwSubjectAccessReview() *authorizationv1.SubjectAccessReview {
	return &authorizationv1.SubjectAccessReview{
		ObjectMeta: metav1.ObjectMeta{Name: "r", CreationTimestamp: pbwTime(1_800_000_000)},
		Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: pbwResourceAttributes(),
			User:               "jane", UID: "u-1", Groups: []string{"dev", "system:authenticated"},
			// A nil ExtraValue in a map does not survive kube's own round trip (read back as ExtraValue{}: TestProtobufWireBuiltinKindsFuzzed); an empty one does.
			Extra: map[string]authorizationv1.ExtraValue{"scopes": {"a", "b"}, "blank": {""}, "empty": {}},
		},
		Status: authorizationv1.SubjectAccessReviewStatus{Allowed: false, Denied: true, Reason: "no RBAC policy matched", EvaluationError: "e"},
	}
}

func pbwSelfSubjectAccessReview() *authorizationv1.SelfSubjectAccessReview {
	return &authorizationv1.SelfSubjectAccessReview{
		Spec:   authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"}},
		Status: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "allowed"},
	}
}

func pbwLocalSubjectAccessReview() *authorizationv1.LocalSubjectAccessReview {
	return &authorizationv1.LocalSubjectAccessReview{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"},
		Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "team-a", Verb: "delete", Resource: "pods"},
			User:               "system:serviceaccount:team-a:default",
		},
	}
}

func pbwSelfSubjectRulesReview() *authorizationv1.SelfSubjectRulesReview {
	return &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "team-a"},
		Status: authorizationv1.SubjectRulesReviewStatus{
			ResourceRules: []authorizationv1.ResourceRule{
				{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}},
				{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"a"}},
			},
			NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/api", "/api/*"}}},
			Incomplete:       true, EvaluationError: "webhook unavailable",
		},
	}
}

func pbwUserInfo() authenticationv1.UserInfo {
	return authenticationv1.UserInfo{
		Username: "system:serviceaccount:ns:sa", UID: "u-1", Groups: []string{"system:serviceaccounts", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"web-0"}, "authentication.kubernetes.io/credential-id": {"JTI=abc", ""}},
	}
}

func pbwTokenReview() *authenticationv1.TokenReview {
	return &authenticationv1.TokenReview{
		ObjectMeta: metav1.ObjectMeta{Name: "t"},
		Spec:       authenticationv1.TokenReviewSpec{Token: "eyJhbGciOi.x.y", Audiences: []string{"https://kubernetes.default.svc"}},
		Status:     authenticationv1.TokenReviewStatus{Authenticated: true, User: pbwUserInfo(), Audiences: []string{"https://kubernetes.default.svc"}, Error: "none"},
	}
}

func pbwSelfSubjectReview() *authenticationv1.SelfSubjectReview {
	return &authenticationv1.SelfSubjectReview{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: pbwTime(1_800_000_000)},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: pbwUserInfo()},
	}
}

func pbwTokenRequest() *authenticationv1.TokenRequest {
	exp := int64(3600)
	return &authenticationv1.TokenRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: "ns"},
		Spec: authenticationv1.TokenRequestSpec{
			Audiences: []string{"api", "vault"}, ExpirationSeconds: &exp,
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web-0", UID: "p-1"},
			Attestations:   map[string]authenticationv1.AttestationValue{"a": {"x", "y"}},
		},
		Status: authenticationv1.TokenRequestStatus{Token: "tok", ExpirationTimestamp: pbwTime(1_800_003_600)},
	}
}

func TestProtobufWireBuiltinKinds(t *testing.T) {
	zero := int64(0)
	tests := []pbwCase{
		{"Role", pbwCodecOf(protobuf.Role, protobuf.Marshal, protobuf.Unmarshal), pbwRole(), func() pbwMessage { return &rbacv1.Role{} }},
		{"Role empty", pbwCodecOf(protobuf.Role, protobuf.Marshal, protobuf.Unmarshal), &rbacv1.Role{}, func() pbwMessage { return &rbacv1.Role{} }},
		{"ClusterRole", pbwCodecOf(protobuf.ClusterRole, protobuf.Marshal, protobuf.Unmarshal), pbwClusterRole(), func() pbwMessage { return &rbacv1.ClusterRole{} }},
		{"ClusterRole empty aggregationRule", pbwCodecOf(protobuf.ClusterRole, protobuf.Marshal, protobuf.Unmarshal), &rbacv1.ClusterRole{AggregationRule: &rbacv1.AggregationRule{}}, func() pbwMessage { return &rbacv1.ClusterRole{} }},
		{"RoleBinding", pbwCodecOf(protobuf.RoleBinding, protobuf.Marshal, protobuf.Unmarshal), pbwRoleBinding(), func() pbwMessage { return &rbacv1.RoleBinding{} }},
		{"RoleBinding empty", pbwCodecOf(protobuf.RoleBinding, protobuf.Marshal, protobuf.Unmarshal), &rbacv1.RoleBinding{}, func() pbwMessage { return &rbacv1.RoleBinding{} }},
		{"ClusterRoleBinding", pbwCodecOf(protobuf.ClusterRoleBinding, protobuf.Marshal, protobuf.Unmarshal), pbwClusterRoleBinding(), func() pbwMessage { return &rbacv1.ClusterRoleBinding{} }},
		{"SubjectAccessReview", pbwCodecOf(protobuf.SubjectAccessReview, protobuf.Marshal, protobuf.Unmarshal), pbwSubjectAccessReview(), func() pbwMessage { return &authorizationv1.SubjectAccessReview{} }},
		{"SubjectAccessReview empty", pbwCodecOf(protobuf.SubjectAccessReview, protobuf.Marshal, protobuf.Unmarshal), &authorizationv1.SubjectAccessReview{}, func() pbwMessage { return &authorizationv1.SubjectAccessReview{} }},
		{"SelfSubjectAccessReview", pbwCodecOf(protobuf.SelfSubjectAccessReview, protobuf.Marshal, protobuf.Unmarshal), pbwSelfSubjectAccessReview(), func() pbwMessage { return &authorizationv1.SelfSubjectAccessReview{} }},
		{"SelfSubjectAccessReview resource", pbwCodecOf(protobuf.SelfSubjectAccessReview, protobuf.Marshal, protobuf.Unmarshal), &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: pbwResourceAttributes()}}, func() pbwMessage { return &authorizationv1.SelfSubjectAccessReview{} }},
		{"LocalSubjectAccessReview", pbwCodecOf(protobuf.LocalSubjectAccessReview, protobuf.Marshal, protobuf.Unmarshal), pbwLocalSubjectAccessReview(), func() pbwMessage { return &authorizationv1.LocalSubjectAccessReview{} }},
		{"SelfSubjectRulesReview", pbwCodecOf(protobuf.SelfSubjectRulesReview, protobuf.Marshal, protobuf.Unmarshal), pbwSelfSubjectRulesReview(), func() pbwMessage { return &authorizationv1.SelfSubjectRulesReview{} }},
		{"SelfSubjectRulesReview empty", pbwCodecOf(protobuf.SelfSubjectRulesReview, protobuf.Marshal, protobuf.Unmarshal), &authorizationv1.SelfSubjectRulesReview{}, func() pbwMessage { return &authorizationv1.SelfSubjectRulesReview{} }},
		{"SelfSubjectReview", pbwCodecOf(protobuf.SelfSubjectReview, protobuf.Marshal, protobuf.Unmarshal), pbwSelfSubjectReview(), func() pbwMessage { return &authenticationv1.SelfSubjectReview{} }},
		{"TokenReview", pbwCodecOf(protobuf.TokenReview, protobuf.Marshal, protobuf.Unmarshal), pbwTokenReview(), func() pbwMessage { return &authenticationv1.TokenReview{} }},
		{"TokenReview empty", pbwCodecOf(protobuf.TokenReview, protobuf.Marshal, protobuf.Unmarshal), &authenticationv1.TokenReview{}, func() pbwMessage { return &authenticationv1.TokenReview{} }},
		{"TokenRequest", pbwCodecOf(protobuf.TokenRequest, protobuf.Marshal, protobuf.Unmarshal), pbwTokenRequest(), func() pbwMessage { return &authenticationv1.TokenRequest{} }},
		{"TokenRequest zero expiration", pbwCodecOf(protobuf.TokenRequest, protobuf.Marshal, protobuf.Unmarshal), &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &zero}}, func() pbwMessage { return &authenticationv1.TokenRequest{} }},
	}
	for _, tt := range tests {
		pbwBothWays(t, tt)
		t.Run(tt.name+"/envelope", func(t *testing.T) {
			gvks, _, err := scheme.Scheme.ObjectKinds(tt.obj)
			if err != nil || len(gvks) == 0 {
				t.Fatalf("ObjectKinds: %v, %v", gvks, err)
			}
			gvk := gvks[0]
			body, err := tt.codec.marshal(pbwJSONForm(t, tt.obj))
			if err != nil {
				t.Fatal(err)
			}
			env := protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}, body)
			obj, got, err := kubeproto.NewSerializer(scheme.Scheme, scheme.Scheme).Decode(env, nil, nil)
			if err != nil {
				t.Fatalf("apimachinery decode of kapi's envelope: %v", err)
			}
			if *got != gvk {
				t.Errorf("decoded as %v; want %v", *got, gvk)
			}
			want := tt.obj.DeepCopyObject()
			want.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			if !apiequality.Semantic.DeepEqual(obj, want) {
				t.Errorf("decoded %T differs from the original", obj)
			}
		})
	}
}
