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
