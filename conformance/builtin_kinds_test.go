//lint:file-ignore SA1019 core/v1 Endpoints is deprecated, but kube-apiserver serves it, and so does kapi

package conformance

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
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
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// typedClient is the part of every typed client (PodInterface,
// DeploymentInterface, …) the built-in kinds' test drives.
type typedClient[T runtime.Object, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (T, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

type statusUpdater[T runtime.Object] interface {
	UpdateStatus(context.Context, T, metav1.UpdateOptions) (T, error)
}

// kindCase is one built-in kind's round of the typed clientset's verbs.
type kindCase struct {
	name string
	run  func(t *testing.T, cs *kubernetes.Clientset, ns string)
}

// crud builds the case of one kind: new makes a minimal valid object
// named name; change alters it for the update; status sets something in
// its status (nil: the kind has no status subresource). Patches set the
// label "patched" (strategic merge) and "applied" (server-side apply).
func crud[T runtime.Object, L runtime.Object](name string, client func(cs *kubernetes.Clientset, ns string) typedClient[T, L],
	newObj func(name, ns string) T, change func(T), status func(T)) kindCase {
	return kindCase{name: name, run: func(t *testing.T, cs *kubernetes.Clientset, ns string) {
		ctx := testContext(t)
		c := client(cs, ns)
		obj := newObj("obj-1", ns)
		created, err := c.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		m := mustMeta(t, created)
		if m.GetUID() == "" || m.GetResourceVersion() == "" || m.GetCreationTimestamp().Time.IsZero() || m.GetName() != "obj-1" {
			t.Fatalf("created metadata: name %q uid %q rv %q created %v; want all set", m.GetName(), m.GetUID(), m.GetResourceVersion(), m.GetCreationTimestamp())
		}
		w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: m.GetResourceVersion()})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()

		got, err := c.Get(ctx, "obj-1", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if rv := mustMeta(t, got).GetResourceVersion(); rv != m.GetResourceVersion() {
			t.Errorf("get: resourceVersion %s; want %s", rv, m.GetResourceVersion())
		}
		l, err := c.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if items, err := meta.ExtractList(l); err != nil || len(items) != 1 {
			t.Errorf("list: %d items (%v); want 1", len(items), err)
		}

		change(got)
		updated, err := c.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Modified {
				t.Errorf("watch: got %s %v; want MODIFIED", ev.Type, ev.Object)
			} else if em := mustMeta(t, ev.Object); em.GetResourceVersion() != mustMeta(t, updated).GetResourceVersion() {
				t.Errorf("watch: MODIFIED at rv %s; want %s", em.GetResourceVersion(), mustMeta(t, updated).GetResourceVersion())
			}
		case <-ctx.Done():
			t.Fatalf("watch: no event after the update")
		}

		patched, err := c.Patch(ctx, "obj-1", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("strategic merge patch: %v", err)
		}
		if mustMeta(t, patched).GetLabels()["patched"] != "yes" {
			t.Errorf("strategic merge patch: labels %v; want patched=yes", mustMeta(t, patched).GetLabels())
		}
		gvk := mustGVK(t, cs, created)
		apply := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":"obj-1","labels":{"applied":"yes"}}}`, gvk.GroupVersion().String(), gvk.Kind)
		applied, err := c.Patch(ctx, "obj-1", types.ApplyPatchType, []byte(apply), metav1.PatchOptions{FieldManager: "conformance", Force: ptrTo(true)})
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		if l := mustMeta(t, applied).GetLabels(); l["applied"] != "yes" || l["patched"] != "yes" {
			t.Errorf("apply: labels %v; want applied=yes and patched=yes", l)
		}

		if status != nil {
			su, ok := c.(statusUpdater[T])
			if !ok {
				t.Fatalf("%T has no UpdateStatus", c)
			}
			status(applied)
			st, err := su.UpdateStatus(ctx, applied, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update status: %v", err)
			}
			if mustMeta(t, st).GetResourceVersion() == mustMeta(t, applied).GetResourceVersion() {
				t.Errorf("update status: resourceVersion unchanged; want a new one")
			}
		}

		// Background: a batch/v1 Job deleted without a policy orphans its
		// pods and stays, with the orphan finalizer, until the garbage
		// collector removes it (as on kube).
		if err := c.Delete(ctx, "obj-1", metav1.DeleteOptions{PropagationPolicy: ptrTo(metav1.DeletePropagationBackground)}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if _, err := c.Get(ctx, "obj-1", metav1.GetOptions{}); err == nil {
			t.Errorf("get after delete: found; want NotFound")
		}
	}}
}

func mustMeta(t *testing.T, obj runtime.Object) metav1.Object {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatalf("meta.Accessor(%T): %v", obj, err)
	}
	return m
}

