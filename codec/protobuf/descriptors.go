package protobuf

import (
	_ "embed"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// descriptorSet is the FileDescriptorSet compiled from proto/ by `make proto`.
//
//go:embed descriptors.binpb
var descriptorSet []byte

// Files holds kapi's descriptors: meta.v1 (with the legacy discovery
// documents), runtime, intstr, resource, the rbac.v1, authorization.v1,
// authentication.v1, admissionregistration.v1 and apiextensions.v1 messages
// kapi serves, apidiscovery.v2 (the aggregated discovery document), and the
// built-in kinds' (core.v1, apps.v1, batch.v1, …; package builtin). It is
// kapi's own registry, not protoregistry.GlobalFiles, so it never clashes
// with k8s.io/api linked into the same program. Build descriptors of your own messages that import
// "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto" with
// protodesc.NewFile(fd, Files). Files must not be changed.
var Files *protoregistry.Files

// Descriptors of the messages kapi encodes itself, from [Files]. The
// ListMeta descriptor is not among them (the name is the [ListMeta] struct
// that [AppendList] takes); find it in Files as
// "k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta".
var (
	ObjectMeta                protoreflect.MessageDescriptor // k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta
	Status                    protoreflect.MessageDescriptor // meta.v1.Status
	DeleteOptions             protoreflect.MessageDescriptor // meta.v1.DeleteOptions
	PartialObjectMetadata     protoreflect.MessageDescriptor // meta.v1.PartialObjectMetadata
	PartialObjectMetadataList protoreflect.MessageDescriptor // meta.v1.PartialObjectMetadataList
	WatchEvent                protoreflect.MessageDescriptor // meta.v1.WatchEvent
	Namespace                 protoreflect.MessageDescriptor // k8s.io.api.core.v1.Namespace
	NamespaceList             protoreflect.MessageDescriptor // core.v1.NamespaceList
	ConfigMap                 protoreflect.MessageDescriptor // core.v1.ConfigMap
	ConfigMapList             protoreflect.MessageDescriptor // core.v1.ConfigMapList

	Role                   protoreflect.MessageDescriptor // k8s.io.api.rbac.v1.Role
	RoleList               protoreflect.MessageDescriptor // rbac.v1.RoleList
	ClusterRole            protoreflect.MessageDescriptor // rbac.v1.ClusterRole
	ClusterRoleList        protoreflect.MessageDescriptor // rbac.v1.ClusterRoleList
	RoleBinding            protoreflect.MessageDescriptor // rbac.v1.RoleBinding
	RoleBindingList        protoreflect.MessageDescriptor // rbac.v1.RoleBindingList
	ClusterRoleBinding     protoreflect.MessageDescriptor // rbac.v1.ClusterRoleBinding
	ClusterRoleBindingList protoreflect.MessageDescriptor // rbac.v1.ClusterRoleBindingList

	SelfSubjectAccessReview  protoreflect.MessageDescriptor // k8s.io.api.authorization.v1.SelfSubjectAccessReview
	SelfSubjectRulesReview   protoreflect.MessageDescriptor // authorization.v1.SelfSubjectRulesReview
	SubjectAccessReview      protoreflect.MessageDescriptor // authorization.v1.SubjectAccessReview
	LocalSubjectAccessReview protoreflect.MessageDescriptor // authorization.v1.LocalSubjectAccessReview

	SelfSubjectReview protoreflect.MessageDescriptor // k8s.io.api.authentication.v1.SelfSubjectReview
	TokenReview       protoreflect.MessageDescriptor // authentication.v1.TokenReview
	TokenRequest      protoreflect.MessageDescriptor // authentication.v1.TokenRequest

	MutatingWebhookConfiguration       protoreflect.MessageDescriptor // k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration
	MutatingWebhookConfigurationList   protoreflect.MessageDescriptor // admissionregistration.v1.MutatingWebhookConfigurationList
	ValidatingWebhookConfiguration     protoreflect.MessageDescriptor // admissionregistration.v1.ValidatingWebhookConfiguration
	ValidatingWebhookConfigurationList protoreflect.MessageDescriptor // admissionregistration.v1.ValidatingWebhookConfigurationList

	CustomResourceDefinition     protoreflect.MessageDescriptor // k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition
	CustomResourceDefinitionList protoreflect.MessageDescriptor // apiextensions.v1.CustomResourceDefinitionList

	// The discovery documents: /api, /apis, /apis/G, /api/v1 and /apis/G/V,
	// and the aggregated list (/api and /apis as apidiscovery.k8s.io/v2).
	APIVersions           protoreflect.MessageDescriptor // k8s.io.apimachinery.pkg.apis.meta.v1.APIVersions
	APIGroupList          protoreflect.MessageDescriptor // meta.v1.APIGroupList
	APIGroup              protoreflect.MessageDescriptor // meta.v1.APIGroup
	APIResourceList       protoreflect.MessageDescriptor // meta.v1.APIResourceList
	APIGroupDiscoveryList protoreflect.MessageDescriptor // k8s.io.api.apidiscovery.v2.APIGroupDiscoveryList
)

const (
	metaV1  = "k8s.io.apimachinery.pkg.apis.meta.v1."
	coreV1  = "k8s.io.api.core.v1."
	rbacV1  = "k8s.io.api.rbac.v1."
	authzV1 = "k8s.io.api.authorization.v1."
	authnV1 = "k8s.io.api.authentication.v1."
	admrV1  = "k8s.io.api.admissionregistration.v1."
	discV2  = "k8s.io.api.apidiscovery.v2."
)

func init() {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(descriptorSet, &set); err != nil {
		panic("protobuf: embedded descriptor set: " + err.Error())
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		panic("protobuf: embedded descriptor set: " + err.Error())
	}
	Files = files
	for _, d := range []struct {
		v    *protoreflect.MessageDescriptor
		name protoreflect.FullName
	}{
		{&ObjectMeta, metaV1 + "ObjectMeta"},
		{&Status, metaV1 + "Status"},
		{&DeleteOptions, metaV1 + "DeleteOptions"},
		{&PartialObjectMetadata, metaV1 + "PartialObjectMetadata"},
		{&PartialObjectMetadataList, metaV1 + "PartialObjectMetadataList"},
		{&WatchEvent, metaV1 + "WatchEvent"},
		{&Namespace, coreV1 + "Namespace"},
		{&NamespaceList, coreV1 + "NamespaceList"},
		{&ConfigMap, coreV1 + "ConfigMap"},
		{&ConfigMapList, coreV1 + "ConfigMapList"},
		{&Role, rbacV1 + "Role"},
		{&RoleList, rbacV1 + "RoleList"},
		{&ClusterRole, rbacV1 + "ClusterRole"},
		{&ClusterRoleList, rbacV1 + "ClusterRoleList"},
		{&RoleBinding, rbacV1 + "RoleBinding"},
		{&RoleBindingList, rbacV1 + "RoleBindingList"},
		{&ClusterRoleBinding, rbacV1 + "ClusterRoleBinding"},
		{&ClusterRoleBindingList, rbacV1 + "ClusterRoleBindingList"},
		{&SelfSubjectAccessReview, authzV1 + "SelfSubjectAccessReview"},
		{&SelfSubjectRulesReview, authzV1 + "SelfSubjectRulesReview"},
		{&SubjectAccessReview, authzV1 + "SubjectAccessReview"},
		{&LocalSubjectAccessReview, authzV1 + "LocalSubjectAccessReview"},
		{&SelfSubjectReview, authnV1 + "SelfSubjectReview"},
		{&TokenReview, authnV1 + "TokenReview"},
		{&TokenRequest, authnV1 + "TokenRequest"},
		{&MutatingWebhookConfiguration, admrV1 + "MutatingWebhookConfiguration"},
		{&MutatingWebhookConfigurationList, admrV1 + "MutatingWebhookConfigurationList"},
		{&ValidatingWebhookConfiguration, admrV1 + "ValidatingWebhookConfiguration"},
		{&ValidatingWebhookConfigurationList, admrV1 + "ValidatingWebhookConfigurationList"},
		{&CustomResourceDefinition, apiextV1 + "CustomResourceDefinition"},
		{&CustomResourceDefinitionList, apiextV1 + "CustomResourceDefinitionList"},
		{&APIVersions, metaV1 + "APIVersions"},
		{&APIGroupList, metaV1 + "APIGroupList"},
		{&APIGroup, metaV1 + "APIGroup"},
		{&APIResourceList, metaV1 + "APIResourceList"},
		{&APIGroupDiscoveryList, discV2 + "APIGroupDiscoveryList"},
	} {
		*d.v = mustMessage(d.name)
	}
}

func mustMessage(name protoreflect.FullName) protoreflect.MessageDescriptor {
	d, err := Files.FindDescriptorByName(name)
	if err != nil {
		panic("protobuf: embedded descriptor set: " + err.Error())
	}
	return d.(protoreflect.MessageDescriptor)
}
