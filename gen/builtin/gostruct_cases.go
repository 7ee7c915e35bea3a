package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/policy"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
)

// The Go-struct renderer's test table (builtin/zz_generated_gostruct_test.go):
// versioned objects defaulted by kube's scheme, the JSON of a field of
// them (what kapi stores), and what kube's own code prints for the same
// field once converted to its internal type — field.Invalid's message,
// diff.Diff's unified diff, ValidatePodUpdate's message — so the test
// compares the builtin package's rendering with kube's, not with strings
// typed by hand.

const goStructTestFile = "builtin/zz_generated_gostruct_test.go"

type goValueCase struct {
	name, typ string
	obj       runtime.Object // versioned
	path      []string       // of the value in obj's JSON
	internal  runtime.Object // obj converted into it
	pick      func(runtime.Object) any
}

type goDiffCase struct {
	name, typ string
	old, new  runtime.Object
	path      []string
	internal  func() runtime.Object
	pick      func(runtime.Object) any
	check     string // "pod", "pvc": want the diff of ValidatePodUpdate's or ValidatePersistentVolumeClaimUpdate's spec message, not diff.Diff's
}

func ptr[T any](v T) *T { return &v }

func jobFor(name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "UID"},
		Spec: batchv1.JobSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "UID"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
					"batch.kubernetes.io/controller-uid": "UID", "batch.kubernetes.io/job-name": name,
					"controller-uid": "UID", "job-name": name}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "pi", Image: "perl:5.36",
						Command: []string{"perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"}}},
				},
			},
		},
	}
}

// richPod reaches most of PodSpec: volumes, probes, lifecycle, security
// contexts, affinity, quantities, int-or-strings, times of nothing.
func richPod() *corev1.Pod {
	q := resource.MustParse
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "rich", Namespace: "ns", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{"a": "<b>&"}},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{
				{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
					Items:                []corev1.KeyToPath{{Key: "k", Path: "p", Mode: ptr(int32(0o600))}}}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: "Memory", SizeLimit: ptr(q("64Mi"))}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", Optional: ptr(true)}}},
				{Name: "claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log", Type: ptr(corev1.HostPathDirectory)}}},
				{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3600))}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "cpu",
						ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu", Divisor: q("1m")}}}}},
				}}}},
			},
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox", Args: []string{"sh", "-c", "true"},
				RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways)}},
			Containers: []corev1.Container{{
				Name: "app", Image: "nginx:1.27", WorkingDir: "/srv",
				Ports:   []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP, HostIP: "0.0.0.0"}},
				EnvFrom: []corev1.EnvFromSource{{Prefix: "X_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
				Env:     []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{"cpu": q("500m"), "memory": q("1Gi")},
					Requests: corev1.ResourceList{"cpu": q("0.25"), "memory": q("512Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp", ReadOnly: true}},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"),
					HTTPHeaders: []corev1.HTTPHeader{{Name: "X", Value: "y"}}}}, InitialDelaySeconds: 3, PeriodSeconds: 5},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}},
				StartupProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, TerminationGracePeriodSeconds: ptr(int64(10))},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}},
					PostStart: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80), Host: "localhost", Scheme: corev1.URISchemeHTTPS}}},
				SecurityContext: &corev1.SecurityContext{
					Capabilities:             &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"ALL"}},
					RunAsNonRoot:             ptr(true),
					ReadOnlyRootFilesystem:   ptr(true),
					AllowPrivilegeEscalation: ptr(false),
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				ImagePullPolicy: corev1.PullAlways, Stdin: true, TTY: true,
			}},
			RestartPolicy:                 corev1.RestartPolicyOnFailure,
			TerminationGracePeriodSeconds: ptr(int64(45)),
			ActiveDeadlineSeconds:         ptr(int64(600)),
			DNSPolicy:                     corev1.DNSClusterFirstWithHostNet,
			NodeSelector:                  map[string]string{"disk": "ssd"},
			ServiceAccountName:            "builder",
			AutomountServiceAccountToken:  ptr(false),
			HostNetwork:                   true,
			ShareProcessNamespace:         ptr(true),
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(1000)), FSGroup: ptr(int64(2000)),
				SupplementalGroups: []int64{3000}, Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}},
			Hostname:         "h", Subdomain: "sub",
			Affinity: &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}}}},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 10,
					PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
						LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}}}}}},
			},
			Tolerations:       []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))}},
			HostAliases:       []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"db"}}},
			PriorityClassName: "high",
			DNSConfig:         &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}}},
			ReadinessGates:    []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}},
			Overhead:          corev1.ResourceList{"cpu": q("10m")},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
			OS:              &corev1.PodOS{Name: corev1.Linux},
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "wait"}},
		},
	}
}

