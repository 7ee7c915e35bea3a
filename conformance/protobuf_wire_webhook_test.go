package conformance

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/codec/protobuf"
)

// The admissionregistration.v1 webhook configurations against k8s.io/api's
// generated code, both ways: every field, RuleWithOperations' embedded
// Rule (inlined in JSON, a message of its own on the wire) included.

func pbwMutatingWebhookConfiguration() *admissionregistrationv1.MutatingWebhookConfiguration {
	fail, equivalent, none, ifNeeded := admissionregistrationv1.Fail, admissionregistrationv1.Equivalent, admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.IfNeededReinvocationPolicy
	all, timeout, port, url, path := admissionregistrationv1.AllScopes, int32(10), int32(443), "https://127.0.0.1:9443/mutate", "/mutate"
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{"a": "b"}},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{
				Name:         "a.example.com",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: []byte("-----BEGIN CERTIFICATE-----")},
				Rules: []admissionregistrationv1.RuleWithOperations{
					{Operations: []admissionregistrationv1.OperationType{"CREATE", "UPDATE"}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps", "pods/status"}, Scope: &all}},
					{Operations: []admissionregistrationv1.OperationType{"*"}},
				},
				FailurePolicy: &fail, MatchPolicy: &equivalent, SideEffects: &none, TimeoutSeconds: &timeout, ReinvocationPolicy: &ifNeeded,
				NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}},
				ObjectSelector:          &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpExists}}},
				AdmissionReviewVersions: []string{"v1", "v1beta1"},
				MatchConditions:         []admissionregistrationv1.MatchCondition{{Name: "c", Expression: "true"}},
			},
			{
				Name:                    "b.example.com",
				ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "system", Name: "hooks", Path: &path, Port: &port}},
				SideEffects:             &none,
				AdmissionReviewVersions: []string{"v1"},
			},
		},
	}
}

func pbwValidatingWebhookConfiguration() *admissionregistrationv1.ValidatingWebhookConfiguration {
	ignore, exact, some, ns, timeout, url := admissionregistrationv1.Ignore, admissionregistrationv1.Exact, admissionregistrationv1.SideEffectClassSome, admissionregistrationv1.NamespacedScope, int32(30), "https://h/v"
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "v"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "v.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"DELETE"},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"*"}, Resources: []string{"*/scale"}, Scope: &ns}}},
			FailurePolicy: &ignore, MatchPolicy: &exact, SideEffects: &some, TimeoutSeconds: &timeout,
			NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
			AdmissionReviewVersions: []string{"v1"},
			MatchConditions:         []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "request.operation == 'DELETE'"}, {Name: "b", Expression: "true"}},
		}},
	}
}

func TestProtobufWireWebhookConfigurations(t *testing.T) {
	for _, tt := range []pbwCase{
		{"MutatingWebhookConfiguration", pbwCodecOf(protobuf.MutatingWebhookConfiguration, protobuf.Marshal, protobuf.Unmarshal), pbwMutatingWebhookConfiguration(),
			func() pbwMessage { return &admissionregistrationv1.MutatingWebhookConfiguration{} }},
		{"MutatingWebhookConfiguration empty", pbwCodecOf(protobuf.MutatingWebhookConfiguration, protobuf.Marshal, protobuf.Unmarshal), &admissionregistrationv1.MutatingWebhookConfiguration{},
			func() pbwMessage { return &admissionregistrationv1.MutatingWebhookConfiguration{} }},
		{"ValidatingWebhookConfiguration", pbwCodecOf(protobuf.ValidatingWebhookConfiguration, protobuf.Marshal, protobuf.Unmarshal), pbwValidatingWebhookConfiguration(),
			func() pbwMessage { return &admissionregistrationv1.ValidatingWebhookConfiguration{} }},
	} {
		pbwBothWays(t, tt)
	}
}
