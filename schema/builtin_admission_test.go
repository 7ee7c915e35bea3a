package schema

import (
	"encoding/json"
	"testing"
)

func TestWebhookConfigurationSchemas(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    *Schema
		path []string
		want string // JSON of the default at path
	}{
		{"failurePolicy", ValidatingWebhookConfiguration(), []string{"webhooks", "[]", "failurePolicy"}, `"Fail"`},
		{"matchPolicy", MutatingWebhookConfiguration(), []string{"webhooks", "[]", "matchPolicy"}, `"Equivalent"`},
		{"timeoutSeconds", ValidatingWebhookConfiguration(), []string{"webhooks", "[]", "timeoutSeconds"}, `10`},
		{"namespaceSelector", ValidatingWebhookConfiguration(), []string{"webhooks", "[]", "namespaceSelector"}, `{}`},
		{"objectSelector", MutatingWebhookConfiguration(), []string{"webhooks", "[]", "objectSelector"}, `{}`},
		{"reinvocationPolicy", MutatingWebhookConfiguration(), []string{"webhooks", "[]", "reinvocationPolicy"}, `"Never"`},
		{"rule scope", MutatingWebhookConfiguration(), []string{"webhooks", "[]", "rules", "[]", "scope"}, `"*"`},
		{"service port", MutatingWebhookConfiguration(), []string{"webhooks", "[]", "clientConfig", "service", "port"}, `443`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			for _, p := range tt.path {
				if p == "[]" {
					s = s.Items
				} else {
					s = s.Properties[p]
				}
				if s == nil {
					t.Fatalf("no schema at %v", tt.path)
				}
			}
			got, _ := json.Marshal(s.Default)
			if string(got) != tt.want {
				t.Errorf("default: got %s; want %s", got, tt.want)
			}
		})
	}
	if got := MutatingWebhookConfiguration().Properties["webhooks"].PatchMergeKey; got != "name" {
		t.Errorf("webhooks merge key: got %q; want name", got)
	}
}
