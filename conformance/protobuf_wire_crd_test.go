package conformance

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/codec/protobuf"
)

// apiextensions.k8s.io/v1 CustomResourceDefinitions in protobuf, which
// the apiextensions clientset sends by default: against
// k8s.io/apiextensions-apiserver's generated code both ways, and the
// clientset itself against kapi.

func pbwJSONRaw(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

// pbwCRD uses every schema field, each union in each of its forms, and
// the conversion, subresource and status fields.
func pbwCRD() *apiextensionsv1.CustomResourceDefinition {
	f, i, yes, no := 1.5, int64(3), true, false
	str := func(s string) *string { return &s }
	reason := apiextensionsv1.FieldValueInvalid
	leaf := apiextensionsv1.JSONSchemaProps{Type: "string", Enum: []apiextensionsv1.JSON{*pbwJSONRaw(`"a"`), {}, *pbwJSONRaw(`{"x":1}`)}} // {}: null, as JSON decodes it
	schema := apiextensionsv1.JSONSchemaProps{
		ID: "id", Schema: "http://json-schema.org/draft-04/schema#", Ref: str("#/definitions/x"), Description: "d", Type: "object", Format: "f", Title: "t",
		Default: pbwJSONRaw(`{"a":[1,2]}`), Maximum: &f, ExclusiveMaximum: true, Minimum: &f, ExclusiveMinimum: true,
		MaxLength: &i, MinLength: &i, Pattern: "^a$", MaxItems: &i, MinItems: &i, UniqueItems: true, MultipleOf: &f,
		MaxProperties: &i, MinProperties: &i, Required: []string{"spec", ""},
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{JSONSchemas: []apiextensionsv1.JSONSchemaProps{leaf, {Type: "integer"}}},
		AllOf: []apiextensionsv1.JSONSchemaProps{leaf}, OneOf: []apiextensionsv1.JSONSchemaProps{leaf}, AnyOf: []apiextensionsv1.JSONSchemaProps{{}},
		Not: &leaf,
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", XPreserveUnknownFields: &yes, Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &leaf},
				AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &leaf}},
			"status": {Type: "object", XPreserveUnknownFields: &no, AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: false}},
			"open":   {AdditionalItems: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true}},
		},
		PatternProperties: map[string]apiextensionsv1.JSONSchemaProps{"^x-": leaf},
		Dependencies: apiextensionsv1.JSONSchemaDependencies{
			"a": {Property: []string{"b", "c"}},
			"d": {Schema: &leaf},
		},
		Definitions:  apiextensionsv1.JSONSchemaDefinitions{"x": leaf},
		ExternalDocs: &apiextensionsv1.ExternalDocumentation{Description: "docs", URL: "https://example.com"},
		Example:      pbwJSONRaw(`"e"`), Nullable: true,
		XEmbeddedResource: true, XIntOrString: true, XListMapKeys: []string{"name"}, XListType: str("map"), XMapType: str("atomic"),
		XValidations: apiextensionsv1.ValidationRules{
			{Rule: "self.a > 0", Message: "m", MessageExpression: "'x'", Reason: &reason, FieldPath: ".a", OptionalOldSelf: &no},
			{Rule: "true"},
		},
	}
	port := int32(8443)
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", CreationTimestamp: pbwTime(1_800_000_000), Generation: 2},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped, PreserveUnknownFields: false,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", ShortNames: []string{"wd"}, Kind: "Widget", ListKind: "WidgetList", Categories: []string{"all"}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
					Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
						Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: str(".status.selector")}},
					AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Size", Type: "integer", Format: "int32", Description: "d", Priority: 1, JSONPath: ".spec.size"}},
					SelectableFields:         []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}}},
				{Name: "v1beta1", Served: false, Storage: false, Deprecated: true, DeprecationWarning: str("old")},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig: &apiextensionsv1.WebhookClientConfig{
					Service:  &apiextensionsv1.ServiceReference{Namespace: "ns", Name: "conv", Path: str("/convert"), Port: &port},
					CABundle: []byte("-----BEGIN CERTIFICATE-----"),
				},
				ConversionReviewVersions: []string{"v1", "v1beta1"},
			}},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{
			Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
				{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, LastTransitionTime: pbwTime(1_800_000_001), Reason: "InitialNamesAccepted", Message: "the initial names have been accepted", ObservedGeneration: 2},
			},
			AcceptedNames:  apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			StoredVersions: []string{"v1"}, ObservedGeneration: 2,
		},
	}
}

func TestProtobufWireCRD(t *testing.T) {
	codec := pbwCodecOf(protobuf.CustomResourceDefinition, protobuf.Marshal, protobuf.Unmarshal)
	url := "https://conv.example.com/convert"
	newCRD := func() pbwMessage { return &apiextensionsv1.CustomResourceDefinition{} }
	for _, tt := range []pbwCase{
		{"CustomResourceDefinition", codec, pbwCRD(), newCRD},
		{"CustomResourceDefinition empty", codec, &apiextensionsv1.CustomResourceDefinition{}, newCRD},
		{"CustomResourceDefinition url webhook", codec, &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: &url}}}}}, newCRD},
	} {
		pbwBothWays(t, tt)
	}
}

// The apiextensions clientset, as operators use it to install their CRDs:
// protobuf bodies and answers, create to delete, with a watch.
func TestCRDClientsetProtobuf(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, err := apiextensionsclient.NewForConfig(e.config())
	if err != nil {
		t.Fatal(err)
	}
	crds := c.ApiextensionsV1().CustomResourceDefinitions()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(crontabsCRD), &crd); err != nil {
		t.Fatal(err)
	}
	w, err := crds.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	created, err := crds.Create(ctx, &crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !apiequality.Semantic.DeepEqual(created.Spec.Versions[0].Schema, crd.Spec.Versions[0].Schema) {
		got, _ := json.Marshal(created.Spec.Versions[0].Schema)
		t.Errorf("the schema came back as %s", got)
	}
	for deadline := time.Now().Add(waitTimeout); ; time.Sleep(20 * time.Millisecond) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if established(pbwToMap(t, got)) {
			created = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not established: %+v", got.Status)
		}
	}
	created.Spec.Versions[0].AdditionalPrinterColumns = append(created.Spec.Versions[0].AdditionalPrinterColumns,
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"})
	updated, err := crds.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if n := len(updated.Spec.Versions[0].AdditionalPrinterColumns); n != 2 || updated.Generation != 2 {
		t.Errorf("after the update: %d columns, generation %d; want 2, 2", n, updated.Generation)
	}
	list, err := crds.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + crd.Name})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != crd.Name {
		t.Fatalf("list: %v %+v", err, list)
	}
	if err := crds.Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	seen := map[watch.EventType]bool{}
	for !seen[watch.Added] || !seen[watch.Modified] {
		select {
		case ev := <-w.ResultChan():
			if _, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition); !ok {
				t.Fatalf("watch event %s of %T", ev.Type, ev.Object)
			}
			seen[ev.Type] = true
		case <-ctx.Done():
			t.Fatalf("watch events seen: %v", seen)
		}
	}
	proto := 0
	for _, r := range e.log.all() {
		if r.ContentType == "application/vnd.kubernetes.protobuf" {
			proto++
		}
	}
	if proto == 0 {
		t.Errorf("no request or answer in protobuf: %v", e.log.all())
	}
}

func pbwToMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