func pvcTemplates() *appsv1.StatefulSet {
	when := metav1.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"},
		Spec: appsv1.StatefulSetSpec{
			ServiceName: "db",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "postgres:16"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{
				{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": resource.MustParse("1Gi")}}}},
				{ObjectMeta: metav1.ObjectMeta{Name: "logs", Labels: map[string]string{"tier": "log"}}, Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadOnlyMany},
					Selector:         &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "fast"}},
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": resource.MustParse("10G")}, Limits: corev1.ResourceList{"storage": resource.MustParse("20G")}},
					StorageClassName: ptr("standard"), VolumeMode: ptr(corev1.PersistentVolumeBlock),
					DataSourceRef: &corev1.TypedObjectReference{APIGroup: ptr("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "snap"}},
					Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{"storage": resource.MustParse("10G")},
						Conditions: []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionTrue, LastTransitionTime: when}}}},
			},
		},
	}
}

func pdb(min, max *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: min, MaxUnavailable: max,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"db"}}}}},
	}
}

func pvc(modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "UID", ResourceVersion: "7", Generation: 0,
			CreationTimestamp: metav1.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC),
			Labels:            map[string]string{"app": "db"}, Finalizers: []string{"kubernetes.io/pvc-protection"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "x", UID: "OWNER", Controller: ptr(true)}}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: modes,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": resource.MustParse("1Gi")}}},
	}
}

func pv(path string, typ *corev1.HostPathType) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{"storage": resource.MustParse("5Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: typ}},
	}}
}

func bound(p *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	p.Status.Phase = corev1.ClaimBound
	p.Spec.VolumeName = "pv-0"
	return p
}

func podWith(f func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}, {Name: "side", Image: "busybox:1"}},
			Tolerations: []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}}}}
	if f != nil {
		f(p)
	}
	return p
}

func goValueCases() []goValueCase {
	templateMeta := jobFor("j")
	templateMeta.Spec.Template.CreationTimestamp = metav1.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	templateMeta.Spec.Template.Annotations = map[string]string{"note": "x"}
	return []goValueCase{
		{name: "job template", typ: "core.PodTemplateSpec", obj: jobFor("j"), path: []string{"spec", "template"},
			internal: &batch.Job{}, pick: func(o runtime.Object) any { return o.(*batch.Job).Spec.Template }},
		{name: "job template with creationTimestamp and annotations", typ: "core.PodTemplateSpec", obj: templateMeta, path: []string{"spec", "template"},
			internal: &batch.Job{}, pick: func(o runtime.Object) any { return o.(*batch.Job).Spec.Template }},
		{name: "pod spec reaching most fields", typ: "core.PodSpec", obj: richPod(), path: []string{"spec"},
			internal: &core.Pod{}, pick: func(o runtime.Object) any { return o.(*core.Pod).Spec }},
		{name: "statefulset volumeClaimTemplates", typ: "[]core.PersistentVolumeClaim", obj: pvcTemplates(), path: []string{"spec", "volumeClaimTemplates"},
			internal: &apps.StatefulSet{}, pick: func(o runtime.Object) any { return o.(*apps.StatefulSet).Spec.VolumeClaimTemplates }},
		{name: "poddisruptionbudget spec both", typ: "policy.PodDisruptionBudgetSpec", obj: pdb(ptr(intstr.FromInt32(1)), ptr(intstr.FromString("50%"))), path: []string{"spec"},
			internal: &policy.PodDisruptionBudget{}, pick: func(o runtime.Object) any { return o.(*policy.PodDisruptionBudget).Spec }},
		{name: "poddisruptionbudget spec policy", typ: "policy.PodDisruptionBudgetSpec",
			obj: func() runtime.Object {
				p := pdb(ptr(intstr.FromString("10%")), nil)
				p.Spec.Selector = nil
				p.Spec.UnhealthyPodEvictionPolicy = ptr(policyv1.AlwaysAllow)
				return p
			}(), path: []string{"spec"},
			internal: &policy.PodDisruptionBudget{}, pick: func(o runtime.Object) any { return o.(*policy.PodDisruptionBudget).Spec }},
		{name: "persistentvolumeclaim object", typ: "core.PersistentVolumeClaim", obj: pvc(corev1.ReadWriteOnce), path: nil,
			internal: &core.PersistentVolumeClaim{}, pick: func(o runtime.Object) any { return *o.(*core.PersistentVolumeClaim) }},
	}
}

