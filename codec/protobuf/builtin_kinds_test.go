package protobuf

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The rbac.v1, authorization.v1 and authentication.v1 kinds: realistic
// objects JSON -> protobuf -> JSON. The conformance module checks the same
// messages against k8s.io/api's generated code.
func TestRoundTripBuiltinKinds(t *testing.T) {
	const meta = `"metadata":{"name":"pod-reader","namespace":"team-a","uid":"0f6c","resourceVersion":"42","creationTimestamp":"2026-11-23T07:38:04Z","labels":{"app":"web"},"annotations":{"rbac.authorization.kubernetes.io/autoupdate":"true"}}`
	tests := []struct {
		name string
		md   protoreflect.MessageDescriptor
		in   string
		want string // after Marshal then Unmarshal; "" means in
	}{
		{"Role", Role, `{` + meta + `,"rules":[{"verbs":["get","list","watch"],"apiGroups":[""],"resources":["pods","pods/log"],"resourceNames":["web-0"]},{"verbs":["*"],"apiGroups":["apps"],"resources":["deployments"]}]}`, ""},
		{"Role without rules", Role, `{"metadata":{"name":"empty"},"rules":[]}`, `{"metadata":{"name":"empty"}}`},
		{"ClusterRole", ClusterRole, `{"metadata":{"name":"view"},"rules":[{"verbs":["get"],"nonResourceURLs":["/healthz","/version/*"]}]}`, ""},
		{"ClusterRole aggregated", ClusterRole, `{"metadata":{"name":"monitoring"},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"rbac.example.com/aggregate-to-monitoring":"true"}},{"matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]},{"key":"x","operator":"Exists"}]}]}}`, ""},
		{"ClusterRole empty aggregationRule", ClusterRole, `{"metadata":{"name":"m"},"aggregationRule":{}}`, ""},
		{"RoleBinding", RoleBinding, `{` + meta + `,"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"jane"},{"kind":"ServiceAccount","name":"default","namespace":"team-a"},{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:authenticated"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"pod-reader"}}`, ""},
		{"RoleBinding roleRef empty apiGroup kept", RoleBinding, `{"metadata":{"name":"b"},"roleRef":{"apiGroup":"","kind":"ClusterRole","name":"view"}}`, ""},
		{"ClusterRoleBinding", ClusterRoleBinding, `{"metadata":{"name":"cluster-admin"},"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:masters"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"}}`, ""},
		{"SelfSubjectAccessReview resource", SelfSubjectAccessReview, `{"metadata":{"creationTimestamp":null},"spec":{"resourceAttributes":{"namespace":"team-a","verb":"list","group":"apps","version":"v1","resource":"deployments","subresource":"scale","name":"web","fieldSelector":{"rawSelector":"spec.nodeName=n1","requirements":[{"key":"spec.nodeName","operator":"In","values":["n1"]}]},"labelSelector":{"requirements":[{"key":"app","operator":"Exists"}]}}},"status":{"allowed":true,"reason":"RBAC: allowed by RoleBinding \"b\""}}`, ""},
		{"SelfSubjectAccessReview non-resource", SelfSubjectAccessReview, `{"metadata":{},"spec":{"nonResourceAttributes":{"path":"/healthz","verb":"get"}},"status":{"allowed":false,"denied":true,"evaluationError":"e"}}`, ""},
		{"SelfSubjectRulesReview", SelfSubjectRulesReview, `{"metadata":{},"spec":{"namespace":"team-a"},"status":{"resourceRules":[{"verbs":["create"],"apiGroups":["authorization.k8s.io"],"resources":["selfsubjectaccessreviews","selfsubjectrulesreviews"]},{"verbs":["get"],"apiGroups":[""],"resources":["pods"],"resourceNames":["a"]}],"nonResourceRules":[{"verbs":["get"],"nonResourceURLs":["/api","/api/*"]}],"incomplete":false}}`, ""},
		{"SubjectAccessReview", SubjectAccessReview, `{"metadata":{},"spec":{"resourceAttributes":{"verb":"get","resource":"secrets"},"user":"jane","groups":["dev","system:authenticated"],"extra":{"scopes":["a","b"],"empty":[],"blank":[""]},"uid":"u-1"},"status":{"allowed":false}}`, ""},
		// As k8s.io/api's generated code: a map's ExtraValue is written
		// whole, nil or empty, and read back as ExtraValue{}.
		{"SubjectAccessReview extra null reads as []", SubjectAccessReview, `{"spec":{"extra":{"k":null}}}`, `{"spec":{"extra":{"k":[]}}}`},
		{"LocalSubjectAccessReview", LocalSubjectAccessReview, `{"metadata":{"namespace":"team-a"},"spec":{"resourceAttributes":{"namespace":"team-a","verb":"delete","resource":"pods"},"user":"system:serviceaccount:team-a:default"},"status":{"allowed":true}}`, ""},
		{"SelfSubjectReview", SelfSubjectReview, `{"metadata":{"creationTimestamp":"2026-11-23T07:38:04Z"},"status":{"userInfo":{"username":"jane","uid":"u-1","groups":["dev","system:authenticated"],"extra":{"authentication.kubernetes.io/credential-id":["JTI=abc"]}}}}`, ""},
		{"TokenReview", TokenReview, `{"metadata":{},"spec":{"token":"eyJhbGciOi.x.y","audiences":["https://kubernetes.default.svc"]},"status":{"authenticated":true,"user":{"username":"system:serviceaccount:ns:sa","uid":"u","groups":["system:serviceaccounts"],"extra":{"authentication.kubernetes.io/pod-name":["web-0"]}},"audiences":["https://kubernetes.default.svc"]}}`, ""},
		{"TokenReview failed", TokenReview, `{"metadata":{},"spec":{"token":"bad"},"status":{"user":{},"error":"invalid bearer token"}}`, ""},
		{"TokenRequest", TokenRequest, `{"metadata":{"name":"sa","namespace":"ns"},"spec":{"audiences":["api"],"expirationSeconds":3600,"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"web-0","uid":"p-1"},"attestations":{"a":["x"]}},"status":{"token":"","expirationTimestamp":"2026-11-23T08:38:04Z"}}`, ""},
		{"TokenRequest zero expirationSeconds kept", TokenRequest, `{"spec":{"expirationSeconds":0},"status":{"expirationTimestamp":null}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Marshal(tt.md, obj(t, tt.in))
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			got, err := Unmarshal(tt.md, b)
			if err != nil {
				t.Fatalf("Unmarshal(% x): %v", b, err)
			}
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if g, w := toJSON(t, got), toJSON(t, obj(t, want)); g != w {
				t.Errorf("got  %s\nwant %s", g, w)
			}
			b2, err := Marshal(tt.md, got)
			if err != nil {
				t.Fatalf("Marshal again: %v", err)
			}
			if !bytes.Equal(b, b2) && tt.want == "" {
				t.Errorf("re-encoding differs:\n% x\n% x", b, b2)
			}
		})
	}
}

// An ExtraValue (a named []string) is a message of repeated field 1 on the
// wire and an array of strings in JSON.
func TestStringListMessages(t *testing.T) {
	b, err := Marshal(SubjectAccessReview, obj(t, `{"spec":{"extra":{"k":["a",""]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	// spec (2) { extra (5) { key "k", value (2) { items "a", items "" } } }
	want := []byte{0x12, 0x0c, 0x2a, 0x0a, 0x0a, 0x01, 'k', 0x12, 0x05, 0x0a, 0x01, 'a', 0x0a, 0x00}
	if !bytes.Equal(b, want) {
		t.Errorf("got % x; want % x", b, want)
	}
	for _, tt := range []struct{ in, err string }{
		{`{"spec":{"extra":{"k":"a"}}}`, "spec.extra.k: expected array of strings, got string"},
		{`{"spec":{"extra":{"k":["a",1]}}}`, "spec.extra.k[1]: expected string, got number"},
	} {
		if _, err := Marshal(SubjectAccessReview, obj(t, tt.in)); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Marshal(%s): got %v; want %q", tt.in, err, tt.err)
		}
	}
	// A wrong wire type for items is an error, not a silent drop.
	bad := []byte{0x12, 0x09, 0x2a, 0x07, 0x0a, 0x01, 'k', 0x12, 0x02, 0x08, 0x01}
	if _, err := Unmarshal(SubjectAccessReview, bad); err == nil {
		t.Error("Unmarshal of items as a varint: got no error")
	}
}

// Fields Kubernetes' JSON writes without omitempty keep their zero values.
func TestBuiltinKindsPresence(t *testing.T) {
	for _, tt := range []struct {
		md   protoreflect.MessageDescriptor
		in   string
		want []byte
	}{
		{SubjectAccessReview, `{"status":{"allowed":false}}`, []byte{0x1a, 0x02, 0x08, 0x00}},
		{SubjectAccessReview, `{"status":{"denied":false}}`, []byte{0x1a, 0x00}},
		{SelfSubjectRulesReview, `{"status":{"incomplete":false}}`, []byte{0x1a, 0x02, 0x18, 0x00}},
		{RoleBinding, `{"roleRef":{"apiGroup":"","kind":"","name":""}}`, []byte{0x1a, 0x06, 0x0a, 0x00, 0x12, 0x00, 0x1a, 0x00}},
		{RoleBinding, `{"subjects":[{"kind":"User","apiGroup":"","name":"a","namespace":""}]}`, []byte{0x12, 0x09, 0x0a, 0x04, 'U', 's', 'e', 'r', 0x1a, 0x01, 'a'}},
		{TokenReview, `{"status":{"authenticated":false}}`, []byte{0x1a, 0x00}},
	} {
		b, err := Marshal(tt.md, obj(t, tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, tt.want) {
			t.Errorf("%s %s: got % x; want % x", tt.md.Name(), tt.in, b, tt.want)
		}
	}
}

// FuzzUnmarshalBuiltinKinds is FuzzUnmarshal for the rbac.v1,
// authorization.v1 and authentication.v1 kinds (kind picks the message),
// with the ExtraValue string lists among them.
func FuzzUnmarshalBuiltinKinds(f *testing.F) {
	kinds := []protoreflect.MessageDescriptor{Role, ClusterRole, RoleBinding, ClusterRoleBinding, SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview, TokenReview, TokenRequest}
	f.Add(uint8(0), mustMarshal(f, Role, `{"metadata":{"name":"r"},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`))
	f.Add(uint8(1), mustMarshal(f, ClusterRole, `{"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"a":"b"}},{}]}}`))
	f.Add(uint8(2), mustMarshal(f, RoleBinding, `{"subjects":[{"kind":"User","name":"u"}],"roleRef":{"apiGroup":"","kind":"Role","name":"r"}}`))
	f.Add(uint8(4), mustMarshal(f, SubjectAccessReview, `{"spec":{"extra":{"k":["a",""],"n":null},"resourceAttributes":{"fieldSelector":{"requirements":[{"key":"k","operator":"In"}]}}},"status":{"allowed":false}}`))
	f.Add(uint8(7), mustMarshal(f, SelfSubjectRulesReview, `{"status":{"resourceRules":[{"verbs":["*"]}],"incomplete":false}}`))
	f.Add(uint8(9), mustMarshal(f, TokenReview, `{"spec":{"token":"t"},"status":{"user":{"extra":{"k":["v"]}}}}`))
	f.Add(uint8(10), mustMarshal(f, TokenRequest, `{"spec":{"expirationSeconds":0,"attestations":{"a":["x"]}},"status":{"expirationTimestamp":null}}`))
	f.Add(uint8(4), []byte{0x12, 0x09, 0x2a, 0x07, 0x0a, 0x01, 'k', 0x12, 0x02, 0x08, 0x01})
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		md := kinds[int(kind)%len(kinds)]
		fuzzRoundTrip(t, md, b)
	})
}

// Inline fields (InlinePrefix): a Volume's source is its own message in
// protobuf and the Volume's own keys in JSON.
func TestInlineFields(t *testing.T) {
	volume := mustDescriptor(t, "k8s.io.api.core.v1.Volume")
	probe := mustDescriptor(t, "k8s.io.api.core.v1.Probe")
	tests := []struct {
		name string
		md   protoreflect.MessageDescriptor
		in   string
		want []byte // Marshal's bytes; nil: not checked
	}{
		// name (1) "data", volumeSource (2) {emptyDir (2) {}}
		{"Volume emptyDir", volume, `{"name":"data","emptyDir":{}}`, []byte{0x0a, 0x04, 'd', 'a', 't', 'a', 0x12, 0x02, 0x12, 0x00}},
		// an empty source is written, as Go's generated code writes a value field
		{"Volume no source", volume, `{"name":"x"}`, []byte{0x0a, 0x01, 'x', 0x12, 0x00}},
		{"Volume configMap", volume, `{"name":"cfg","configMap":{"name":"c","defaultMode":420,"items":[{"key":"a","path":"b"}]}}`, nil},
		{"Probe httpGet", probe, `{"httpGet":{"path":"/","port":80,"scheme":"HTTP"},"timeoutSeconds":1,"periodSeconds":10}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Marshal(tt.md, obj(t, tt.in))
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if tt.want != nil && !bytes.Equal(b, tt.want) {
				t.Errorf("Marshal: got % x; want % x", b, tt.want)
			}
			got, err := Unmarshal(tt.md, b)
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if g, w := toJSON(t, got), toJSON(t, obj(t, tt.in)); g != w {
				t.Errorf("round trip: got %s; want %s", g, w)
			}
		})
	}
	// An error inside an inline field names the parent's key, as JSON has it.
	_, err := Marshal(volume, obj(t, `{"name":"x","emptyDir":{"sizeLimit":true}}`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Path != "emptyDir.sizeLimit" {
		t.Errorf("Marshal of a bad inline value: got %v; want an error at emptyDir.sizeLimit", err)
	}
}

func mustDescriptor(t *testing.T, name string) protoreflect.MessageDescriptor {
	t.Helper()
	d, err := Files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		t.Fatal(err)
	}
	return d.(protoreflect.MessageDescriptor)
}
