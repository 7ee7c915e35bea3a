package registry

import (
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/registry/admission/webhook"
)

func TestSelectablePath(t *testing.T) {
	s := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{
			"color":  map[string]any{"type": "string"},
			"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		}},
	}}
	for _, tc := range []struct {
		path, field, typ, err string
	}{
		{".spec.color", "spec.color", "string", ""},
		{".spec", "spec", "object", ""},
		{".spec.labels.app", "spec.labels[app]", "string", ""},
		{".spec.nope", "", "", "does not refer to a valid field"},
		{".spec.color.x", "", "", "does not refer to a valid field"},
		{".spec['color']", "", "", "array notation is not allowed"},
		{"spec.color", "", "", "expected [ or . but got: spec"},
		{".spec.", "", "", "unexpected end of JSON path"},
	} {
		field, typ, err := selectablePath(tc.path, s)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if field != tc.field || typ != tc.typ || gotErr != tc.err {
			t.Errorf("selectablePath(%q) = %q, %q, %v; want %q, %q, %q", tc.path, field, typ, err, tc.field, tc.typ, tc.err)
		}
	}
}

// A conversion webhook's clientConfig is checked by the admission
// webhooks' validation (kube's util/webhook): a missing service name is
// named as such (kube's CRD validation names service.namespace instead).
func TestConversionClientConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cc   webhookClientConfig
		want []string
	}{
		{"service without a name", webhookClientConfig{Service: &webhook.ServiceReference{Namespace: "ns"}},
			[]string{"spec.conversion.webhookClientConfig.service.name: Required value"}},
		{"http url", webhookClientConfig{URL: ptr("http://example.com/c")},
			[]string{`spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`}},
		{"https url", webhookClientConfig{URL: ptr("https://example.com/c")}, nil},
	} {
		var got []string
		for _, e := range validateConversion(&crdConversion{Strategy: "Webhook", Webhook: &crdWebhook{ConversionReviewVersions: []string{"v1"}, ClientConfig: &tc.cc}}, "spec.conversion") {
			got = append(got, e.Error())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q; want %q", tc.name, got, tc.want)
		}
	}
}

func ptr(s string) *string { return &s }
