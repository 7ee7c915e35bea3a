package envtest_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Environments of one process share what is compiled from the built-in
// kinds' schemas (field managers' types, merge schemas: read-only), and
// nothing else: started side by side, each applies the same Deployment
// and Namespace with its own field owner and values, and each reads back
// only its own — values, managedFields, resourceVersions — while an
// object made in one is absent from the other.
func TestEnvironmentsShareNoState(t *testing.T) {
	t.Parallel()
	names := []string{"one", "two", "three"}
	type env struct {
		name string
		cs   *kubernetes.Clientset
	}
	envs := make([]env, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		envs[i] = env{name: name, cs: kubernetes.NewForConfigOrDie(start(t, &envtest.Environment{InProcess: i%2 == 1}))}
		wg.Go(func() {
			ctx := ctxFor(t)
			labels := map[string]string{"app": "web"}
			d := appsv1ac.Deployment("web", "default").WithLabels(map[string]string{"env": name}).WithSpec(appsv1ac.DeploymentSpec().
				WithReplicas(int32(i + 1)).WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
				WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
					WithContainers(corev1ac.Container().WithName("web").WithImage("nginx:" + name)))))
			if _, err := envs[i].cs.AppsV1().Deployments("default").Apply(ctx, d, metav1.ApplyOptions{FieldManager: "owner-" + name}); err != nil {
				t.Errorf("%s: apply deployment: %v", name, err)
			}
			if _, err := envs[i].cs.CoreV1().Namespaces().Apply(ctx, corev1ac.Namespace("only-"+name).WithLabels(map[string]string{"env": name}),
				metav1.ApplyOptions{FieldManager: "owner-" + name}); err != nil {
				t.Errorf("%s: apply namespace: %v", name, err)
			}
		})
	}
	wg.Wait()
	ctx := ctxFor(t)
	for i, e := range envs {
		d, err := e.cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if *d.Spec.Replicas != int32(i+1) || d.Spec.Template.Spec.Containers[0].Image != "nginx:"+e.name || d.Labels["env"] != e.name {
			t.Errorf("%s: deployment replicas %d, image %s, label %s; want its own", e.name, *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image, d.Labels["env"])
		}
		var managers []string
		for _, f := range d.ManagedFields {
			managers = append(managers, f.Manager)
		}
		if strings.Join(managers, ",") != "owner-"+e.name {
			t.Errorf("%s: deployment managed by %v; want owner-%s alone", e.name, managers, e.name)
		}
		for _, other := range names {
			_, err := e.cs.CoreV1().Namespaces().Get(ctx, "only-"+other, metav1.GetOptions{})
			if other == e.name && err != nil || other != e.name && !apierrors.IsNotFound(err) {
				t.Errorf("%s: namespace only-%s: %v", e.name, other, err)
			}
		}
		ns, err := e.cs.CoreV1().Namespaces().Get(ctx, "only-"+e.name, metav1.GetOptions{})
		if err == nil && (len(ns.ManagedFields) != 1 || ns.ManagedFields[0].Manager != "owner-"+e.name || ns.Status.Phase != corev1.NamespaceActive) {
			t.Errorf("%s: namespace managedFields %v, phase %s; want owner-%s alone, Active", e.name, ns.ManagedFields, ns.Status.Phase, e.name)
		}
	}
}

// Deleting an owner deletes its dependents (kapi's garbage collector),
// unless NoGarbageCollector (or KAPI_ENVTEST_NO_GARBAGE_COLLECTOR=true)
// asks for envtest's behaviour: kube-apiserver alone leaves them.
func TestNoGarbageCollector(t *testing.T) {
	tests := []struct {
		name          string
		env           envtest.Environment
		variable      string
		wantDependent bool
	}{
		{"collector", envtest.Environment{}, "", false},
		{"NoGarbageCollector", envtest.Environment{NoGarbageCollector: true}, "", true},
		{"KAPI_ENVTEST_NO_GARBAGE_COLLECTOR", envtest.Environment{}, "true", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KAPI_ENVTEST_NO_GARBAGE_COLLECTOR", tt.variable)
			e := tt.env
			cs := kubernetes.NewForConfigOrDie(start(t, &e))
			ctx := ctxFor(t)
			owner, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
			if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent",
				OwnerReferences: []metav1.OwnerReference{ref}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			// Foreground: with a collector the owner waits for its
			// dependents (kube's foregroundDeletion finalizer) and both go;
			// without one the dependent stays, and the owner goes at once
			// (kube-apiserver alone would keep it, finalized, forever).
			if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationForeground)}); err != nil {
				t.Fatal(err)
			}
			if tt.wantDependent {
				if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "owner", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Fatalf("owner after its delete: %v; want it gone at once", err)
				}
				if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "dependent", metav1.GetOptions{}); err != nil {
					t.Fatalf("dependent: %v; want it left", err)
				}
				return
			}
			if err := pollFor(ctx, func() bool {
				_, err1 := cs.CoreV1().ConfigMaps("default").Get(ctx, "dependent", metav1.GetOptions{})
				_, err2 := cs.CoreV1().ConfigMaps("default").Get(ctx, "owner", metav1.GetOptions{})
				return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2)
			}); err != nil {
				t.Fatalf("owner and dependent never collected: %v", err)
			}
		})
	}
}