func goDiffCases() []goDiffCase {
	podSpec := func(o runtime.Object) any { return o.(*core.Pod).Spec }
	newPVC := func() runtime.Object { return &core.PersistentVolumeClaim{} }
	whole := func(o runtime.Object) any { return o }
	newPod := func() runtime.Object { return &core.Pod{} }
	return []goDiffCase{
		{name: "pod restartPolicy", typ: "core.PodSpec", path: []string{"spec"}, internal: newPod, pick: podSpec,
			old: podWith(nil), new: podWith(func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever })},
		{name: "pod many changes", typ: "core.PodSpec", path: []string{"spec"}, internal: newPod, pick: podSpec,
			old: richPod(), new: func() runtime.Object {
				p := richPod()
				p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "B", Value: "2"})
				p.Spec.Containers[0].Resources.Limits["cpu"] = resource.MustParse("1")
				p.Spec.Volumes = p.Spec.Volumes[1:]
				p.Spec.HostNetwork = false
				return p
			}()},
		{name: "persistentvolumeclaim accessModes", typ: "core.PersistentVolumeClaimSpec", path: []string{"spec"},
			internal: func() runtime.Object { return &core.PersistentVolumeClaim{} },
			pick:     func(o runtime.Object) any { return o.(*core.PersistentVolumeClaim).Spec },
			old:      pvc(corev1.ReadWriteOnce), new: pvc(corev1.ReadWriteMany)},
		{name: "persistentvolume source", typ: "core.PersistentVolumeSource", path: []string{"spec"},
			internal: func() runtime.Object { return &core.PersistentVolume{} },
			pick:     func(o runtime.Object) any { return o.(*core.PersistentVolume).Spec.PersistentVolumeSource },
			old:      pv("/data", nil), new: pv("/data2", ptr(corev1.HostPathDirectoryOrCreate))},
		{name: "persistentvolumeclaim update accessModes", typ: "core.PersistentVolumeClaim", internal: newPVC, pick: whole, check: "pvc",
			old: pvc(corev1.ReadWriteOnce), new: pvc(corev1.ReadWriteMany)},
		{name: "persistentvolumeclaim update bound, resized", typ: "core.PersistentVolumeClaim", internal: newPVC, pick: whole, check: "pvc",
			old: bound(pvc(corev1.ReadWriteOnce)), new: func() runtime.Object {
				p := bound(pvc(corev1.ReadWriteMany))
				p.Spec.Resources.Requests["storage"] = resource.MustParse("2Gi")
				p.Spec.VolumeAttributesClassName = ptr("gold")
				return p
			}()},
		{name: "persistentvolumeclaim update storage class from nil and volume name", typ: "core.PersistentVolumeClaim", internal: newPVC, pick: whole, check: "pvc",
			old: pvc(corev1.ReadWriteOnce), new: func() runtime.Object {
				p := pvc(corev1.ReadWriteOncePod)
				p.Spec.StorageClassName = ptr("fast")
				p.Spec.VolumeName = "pv-1"
				return p
			}()},
		{name: "persistentvolumeclaim update storage class from annotation", typ: "core.PersistentVolumeClaim", internal: newPVC, pick: whole, check: "pvc",
			old: func() runtime.Object {
				p := pvc(corev1.ReadWriteOnce)
				p.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "slow"}
				return p
			}(), new: func() runtime.Object {
				p := pvc(corev1.ReadWriteMany)
				p.Spec.StorageClassName = ptr("slow")
				return p
			}()},
		{name: "pod update restartPolicy and image", typ: "core.PodSpec", path: []string{"spec"}, internal: newPod, pick: podSpec, check: "pod",
			old: podWith(nil), new: podWith(func(p *corev1.Pod) {
				p.Spec.RestartPolicy = corev1.RestartPolicyNever
				p.Spec.Containers[1].Image = "busybox:2"
				p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists})
			})},
		{name: "pod update dnsPolicy with activeDeadlineSeconds", typ: "core.PodSpec", path: []string{"spec"}, internal: newPod, pick: podSpec, check: "pod",
			old: podWith(nil), new: podWith(func(p *corev1.Pod) {
				p.Spec.DNSPolicy = corev1.DNSDefault
				p.Spec.ActiveDeadlineSeconds = ptr(int64(30))
				p.Spec.Containers[0].Image = "nginx:2"
			})},
	}
}