// mustGVK is obj's kind from the clientset's scheme (typed objects come
// back without TypeMeta).
func mustGVK(t *testing.T, _ *kubernetes.Clientset, obj runtime.Object) schema.GroupVersionKind {
	t.Helper()
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		t.Fatalf("ObjectKinds(%T): %v", obj, err)
	}
	return gvks[0]
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}
}

func podTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec()}
}

func jobTemplate() corev1.PodTemplateSpec {
	t := podTemplate(nil)
	t.Spec.RestartPolicy = corev1.RestartPolicyNever
	return t
}

var app = map[string]string{"app": "web"}

func om(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func annotate(o metav1.Object) {
	a := o.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a["updated"] = "yes"
	o.SetAnnotations(a)
}

// builtinKindCases is every built-in kind kapi serves (builtin package).
func builtinKindCases() []kindCase {
	return []kindCase{
		crud("pods", func(cs *kubernetes.Clientset, ns string) typedClient[*corev1.Pod, *corev1.PodList] {
			return cs.CoreV1().Pods(ns)
		},
			func(n, _ string) *corev1.Pod { return &corev1.Pod{ObjectMeta: om(n), Spec: podSpec()} },
			func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" },
			func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }),
		crud("services", func(cs *kubernetes.Clientset, ns string) typedClient[*corev1.Service, *corev1.ServiceList] {
			return cs.CoreV1().Services(ns)
		},
			func(n, _ string) *corev1.Service {
				return &corev1.Service{ObjectMeta: om(n), Spec: corev1.ServiceSpec{Selector: app, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
			},
			func(s *corev1.Service) { s.Spec.Ports[0].Port = 81 },
			func(s *corev1.Service) {
				s.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ok", LastTransitionTime: metav1.Now()}}
			}),
		crud("endpoints", func(cs *kubernetes.Clientset, ns string) typedClient[*corev1.Endpoints, *corev1.EndpointsList] {
			return cs.CoreV1().Endpoints(ns)
		},
			func(n, _ string) *corev1.Endpoints {
				return &corev1.Endpoints{ObjectMeta: om(n), Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}}
			},
			func(e *corev1.Endpoints) { e.Subsets[0].Ports[0].Port = 81 }, nil),
		crud("secrets", func(cs *kubernetes.Clientset, ns string) typedClient[*corev1.Secret, *corev1.SecretList] {
			return cs.CoreV1().Secrets(ns)
		},
			func(n, _ string) *corev1.Secret {
				return &corev1.Secret{ObjectMeta: om(n), Data: map[string][]byte{"a": []byte("b")}}
			},
			func(s *corev1.Secret) { s.Data["c"] = []byte("d") }, nil),
		crud("serviceaccounts", func(cs *kubernetes.Clientset, ns string) typedClient[*corev1.ServiceAccount, *corev1.ServiceAccountList] {
			return cs.CoreV1().ServiceAccounts(ns)
		},
			func(n, _ string) *corev1.ServiceAccount { return &corev1.ServiceAccount{ObjectMeta: om(n)} },
			func(s *corev1.ServiceAccount) { s.AutomountServiceAccountToken = ptrTo(false) }, nil),
		crud("events", func(cs *kubernetes.Clientset, ns string) typedClient[*corev1.Event, *corev1.EventList] {
			return cs.CoreV1().Events(ns)
		},
			func(n, ns string) *corev1.Event {
				return &corev1.Event{ObjectMeta: om(n), InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns},
					Reason: "Started", Message: "started", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "test"}}
			},
			func(e *corev1.Event) { e.Count = 2 }, nil),
		crud("persistentvolumeclaims", func(cs *kubernetes.Clientset, ns string) typedClient[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList] {
			return cs.CoreV1().PersistentVolumeClaims(ns)
		},
			func(n, _ string) *corev1.PersistentVolumeClaim {
				return &corev1.PersistentVolumeClaim{ObjectMeta: om(n), Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
			},
			annotateFn[*corev1.PersistentVolumeClaim],
			func(p *corev1.PersistentVolumeClaim) { p.Status.Phase = corev1.ClaimBound }),
		crud("persistentvolumes", func(cs *kubernetes.Clientset, _ string) typedClient[*corev1.PersistentVolume, *corev1.PersistentVolumeList] {
			return cs.CoreV1().PersistentVolumes()
		},
			func(n, _ string) *corev1.PersistentVolume {
				return &corev1.PersistentVolume{ObjectMeta: om(n), Spec: corev1.PersistentVolumeSpec{
					Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}}
			},
			func(p *corev1.PersistentVolume) { p.Spec.HostPath.Path = "/data2" },
			func(p *corev1.PersistentVolume) { p.Status.Phase = corev1.VolumeAvailable }),
		crud("nodes", func(cs *kubernetes.Clientset, _ string) typedClient[*corev1.Node, *corev1.NodeList] {
			return cs.CoreV1().Nodes()
		},
			func(n, _ string) *corev1.Node { return &corev1.Node{ObjectMeta: om(n)} },
			func(n *corev1.Node) { n.Spec.Unschedulable = true },
			func(n *corev1.Node) {
				n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
			}),
		crud("limitranges", func(cs *kubernetes.Clientset, ns string) typedClient[*corev1.LimitRange, *corev1.LimitRangeList] {
			return cs.CoreV1().LimitRanges(ns)
		},
			func(n, _ string) *corev1.LimitRange {
				return &corev1.LimitRange{ObjectMeta: om(n), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
					Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}}
			},
			func(l *corev1.LimitRange) { l.Spec.Limits[0].Default[corev1.ResourceCPU] = resource.MustParse("1") }, nil),
		crud("resourcequotas", func(cs *kubernetes.Clientset, ns string) typedClient[*corev1.ResourceQuota, *corev1.ResourceQuotaList] {
			return cs.CoreV1().ResourceQuotas(ns)
		},
			func(n, _ string) *corev1.ResourceQuota {
				return &corev1.ResourceQuota{ObjectMeta: om(n), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}}
			},
			func(q *corev1.ResourceQuota) { q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("20") },
			func(q *corev1.ResourceQuota) { q.Status.Hard = q.Spec.Hard }),
		crud("replicationcontrollers", func(cs *kubernetes.Clientset, ns string) typedClient[*corev1.ReplicationController, *corev1.ReplicationControllerList] {
			return cs.CoreV1().ReplicationControllers(ns)
		},
			func(n, _ string) *corev1.ReplicationController {
				t := podTemplate(app)
				return &corev1.ReplicationController{ObjectMeta: om(n), Spec: corev1.ReplicationControllerSpec{Replicas: ptrTo(int32(1)), Selector: app, Template: &t}}
			},
			func(r *corev1.ReplicationController) { r.Spec.Replicas = ptrTo(int32(2)) },
			func(r *corev1.ReplicationController) { r.Status.Replicas = 1 }),
		crud("deployments", func(cs *kubernetes.Clientset, ns string) typedClient[*appsv1.Deployment, *appsv1.DeploymentList] {
			return cs.AppsV1().Deployments(ns)
		},
			func(n, _ string) *appsv1.Deployment {
				return &appsv1.Deployment{ObjectMeta: om(n), Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: app}, Template: podTemplate(app)}}
			},
			func(d *appsv1.Deployment) { d.Spec.Replicas = ptrTo(int32(3)) },
			func(d *appsv1.Deployment) { d.Status.Replicas = 3 }),
		crud("statefulsets", func(cs *kubernetes.Clientset, ns string) typedClient[*appsv1.StatefulSet, *appsv1.StatefulSetList] {
			return cs.AppsV1().StatefulSets(ns)
		},
			func(n, _ string) *appsv1.StatefulSet {
				return &appsv1.StatefulSet{ObjectMeta: om(n), Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: app}, Template: podTemplate(app)}}
			},
			func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptrTo(int32(3)) },
			func(s *appsv1.StatefulSet) { s.Status.Replicas = 3 }),
		crud("replicasets", func(cs *kubernetes.Clientset, ns string) typedClient[*appsv1.ReplicaSet, *appsv1.ReplicaSetList] {
			return cs.AppsV1().ReplicaSets(ns)
		},
			func(n, _ string) *appsv1.ReplicaSet {
				return &appsv1.ReplicaSet{ObjectMeta: om(n), Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: app}, Template: podTemplate(app)}}
			},
			func(s *appsv1.ReplicaSet) { s.Spec.Replicas = ptrTo(int32(3)) },
			func(s *appsv1.ReplicaSet) { s.Status.Replicas = 3 }),
		crud("daemonsets", func(cs *kubernetes.Clientset, ns string) typedClient[*appsv1.DaemonSet, *appsv1.DaemonSetList] {
			return cs.AppsV1().DaemonSets(ns)
		},
			func(n, _ string) *appsv1.DaemonSet {
				return &appsv1.DaemonSet{ObjectMeta: om(n), Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: app}, Template: podTemplate(app)}}
			},
			func(s *appsv1.DaemonSet) { s.Spec.MinReadySeconds = 5 },
			func(s *appsv1.DaemonSet) { s.Status.DesiredNumberScheduled = 1 }),
		crud("controllerrevisions", func(cs *kubernetes.Clientset, ns string) typedClient[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList] {
			return cs.AppsV1().ControllerRevisions(ns)
		},
			func(n, _ string) *appsv1.ControllerRevision {
				return &appsv1.ControllerRevision{ObjectMeta: om(n), Revision: 1, Data: runtime.RawExtension{Raw: []byte(`{"spec":{}}`)}}
			},
			annotateFn[*appsv1.ControllerRevision], nil),
		crud("jobs", func(cs *kubernetes.Clientset, ns string) typedClient[*batchv1.Job, *batchv1.JobList] {
			return cs.BatchV1().Jobs(ns)
		},
			func(n, _ string) *batchv1.Job {
				return &batchv1.Job{ObjectMeta: om(n), Spec: batchv1.JobSpec{Template: jobTemplate()}}
			},
			func(j *batchv1.Job) { j.Spec.Parallelism = ptrTo(int32(2)) },
			func(j *batchv1.Job) { j.Status.Active = 1; j.Status.StartTime = ptrTo(metav1.Now()) }),
		crud("cronjobs", func(cs *kubernetes.Clientset, ns string) typedClient[*batchv1.CronJob, *batchv1.CronJobList] {
			return cs.BatchV1().CronJobs(ns)
		},
			func(n, _ string) *batchv1.CronJob {
				return &batchv1.CronJob{ObjectMeta: om(n), Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate()}}}}
			},
			func(c *batchv1.CronJob) { c.Spec.Suspend = ptrTo(true) },
			func(c *batchv1.CronJob) { c.Status.LastScheduleTime = ptrTo(metav1.Now()) }),
		crud("horizontalpodautoscalers v1", func(cs *kubernetes.Clientset, ns string) typedClient[*autoscalingv1.HorizontalPodAutoscaler, *autoscalingv1.HorizontalPodAutoscalerList] {
			return cs.AutoscalingV1().HorizontalPodAutoscalers(ns)
		},
			func(n, _ string) *autoscalingv1.HorizontalPodAutoscaler {
				return &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: om(n), Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 5}}
			},
			func(h *autoscalingv1.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 6 },
			func(h *autoscalingv1.HorizontalPodAutoscaler) { h.Status.CurrentReplicas = 2 }),
		crud("horizontalpodautoscalers v2", func(cs *kubernetes.Clientset, ns string) typedClient[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList] {
			return cs.AutoscalingV2().HorizontalPodAutoscalers(ns)
		},
			func(n, _ string) *autoscalingv2.HorizontalPodAutoscaler {
				return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om(n), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 5,
					Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
						Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptrTo(int32(80))}}}}}}
			},
			func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 6 },
			func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Status.DesiredReplicas = 2 }),
		crud("leases", func(cs *kubernetes.Clientset, ns string) typedClient[*coordinationv1.Lease, *coordinationv1.LeaseList] {
			return cs.CoordinationV1().Leases(ns)
		},
			func(n, _ string) *coordinationv1.Lease {
				return &coordinationv1.Lease{ObjectMeta: om(n), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptrTo("a"), LeaseDurationSeconds: ptrTo(int32(15)), AcquireTime: ptrTo(metav1.NowMicro())}}
			},
			func(l *coordinationv1.Lease) { l.Spec.RenewTime = ptrTo(metav1.NowMicro()) }, nil),
		crud("events.k8s.io", func(cs *kubernetes.Clientset, ns string) typedClient[*eventsv1.Event, *eventsv1.EventList] {
			return cs.EventsV1().Events(ns)
		},
			func(n, ns string) *eventsv1.Event {
				return &eventsv1.Event{ObjectMeta: om(n), EventTime: metav1.NowMicro(), ReportingController: "example.com/ctl", ReportingInstance: "ctl-1",
					Action: "Scale", Reason: "Scaled", Type: "Normal", Regarding: corev1.ObjectReference{Kind: "Deployment", Name: "web", Namespace: ns}}
			},
			// kube keeps an Event's note (message): a recorder updates its series
			func(e *eventsv1.Event) {
				e.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NowMicro()}
			}, nil),
		crud("endpointslices", func(cs *kubernetes.Clientset, ns string) typedClient[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList] {
			return cs.DiscoveryV1().EndpointSlices(ns)
		},
			func(n, _ string) *discoveryv1.EndpointSlice {
				return &discoveryv1.EndpointSlice{ObjectMeta: om(n), AddressType: discoveryv1.AddressTypeIPv4,
					Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}, Ports: []discoveryv1.EndpointPort{{Port: ptrTo(int32(80))}}}
			},
			func(e *discoveryv1.EndpointSlice) { e.Endpoints[0].Addresses = []string{"10.0.0.2"} }, nil),
		crud("ingresses", func(cs *kubernetes.Clientset, ns string) typedClient[*networkingv1.Ingress, *networkingv1.IngressList] {
			return cs.NetworkingV1().Ingresses(ns)
		},
			func(n, _ string) *networkingv1.Ingress {
				return &networkingv1.Ingress{ObjectMeta: om(n), Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}
			},
			func(i *networkingv1.Ingress) { i.Spec.IngressClassName = ptrTo("nginx") },
			func(i *networkingv1.Ingress) {
				i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "1.2.3.4"}}
			}),
		crud("ingressclasses", func(cs *kubernetes.Clientset, _ string) typedClient[*networkingv1.IngressClass, *networkingv1.IngressClassList] {
			return cs.NetworkingV1().IngressClasses()
		},
			func(n, _ string) *networkingv1.IngressClass {
				return &networkingv1.IngressClass{ObjectMeta: om(n), Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress"}}
			},
			annotateFn[*networkingv1.IngressClass], nil),
		crud("networkpolicies", func(cs *kubernetes.Clientset, ns string) typedClient[*networkingv1.NetworkPolicy, *networkingv1.NetworkPolicyList] {
			return cs.NetworkingV1().NetworkPolicies(ns)
		},
			func(n, _ string) *networkingv1.NetworkPolicy {
				return &networkingv1.NetworkPolicy{ObjectMeta: om(n), Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: app}}}
			},
			func(p *networkingv1.NetworkPolicy) {
				p.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
			}, nil),
		crud("poddisruptionbudgets", func(cs *kubernetes.Clientset, ns string) typedClient[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList] {
			return cs.PolicyV1().PodDisruptionBudgets(ns)
		},
			func(n, _ string) *policyv1.PodDisruptionBudget {
				return &policyv1.PodDisruptionBudget{ObjectMeta: om(n), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrTo(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: app}}}
			},
			func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptrTo(intstr.FromString("50%")) },
			func(p *policyv1.PodDisruptionBudget) { p.Status.ExpectedPods = 2 }),
		crud("storageclasses", func(cs *kubernetes.Clientset, _ string) typedClient[*storagev1.StorageClass, *storagev1.StorageClassList] {
			return cs.StorageV1().StorageClasses()
		},
			func(n, _ string) *storagev1.StorageClass {
				return &storagev1.StorageClass{ObjectMeta: om(n), Provisioner: "example.com/disk", Parameters: map[string]string{"type": "ssd"}}
			},
			annotateFn[*storagev1.StorageClass], nil),
		crud("priorityclasses", func(cs *kubernetes.Clientset, _ string) typedClient[*schedulingv1.PriorityClass, *schedulingv1.PriorityClassList] {
			return cs.SchedulingV1().PriorityClasses()
		},
			func(n, _ string) *schedulingv1.PriorityClass {
				return &schedulingv1.PriorityClass{ObjectMeta: om(n), Value: 1000, Description: "high"}
			},
			func(p *schedulingv1.PriorityClass) { p.Description = "higher" }, nil),
		crud("csidrivers", func(cs *kubernetes.Clientset, _ string) typedClient[*storagev1.CSIDriver, *storagev1.CSIDriverList] {
			return cs.StorageV1().CSIDrivers()
		},
			func(n, _ string) *storagev1.CSIDriver {
				return &storagev1.CSIDriver{ObjectMeta: om(n), Spec: storagev1.CSIDriverSpec{AttachRequired: ptrTo(true)}}
			},
			func(d *storagev1.CSIDriver) { d.Spec.PodInfoOnMount = ptrTo(true) }, nil),
		// A CSINode's status (storageHealth) is dropped while CSIVolumeHealth
		// is off, as kube 1.37 has it: nothing to write through /status.
		crud("csinodes", func(cs *kubernetes.Clientset, _ string) typedClient[*storagev1.CSINode, *storagev1.CSINodeList] {
			return cs.StorageV1().CSINodes()
		},
			func(n, _ string) *storagev1.CSINode {
				return &storagev1.CSINode{ObjectMeta: om(n), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com", NodeID: "node-1", TopologyKeys: []string{"zone"}}}}}
			},
			func(c *storagev1.CSINode) {
				c.Spec.Drivers[0].Allocatable = &storagev1.VolumeNodeResources{Count: ptrTo(int32(8))}
			}, nil),
		crud("csistoragecapacities", func(cs *kubernetes.Clientset, ns string) typedClient[*storagev1.CSIStorageCapacity, *storagev1.CSIStorageCapacityList] {
			return cs.StorageV1().CSIStorageCapacities(ns)
		},
			func(n, _ string) *storagev1.CSIStorageCapacity {
				return &storagev1.CSIStorageCapacity{ObjectMeta: om(n), StorageClassName: "fast", Capacity: ptrTo(resource.MustParse("10Gi")),
					NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "a"}}}
			},
			func(c *storagev1.CSIStorageCapacity) { c.Capacity = ptrTo(resource.MustParse("5Gi")) }, nil),
		crud("volumeattachments", func(cs *kubernetes.Clientset, _ string) typedClient[*storagev1.VolumeAttachment, *storagev1.VolumeAttachmentList] {
			return cs.StorageV1().VolumeAttachments()
		},
			func(n, _ string) *storagev1.VolumeAttachment {
				return &storagev1.VolumeAttachment{ObjectMeta: om(n), Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "node-1",
					Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptrTo("pv-1")}}}
			},
			annotateFn[*storagev1.VolumeAttachment],
			func(v *storagev1.VolumeAttachment) {
				v.Status.Attached = true
				v.Status.AttachmentMetadata = map[string]string{"devicePath": "/dev/sdb"}
			}),
		crud("volumeattributesclasses", func(cs *kubernetes.Clientset, _ string) typedClient[*storagev1.VolumeAttributesClass, *storagev1.VolumeAttributesClassList] {
			return cs.StorageV1().VolumeAttributesClasses()
		},
			func(n, _ string) *storagev1.VolumeAttributesClass {
				return &storagev1.VolumeAttributesClass{ObjectMeta: om(n), DriverName: "csi.example.com", Parameters: map[string]string{"iops": "3000"}}
			},
			annotateFn[*storagev1.VolumeAttributesClass], nil),
		crud("runtimeclasses", func(cs *kubernetes.Clientset, _ string) typedClient[*nodev1.RuntimeClass, *nodev1.RuntimeClassList] {
			return cs.NodeV1().RuntimeClasses()
		},
			func(n, _ string) *nodev1.RuntimeClass {
				return &nodev1.RuntimeClass{ObjectMeta: om(n), Handler: "runc"}
			},
			func(r *nodev1.RuntimeClass) {
				r.Overhead = &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}
			}, nil),
		crud("certificatesigningrequests", func(cs *kubernetes.Clientset, _ string) typedClient[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList] {
			return cs.CertificatesV1().CertificateSigningRequests()
		},
			func(n, _ string) *certificatesv1.CertificateSigningRequest {
				return &certificatesv1.CertificateSigningRequest{ObjectMeta: om(n), Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: csrPEM(), SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}}
			},
			annotateFn[*certificatesv1.CertificateSigningRequest],
			func(c *certificatesv1.CertificateSigningRequest) {
				c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: "Pending", Status: corev1.ConditionTrue, Reason: "Waiting"})
			}),
	}
}

