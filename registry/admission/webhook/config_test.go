package webhook

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	const hook = `"name":"a.example.com","clientConfig":{"url":"https://h/x"},"sideEffects":"None","admissionReviewVersions":["v1"]`
	tests := []struct {
		name, kind, obj, old string
		want                 []string // error messages, in order
	}{
		{name: "valid", kind: ValidatingKind, obj: `{"webhooks":[{` + hook + `,"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods","pods/status"]}]}]}`},
		{name: "name", kind: ValidatingKind, obj: `{"webhooks":[{"name":"a","clientConfig":{"url":"https://h"},"sideEffects":"None","admissionReviewVersions":["v1"]}]}`,
			want: []string{`webhooks[0].name: Invalid value: "a": should be a domain with at least three segments separated by dots`}},
		{name: "side effects required", kind: MutatingKind, obj: `{"webhooks":[{"name":"a.b.c","clientConfig":{"url":"https://h"},"admissionReviewVersions":["v1"]}]}`,
			want: []string{`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`}},
		{name: "side effects Some", kind: MutatingKind, obj: `{"webhooks":[{"name":"a.b.c","clientConfig":{"url":"https://h"},"sideEffects":"Some","admissionReviewVersions":["v1"]}]}`,
			want: []string{`webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`}},
		{name: "side effects Some kept on update", kind: MutatingKind,
			obj: `{"webhooks":[{"name":"a.b.c","clientConfig":{"url":"https://h"},"sideEffects":"Some","admissionReviewVersions":["v1"]}]}`,
			old: `{"webhooks":[{"name":"a.b.c","clientConfig":{"url":"https://h"},"sideEffects":"Unknown","admissionReviewVersions":["v1"]}]}`},
		{name: "review versions", kind: ValidatingKind, obj: `{"webhooks":[{"name":"a.b.c","clientConfig":{"url":"https://h"},"sideEffects":"None","admissionReviewVersions":["v2"]}]}`,
			want: []string{`webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1`}},
		{name: "client config", kind: ValidatingKind, obj: `{"webhooks":[{"name":"a.b.c","clientConfig":{},"sideEffects":"None","admissionReviewVersions":["v1"]}]}`,
			want: []string{`webhooks[0].clientConfig: Required value: exactly one of url or service is required`}},
		{name: "http url", kind: ValidatingKind, obj: `{"webhooks":[{"name":"a.b.c","clientConfig":{"url":"http://h/x?q=1"},"sideEffects":"None","admissionReviewVersions":["v1"]}]}`,
			want: []string{`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
				`webhooks[0].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL`}},
		{name: "service path", kind: ValidatingKind, obj: `{"webhooks":[{"name":"a.b.c","clientConfig":{"service":{"namespace":"n","name":"s","path":"x//y"}},"sideEffects":"None","admissionReviewVersions":["v1"]}]}`,
			want: []string{`webhooks[0].clientConfig.service.path: Invalid value: "x//y": must start with a '/'`,
				`webhooks[0].clientConfig.service.path: Invalid value: "x//y": segment[0] may not be empty`, // kube checks path[1:]: "//y"
				`webhooks[0].clientConfig.service.path: Invalid value: "x//y": segment[1] may not be empty`}},
		{name: "duplicate names", kind: ValidatingKind, obj: `{"webhooks":[{` + hook + `},{` + hook + `}]}`,
			want: []string{`webhooks[1].name: Duplicate value: "a.example.com"`}},
		{name: "rules", kind: ValidatingKind, obj: `{"webhooks":[{` + hook + `,"rules":[{"operations":["CREATE","*"],"apiVersions":["v1"],"resources":["*","pods"],"scope":"Everywhere"}]}]}`,
			want: []string{`webhooks[0].rules[0].operations: Invalid value: ["CREATE","*"]: if '*' is present, must not specify other operations`,
				`webhooks[0].rules[0].apiGroups: Required value`,
				`webhooks[0].rules[0].resources: Invalid value: ["*","pods"]: if '*' is present, must not specify other resources without subresources`,
				`webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"`}},
		{name: "timeout and policies", kind: MutatingKind, obj: `{"webhooks":[{` + hook + `,"timeoutSeconds":31,"failurePolicy":"Maybe","reinvocationPolicy":"Always"}]}`,
			want: []string{`webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"`,
				`webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds`,
				`webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"`}},
		{name: "selector", kind: ValidatingKind, obj: `{"webhooks":[{` + hook + `,"objectSelector":{"matchExpressions":[{"key":"a","operator":"In"}]}}]}`,
			want: []string{"webhooks[0].objectSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"}},
		{name: "match conditions", kind: ValidatingKind, obj: `{"webhooks":[{` + hook + `,"matchConditions":[{"name":"x","expression":" "},{"name":"x","expression":"true"}]}]}`,
			want: []string{`webhooks[0].matchConditions[0].expression: Required value`, `webhooks[0].matchConditions[1].name: Duplicate value: "x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj, old map[string]any
			if err := json.Unmarshal([]byte(tt.obj), &obj); err != nil {
				t.Fatal(err)
			}
			if tt.old != "" {
				_ = json.Unmarshal([]byte(tt.old), &old)
			}
			var got []string
			for _, e := range Validate(tt.kind, obj, old) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