// versionedJSON defaults o with kube's scheme and returns its JSON
// (decoded as kapi decodes: numbers as json.Number) at path, and o
// converted into internal.
func versionedJSON(o runtime.Object, path []string, internal runtime.Object) (string, error) {
	legacyscheme.Scheme.Default(o)
	b, err := json.Marshal(o)
	if err != nil {
		return "", err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", err
	}
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	if internal != nil {
		if err := legacyscheme.Scheme.Convert(o, internal, nil); err != nil {
			return "", err
		}
	}
	out, err := json.Marshal(v)
	return string(out), err
}

func goStructTestSource() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`// Code generated by gen/builtin from kube's own rendering (field.Invalid, diff.Diff, ValidatePodUpdate of k8s.io/kubernetes v1.37); DO NOT EDIT.

package builtin

// goValueCases: in is a versioned field's JSON, defaulted by kube; want
// is field.Invalid(field.NewPath("f"), <in converted to kube's internal typ>, "d").Error().
var goValueCases = []struct{ name, typ, in, want string }{
`)
	for _, c := range goValueCases() {
		in, err := versionedJSON(c.obj, c.path, c.internal)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		want := field.Invalid(field.NewPath("f"), c.pick(c.internal), "d").Error()
		fmt.Fprintf(&b, "{%q, %q,\n%s,\n%s},\n", c.name, c.typ, goString(in), goString(want))
	}
	b.WriteString(`}

// goDiffCases: old and new are versioned fields' JSON, defaulted by
// kube; want is diff.Diff of them converted to kube's internal typ, or
// for check "pod" (specs) and "pvc" (whole claims) the diff kube's
// ValidatePodUpdate or ValidatePersistentVolumeClaimUpdate appends to
// its "spec: Forbidden" message.
var goDiffCases = []struct{ name, typ, check, old, new, want string }{
`)
	for _, c := range goDiffCases() {
		oi, ni := c.internal(), c.internal()
		old, err := versionedJSON(c.old, c.path, oi)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		nw, err := versionedJSON(c.new, c.path, ni)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		want := diff.Diff(c.pick(oi), c.pick(ni))
		var errs field.ErrorList
		switch c.check {
		case "pod":
			errs = corevalidation.ValidatePodUpdate(ni.(*core.Pod), oi.(*core.Pod), corevalidation.PodValidationOptions{})
		case "pvc":
			errs = corevalidation.ValidatePersistentVolumeClaimUpdate(ni.(*core.PersistentVolumeClaim), oi.(*core.PersistentVolumeClaim), corevalidation.PersistentVolumeClaimSpecValidationOptions{})
		}
		if c.check != "" {
			want = ""
			for _, e := range errs {
				if _, d, ok := strings.Cut(e.Detail, "\n"); ok && e.Field == "spec" && e.Type == field.ErrorTypeForbidden {
					want = d
				}
			}
			if want == "" {
				return nil, fmt.Errorf("%s: kube's update validation has no spec error with a diff: %v", c.name, errs)
			}
		}
		fmt.Fprintf(&b, "{%q, %q, %q,\n%s,\n%s,\n%s},\n", c.name, c.typ, c.check, goString(old), goString(nw), goString(want))
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, b.String())
	}
	return src, nil
}

// goString is s as a Go literal, raw when it can be.
func goString(s string) string {
	if !strings.Contains(s, "`") && !strings.Contains(s, "\r") {
		return "`" + s + "`"
	}
	return fmt.Sprintf("%q", s)
}
