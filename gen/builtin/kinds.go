package main

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// kind is one built-in kind kapi serves: its group, version and plural
// (which name its discovery entry and OpenAPI schema in kube's committed
// documents) and its Go type (which gives the protobuf message).
type kind struct {
	group, version, plural string
	obj, list              any
}

// kinds are the built-in kinds of the builtin package, in the order it
// registers them. Namespaces, configmaps, the RBAC kinds and the reviews
// are the registry's own.
var kinds = []kind{
	{"", "v1", "pods", corev1.Pod{}, corev1.PodList{}},
	{"", "v1", "services", corev1.Service{}, corev1.ServiceList{}},
	//lint:ignore SA1019 kube-apiserver v1.37 still serves core/v1 Endpoints
	{"", "v1", "endpoints", corev1.Endpoints{}, corev1.EndpointsList{}},
	{"", "v1", "secrets", corev1.Secret{}, corev1.SecretList{}},
	{"", "v1", "serviceaccounts", corev1.ServiceAccount{}, corev1.ServiceAccountList{}},
	{"", "v1", "events", corev1.Event{}, corev1.EventList{}},
	{"", "v1", "persistentvolumeclaims", corev1.PersistentVolumeClaim{}, corev1.PersistentVolumeClaimList{}},
	{"", "v1", "persistentvolumes", corev1.PersistentVolume{}, corev1.PersistentVolumeList{}},
	{"", "v1", "nodes", corev1.Node{}, corev1.NodeList{}},
	{"", "v1", "limitranges", corev1.LimitRange{}, corev1.LimitRangeList{}},
	{"", "v1", "resourcequotas", corev1.ResourceQuota{}, corev1.ResourceQuotaList{}},
	{"", "v1", "replicationcontrollers", corev1.ReplicationController{}, corev1.ReplicationControllerList{}},
	{"", "v1", "podtemplates", corev1.PodTemplate{}, corev1.PodTemplateList{}},
	{"apps", "v1", "deployments", appsv1.Deployment{}, appsv1.DeploymentList{}},
	{"apps", "v1", "statefulsets", appsv1.StatefulSet{}, appsv1.StatefulSetList{}},
	{"apps", "v1", "replicasets", appsv1.ReplicaSet{}, appsv1.ReplicaSetList{}},
	{"apps", "v1", "daemonsets", appsv1.DaemonSet{}, appsv1.DaemonSetList{}},
	{"apps", "v1", "controllerrevisions", appsv1.ControllerRevision{}, appsv1.ControllerRevisionList{}},
	{"batch", "v1", "jobs", batchv1.Job{}, batchv1.JobList{}},
	{"batch", "v1", "cronjobs", batchv1.CronJob{}, batchv1.CronJobList{}},
	{"autoscaling", "v1", "horizontalpodautoscalers", autoscalingv1.HorizontalPodAutoscaler{}, autoscalingv1.HorizontalPodAutoscalerList{}},
	{"autoscaling", "v2", "horizontalpodautoscalers", autoscalingv2.HorizontalPodAutoscaler{}, autoscalingv2.HorizontalPodAutoscalerList{}},
	{"coordination.k8s.io", "v1", "leases", coordinationv1.Lease{}, coordinationv1.LeaseList{}},
	{"events.k8s.io", "v1", "events", eventsv1.Event{}, eventsv1.EventList{}},
	{"discovery.k8s.io", "v1", "endpointslices", discoveryv1.EndpointSlice{}, discoveryv1.EndpointSliceList{}},
	{"networking.k8s.io", "v1", "ingresses", networkingv1.Ingress{}, networkingv1.IngressList{}},
	{"networking.k8s.io", "v1", "ingressclasses", networkingv1.IngressClass{}, networkingv1.IngressClassList{}},
	{"networking.k8s.io", "v1", "networkpolicies", networkingv1.NetworkPolicy{}, networkingv1.NetworkPolicyList{}},
	{"policy", "v1", "poddisruptionbudgets", policyv1.PodDisruptionBudget{}, policyv1.PodDisruptionBudgetList{}},
	{"storage.k8s.io", "v1", "storageclasses", storagev1.StorageClass{}, storagev1.StorageClassList{}},
	{"storage.k8s.io", "v1", "csidrivers", storagev1.CSIDriver{}, storagev1.CSIDriverList{}},
	{"storage.k8s.io", "v1", "csinodes", storagev1.CSINode{}, storagev1.CSINodeList{}},
	{"storage.k8s.io", "v1", "csistoragecapacities", storagev1.CSIStorageCapacity{}, storagev1.CSIStorageCapacityList{}},
	{"storage.k8s.io", "v1", "volumeattachments", storagev1.VolumeAttachment{}, storagev1.VolumeAttachmentList{}},
	{"storage.k8s.io", "v1", "volumeattributesclasses", storagev1.VolumeAttributesClass{}, storagev1.VolumeAttributesClassList{}},
	{"node.k8s.io", "v1", "runtimeclasses", nodev1.RuntimeClass{}, nodev1.RuntimeClassList{}},
	{"scheduling.k8s.io", "v1", "priorityclasses", schedulingv1.PriorityClass{}, schedulingv1.PriorityClassList{}},
	{"certificates.k8s.io", "v1", "certificatesigningrequests", certificatesv1.CertificateSigningRequest{}, certificatesv1.CertificateSigningRequestList{}},
}

// extraMessages are messages the protobuf files hold besides the kinds':
// the registry's own core/v1 kinds (their file is generated whole) and the
// bodies of subresources (pods/binding, pods/eviction, scale).
var extraMessages = []any{
	corev1.Namespace{}, corev1.NamespaceList{}, corev1.ConfigMap{}, corev1.ConfigMapList{},
	corev1.Binding{}, policyv1.Eviction{}, autoscalingv1.Scale{},
}

// handWritten are the packages whose .proto files stay hand-written: a
// message of theirs is referenced, never generated.
var handWritten = map[string]bool{
	"k8s.io/apimachinery/pkg/apis/meta/v1":                     true,
	"k8s.io/apimachinery/pkg/runtime":                          true,
	"k8s.io/apimachinery/pkg/api/resource":                     true,
	"k8s.io/apimachinery/pkg/util/intstr":                      true,
	reflect.TypeFor[authenticationv1.TokenRequest]().PkgPath(): true,
}

// id names k in the generator's maps.
func (k kind) id() string { return k.group + "/" + k.version + "/" + k.plural }