// csrPEM is a PEM PKCS#10 request for CN=conformance, made once.
var csrPEM = sync.OnceValue(func() []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil // the create then fails with kube's message
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "conformance"}}, key)
	if err != nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
})

func annotateFn[T metav1.Object](o T) { annotate(o) }

// Every built-in kind through the typed clientset in its default
// configuration (protobuf both ways): create, get, list, watch, update,
// strategic merge patch, server-side apply, status where the kind has it,
// and delete.
func TestBuiltinKindsTypedClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := newClientset(t, e)
	for _, c := range builtinKindCases() {
		t.Run(c.name, func(t *testing.T) {
			ns := e.namespace(t, "b-"+nsName(c.name))
			c.run(t, cs, ns)
		})
	}
	// Every answer with a body was protobuf: the kinds were not served
	// as JSON to a client that prefers protobuf.
	for _, r := range e.log.matching(func(r request) bool {
		return r.Status < 300 && r.Method != "DELETE" && !strings.HasSuffix(r.Path, "/namespaces")
	}) {
		if !strings.HasPrefix(r.ContentType, "application/vnd.kubernetes.protobuf") {
			t.Errorf("%s: answered %s; want protobuf", r, r.ContentType)
		}
	}
}

func nsName(s string) string {
	out := []byte(s)
	for i, c := range out {
		if c == ' ' || c == '.' {
			out[i] = '-'
		}
	}
	return string(out)
}
