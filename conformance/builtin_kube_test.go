package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// builtinCorpus is objects of the built-in kinds written through kapi
// and through kube-apiserver: what each stores (with kube's defaults and
// strategies) or the 422 causes each answers must be the same. An entry
// with update is created from body, then updated to update.
var builtinCorpus = []struct {
	name     string
	resource string // group/version/plural
	body     string
	update   string // a JSON merge patch applied after the create
}{
	{name: "pod minimal", resource: "/v1/pods", body: `{"metadata":{"name":"p1"},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`},
	{name: "pod tagged image, ports, probes, volumes", resource: "/v1/pods", body: `{"metadata":{"name":"p2","labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80}],
		"resources":{"limits":{"cpu":"500m","memory":"128Mi"}},
		"livenessProbe":{"httpGet":{"port":80}},"volumeMounts":[{"name":"cfg","mountPath":"/etc/cfg"}]}],
		"volumes":[{"name":"cfg","configMap":{"name":"cfg"}},{"name":"scratch"},{"name":"sec","secret":{"secretName":"s"}}]}}`},
	{name: "pod digest image, OnFailure", resource: "/v1/pods", body: `{"metadata":{"name":"p3"},"spec":{"restartPolicy":"OnFailure","containers":[{"name":"app","image":"busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000"}],"initContainers":[{"name":"init","image":"busybox:latest"}]}}`},
	{name: "pod image update", resource: "/v1/pods", body: `{"metadata":{"name":"p4"},"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}`,
		update: `{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}`},
	{name: "pod spec update forbidden", resource: "/v1/pods", body: `{"metadata":{"name":"p5"},"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}`,
		update: `{"spec":{"restartPolicy":"Never"}}`},
	{name: "pod quantities", resource: "/v1/pods", body: `{"metadata":{"name":"pq"},"spec":{"containers":[{"name":"app","image":"nginx:1.27",
		"resources":{"requests":{"cpu":0.5,"memory":"1024Mi","ephemeral-storage":"1e3"},"limits":{"cpu":"1000m","memory":"1.5Gi","ephemeral-storage":"2000"}}}]}}`},
	{name: "pod requests above limits", resource: "/v1/pods", body: `{"metadata":{"name":"pq2"},"spec":{"containers":[{"name":"app","image":"nginx:1.27",
		"resources":{"requests":{"ephemeral-storage":"2000"},"limits":{"ephemeral-storage":"1e3"}}}]}}`},
	{name: "pod bad quantity", resource: "/v1/pods", body: `{"metadata":{"name":"pbq"},"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":"lots"}}}]}}`},
	{name: "pod no containers", resource: "/v1/pods", body: `{"metadata":{"name":"p6"},"spec":{"containers":[]}}`},
	{name: "deployment minimal", resource: "apps/v1/deployments", body: `{"metadata":{"name":"d1"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`},
	{name: "deployment recreate", resource: "apps/v1/deployments", body: `{"metadata":{"name":"d2"},"spec":{"replicas":3,"strategy":{"type":"Recreate"},"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`},
	{name: "deployment selector mismatch", resource: "apps/v1/deployments", body: `{"metadata":{"name":"d3"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"other"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`},
	{name: "deployment selector immutable", resource: "apps/v1/deployments", body: `{"metadata":{"name":"d4"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web","tier":"a"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`,
		update: `{"spec":{"selector":{"matchLabels":{"app":"web","tier":"a"}}}}`},
	{name: "deployment scale update", resource: "apps/v1/deployments", body: `{"metadata":{"name":"d5"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`,
		update: `{"spec":{"replicas":4}}`},
	{name: "deployment without selector", resource: "apps/v1/deployments", body: `{"metadata":{"name":"d6"},"spec":{"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`},
	{name: "deployment without image", resource: "apps/v1/deployments", body: `{"metadata":{"name":"d7"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app"}]}}}}`},
	{name: "statefulset minimal", resource: "apps/v1/statefulsets", body: `{"metadata":{"name":"s1"},"spec":{"selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"db","image":"postgres:16"}]}}}}`},
	{name: "statefulset forbidden update", resource: "apps/v1/statefulsets", body: `{"metadata":{"name":"s2"},"spec":{"selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"db","image":"postgres:16"}]}}}}`,
		update: `{"spec":{"serviceName":"other"}}`},
	{name: "replicaset minimal", resource: "apps/v1/replicasets", body: `{"metadata":{"name":"r1"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`},
	{name: "daemonset minimal", resource: "apps/v1/daemonsets", body: `{"metadata":{"name":"ds1"},"spec":{"selector":{"matchLabels":{"app":"agent"}},"template":{"metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"name":"a","image":"agent:1"}]}}}}`},
	{name: "replicationcontroller labels from template", resource: "/v1/replicationcontrollers", body: `{"metadata":{"name":"rc1"},"spec":{"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`},
	{name: "job minimal", resource: "batch/v1/jobs", body: `{"metadata":{"name":"j1"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"pi","image":"perl:5.34"}]}}}}`},
	{name: "job restartPolicy Always", resource: "batch/v1/jobs", body: `{"metadata":{"name":"j2"},"spec":{"template":{"spec":{"containers":[{"name":"pi","image":"perl:5.34"}]}}}}`},
	{name: "job parallel", resource: "batch/v1/jobs", body: `{"metadata":{"name":"j3"},"spec":{"parallelism":3,"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"pi","image":"perl"}]}}}}`},
	{name: "job template immutable", resource: "batch/v1/jobs", body: `{"metadata":{"name":"j4"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"pi","image":"perl:5.34"}]}}}}`,
		update: `{"spec":{"template":{"spec":{"containers":[{"name":"pi","image":"perl:5.36"}]}}}}`},
	{name: "job selector immutable", resource: "batch/v1/jobs", body: `{"metadata":{"name":"j5"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"pi","image":"perl:5.34"}]}}}}`,
		update: `{"spec":{"selector":{"matchLabels":{"other":"x"}}}}`},
	{name: "cronjob minimal", resource: "batch/v1/cronjobs", body: `{"metadata":{"name":"cj1"},"spec":{"schedule":"*/5 * * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}`},
	{name: "service minimal", resource: "/v1/services", body: `{"metadata":{"name":"svc1"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`},
	{name: "service named target, NodePort", resource: "/v1/services", body: `{"metadata":{"name":"svc2"},"spec":{"type":"NodePort","selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":"http"}]}}`},
	{name: "service headless", resource: "/v1/services", body: `{"metadata":{"name":"svc3"},"spec":{"clusterIP":"None","selector":{"app":"web"},"ports":[{"port":80}]}}`},
	{name: "service ExternalName", resource: "/v1/services", body: `{"metadata":{"name":"svc4"},"spec":{"type":"ExternalName","externalName":"example.com"}}`},
	{name: "service update keeps clusterIP", resource: "/v1/services", body: `{"metadata":{"name":"svc5"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`,
		update: `{"spec":{"clusterIP":null,"clusterIPs":null,"ports":[{"port":81}]}}`},
	{name: "service to NodePort", resource: "/v1/services", body: `{"metadata":{"name":"svc6"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`,
		update: `{"spec":{"type":"NodePort"}}`},
	{name: "service from ExternalName", resource: "/v1/services", body: `{"metadata":{"name":"svc7"},"spec":{"type":"ExternalName","externalName":"example.com"}}`,
		update: `{"spec":{"type":"ClusterIP","externalName":null,"ports":[{"port":80}]}}`},
	{name: "service clusterIP change", resource: "/v1/services", body: `{"metadata":{"name":"svc8"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`,
		update: `{"spec":{"clusterIP":"10.96.0.250","clusterIPs":["10.96.0.250"]}}`},
	{name: "secret stringData", resource: "/v1/secrets", body: `{"metadata":{"name":"sec1"},"stringData":{"user":"admin"},"data":{"pw":"cGFzcw=="}}`},
	{name: "secret tls without key", resource: "/v1/secrets", body: `{"metadata":{"name":"sec2"},"type":"kubernetes.io/tls","data":{"tls.crt":"Y3J0"}}`},
	{name: "secret immutable", resource: "/v1/secrets", body: `{"metadata":{"name":"sec3"},"immutable":true,"data":{"a":"Yg=="}}`,
		update: `{"data":{"a":"Yw=="}}`},
	{name: "serviceaccount", resource: "/v1/serviceaccounts", body: `{"metadata":{"name":"sa1"}}`},
	{name: "lease", resource: "coordination.k8s.io/v1/leases", body: `{"metadata":{"name":"l1"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15}}`},
	{name: "event", resource: "/v1/events", body: `{"metadata":{"name":"e1"},"involvedObject":{"kind":"Pod","name":"p1"},"reason":"Started","message":"m","type":"Normal"}`},
	{name: "persistentvolumeclaim", resource: "/v1/persistentvolumeclaims", body: `{"metadata":{"name":"pvc1"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`},
	{name: "configmap", resource: "/v1/configmaps", body: `{"metadata":{"name":"cm1"},"data":{"a":"b"}}`},
	{name: "configmap immutable", resource: "/v1/configmaps", body: `{"metadata":{"name":"cm2"},"immutable":true,"data":{"a":"b"}}`,
		update: `{"data":{"a":"c"}}`},
	{name: "endpoints", resource: "/v1/endpoints", body: `{"metadata":{"name":"ep1"},"subsets":[{"addresses":[{"ip":"10.1.2.3"}],"ports":[{"port":80}]}]}`},
	{name: "persistentvolume", resource: "/v1/persistentvolumes", body: `{"metadata":{"name":"pv-corpus"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/data"}}}`},
	{name: "node", resource: "/v1/nodes", body: `{"metadata":{"name":"node-corpus"}}`},
	{name: "limitrange", resource: "/v1/limitranges", body: `{"metadata":{"name":"lr1"},"spec":{"limits":[{"type":"Container","default":{"cpu":"500m"}}]}}`},
	{name: "resourcequota", resource: "/v1/resourcequotas", body: `{"metadata":{"name":"rq1"},"spec":{"hard":{"pods":"10"}}}`},
	{name: "podtemplate", resource: "/v1/podtemplates", body: `{"metadata":{"name":"pt1"},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}`},
	{name: "controllerrevision", resource: "apps/v1/controllerrevisions", body: `{"metadata":{"name":"cr1"},"revision":1,"data":{"spec":{}}}`},
	{name: "hpa v1", resource: "autoscaling/v1/horizontalpodautoscalers", body: `{"metadata":{"name":"h1"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5}}`},
	{name: "hpa v2", resource: "autoscaling/v2/horizontalpodautoscalers", body: `{"metadata":{"name":"h2"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]}}`},
	{name: "events.k8s.io event", resource: "events.k8s.io/v1/events", body: `{"metadata":{"name":"e2"},"eventTime":"2026-11-26T06:00:00.000000Z","reportingController":"example.com/c","reportingInstance":"c-1","action":"Scale","reason":"Scaled","type":"Normal","regarding":{"kind":"Deployment","name":"web"}}`},
	{name: "endpointslice", resource: "discovery.k8s.io/v1/endpointslices", body: `{"metadata":{"name":"es1"},"addressType":"IPv4","endpoints":[{"addresses":["10.1.2.3"]}],"ports":[{"port":80}]}`},
	{name: "ingress", resource: "networking.k8s.io/v1/ingresses", body: `{"metadata":{"name":"ing1"},"spec":{"rules":[{"host":"example.com","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]}}`},
	{name: "ingressclass", resource: "networking.k8s.io/v1/ingressclasses", body: `{"metadata":{"name":"ic-corpus"},"spec":{"controller":"example.com/ingress"}}`},
	{name: "networkpolicy", resource: "networking.k8s.io/v1/networkpolicies", body: `{"metadata":{"name":"np1"},"spec":{"podSelector":{"matchLabels":{"app":"web"}},"ingress":[{"ports":[{"port":80}]}]}}`},
	{name: "poddisruptionbudget", resource: "policy/v1/poddisruptionbudgets", body: `{"metadata":{"name":"pdb1"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}}`},
	{name: "storageclass", resource: "storage.k8s.io/v1/storageclasses", body: `{"metadata":{"name":"sc-corpus"},"provisioner":"example.com/disk"}`},
	{name: "priorityclass", resource: "scheduling.k8s.io/v1/priorityclasses", body: `{"metadata":{"name":"pc-corpus"},"value":1000}`},
	{name: "csidriver", resource: "storage.k8s.io/v1/csidrivers", body: `{"metadata":{"name":"csid-corpus"},"spec":{"podInfoOnMount":true}}`,
		update: `{"spec":{"storageCapacity":true}}`},
	{name: "csidriver attachRequired immutable", resource: "storage.k8s.io/v1/csidrivers", body: `{"metadata":{"name":"csid2-corpus"},"spec":{}}`,
		update: `{"spec":{"attachRequired":false}}`},
	{name: "csinode", resource: "storage.k8s.io/v1/csinodes", body: `{"metadata":{"name":"csin-corpus"},"spec":{"drivers":[{"name":"csi.example.com","nodeID":"n1","topologyKeys":["zone"]}]}}`},
	{name: "csistoragecapacity", resource: "storage.k8s.io/v1/csistoragecapacities", body: `{"metadata":{"name":"csc1"},"storageClassName":"fast","capacity":"0.5Gi","nodeTopology":{"matchLabels":{"zone":"a"}}}`},
	{name: "volumeattachment", resource: "storage.k8s.io/v1/volumeattachments", body: `{"metadata":{"name":"va-corpus"},"spec":{"attacher":"csi.example.com","nodeName":"n1","source":{"persistentVolumeName":"pv1"}}}`},
	{name: "volumeattachment inline spec", resource: "storage.k8s.io/v1/volumeattachments", body: `{"metadata":{"name":"va2-corpus"},"spec":{"attacher":"csi.example.com","nodeName":"n1","source":{"inlineVolumeSpec":{"accessModes":["ReadWriteOnce"],"csi":{"driver":"csi.example.com","volumeHandle":"h1"}}}}}`},
	{name: "volumeattachment inline spec with capacity", resource: "storage.k8s.io/v1/volumeattachments", body: `{"metadata":{"name":"va3-corpus"},"spec":{"attacher":"csi.example.com","nodeName":"n1","source":{"inlineVolumeSpec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"csi":{"driver":"csi.example.com","volumeHandle":"h1"}}}}}`},
	{name: "runtimeclass", resource: "node.k8s.io/v1/runtimeclasses", body: `{"metadata":{"name":"rc-corpus"},"handler":"runc","overhead":{"podFixed":{"cpu":"0.1"}}}`},
}

var builtinKubeRuns atomic.Int32

// The corpus written through kapi and through the real kube-apiserver:
// stored objects (defaults, strategies' fields, generation) and 422
// causes compare equal, once what differs by nature (uids, times,
// allocated addresses, what kube's admission plugins add) is masked.
func TestBuiltinKindsAsKube(t *testing.T) {
	compareWithKube(t, "builtin-corpus", len(builtinCorpus), func(i int) (name, resource, body, update string) {
		c := builtinCorpus[i]
		return c.name, c.resource, c.body, c.update
	})
}

// compareWithKube writes n corpus entries through kube-apiserver and
// through kapi, in a namespace of their own on each (prefix-N), and
// fails on any difference between what each stores or answers.
func compareWithKube(t *testing.T, prefix string, n int, entry func(i int) (name, resource, body, update string)) {
	kube := kubeAPIServer(t)
	kapi := newEnv(t)
	ns := fmt.Sprintf("%s-%d", prefix, builtinKubeRuns.Add(1))
	sides := []struct {
		name string
		cfg  *rest.Config
	}{
		{"kube-apiserver", &rest.Config{Host: kube.URL, BearerToken: "admin-token", TLSClientConfig: rest.TLSClientConfig{CAData: kube.CA}, QPS: -1}},
		{"kapi", kapi.config()},
	}
	dyns := make([]dynamic.Interface, len(sides))
	for i, s := range sides {
		d, err := dynamic.NewForConfig(s.cfg)
		if err != nil {
			t.Fatal(err)
		}
		dyns[i] = d
		ctx := testContext(t)
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := d.Resource(namespacesGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: namespace: %v", s.name, err)
		}
		// kube's ServiceAccount admission wants the default account,
		// which kube-controller-manager would create.
		sa := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default"}}}
		if _, err := d.Resource(schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}).Namespace(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: default serviceaccount: %v", s.name, err)
		}
	}
	for i := range n {
		name, resource, body, update := entry(i)
		t.Run(name, func(t *testing.T) {
			parts := strings.SplitN(resource, "/", 3)
			gvr := schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
			var results []any
			for i, s := range sides {
				results = append(results, writeCorpus(t, dyns[i], gvr, ns, body, update, s.name))
			}
			if d := cmp.Diff(results[0], results[1]); d != "" {
				t.Errorf("kapi differs from kube-apiserver (-kube +kapi):\n%s\nbody: %s", d, body)
			}
		})
	}
}

// writeCorpus creates (and updates) one corpus object and returns the
// stored object or the 422's causes, masked for comparison.
func writeCorpus(t *testing.T, d dynamic.Interface, gvr schema.GroupVersionResource, ns, body, update, side string) any {
	t.Helper()
	ctx := testContext(t)
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	gv := gvr.GroupVersion().String()
	m["apiVersion"] = gv
	m["kind"] = corpusKinds[gvr.Resource]
	var ri dynamic.ResourceInterface = d.Resource(gvr).Namespace(ns)
	if clusterScoped[gvr.Resource] {
		// Kept apart from other runs by name.
		meta, _ := m["metadata"].(map[string]any)
		meta["name"] = fmt.Sprint(meta["name"], "-", ns[strings.LastIndex(ns, "-")+1:])
		ri = d.Resource(gvr)
		t.Cleanup(func() { _ = ri.Delete(context.Background(), fmt.Sprint(meta["name"]), metav1.DeleteOptions{}) })
	}
	got, err := ri.Create(ctx, &unstructured.Unstructured{Object: m}, metav1.CreateOptions{})
	if err == nil && update != "" {
		got, err = ri.Patch(ctx, got.GetName(), "application/merge-patch+json", []byte(update), metav1.PatchOptions{})
	}
	if apierrors.IsBadRequest(err) {
		return map[string]any{"badRequest": true}
	}
	if err != nil {
		var se apierrors.APIStatus
		if !apierrors.IsInvalid(err) || !asStatus(err, &se) {
			t.Fatalf("%s: %v", side, err)
		}
		var causes []string
		for _, c := range se.Status().Details.Causes {
			causes = append(causes, string(c.Type)+" "+c.Field)
		}
		sort.Strings(causes)
		return map[string]any{"invalid": causes}
	}
	return maskStored(got.Object)
}

func asStatus(err error, se *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*se = s
	return ok
}

var clusterScoped = map[string]bool{"persistentvolumes": true, "nodes": true, "ingressclasses": true, "storageclasses": true, "priorityclasses": true,
	"csidrivers": true, "csinodes": true, "volumeattachments": true, "volumeattributesclasses": true, "runtimeclasses": true}

var corpusKinds = map[string]string{
	"pods": "Pod", "deployments": "Deployment", "statefulsets": "StatefulSet", "replicasets": "ReplicaSet", "daemonsets": "DaemonSet",
	"replicationcontrollers": "ReplicationController", "jobs": "Job", "cronjobs": "CronJob", "services": "Service", "secrets": "Secret",
	"serviceaccounts": "ServiceAccount", "leases": "Lease", "events": "Event", "persistentvolumeclaims": "PersistentVolumeClaim", "configmaps": "ConfigMap",
	"endpoints": "Endpoints", "persistentvolumes": "PersistentVolume", "nodes": "Node", "limitranges": "LimitRange", "resourcequotas": "ResourceQuota",
	"podtemplates": "PodTemplate", "controllerrevisions": "ControllerRevision", "horizontalpodautoscalers": "HorizontalPodAutoscaler",
	"endpointslices": "EndpointSlice", "ingresses": "Ingress", "ingressclasses": "IngressClass", "networkpolicies": "NetworkPolicy",
	"poddisruptionbudgets": "PodDisruptionBudget", "storageclasses": "StorageClass", "priorityclasses": "PriorityClass",
	"csidrivers": "CSIDriver", "csinodes": "CSINode", "csistoragecapacities": "CSIStorageCapacity", "volumeattachments": "VolumeAttachment",
	"volumeattributesclasses": "VolumeAttributesClass", "runtimeclasses": "RuntimeClass",
}

var (
	corpusUIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	corpusIPPattern  = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)
	// corpusTimePattern: a time the server sets (a PersistentVolume's
	// status.lastPhaseTransitionTime), which two servers set a second
	// apart when a second boundary falls between their writes.
	corpusTimePattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)
)

// maskStored drops or masks what differs between two servers by nature:
// metadata's uid, resourceVersion, timestamps and managedFields; uids
// and times anywhere (a Job's selector, a status's transition time); allocated clusterIPs and nodePorts; and
// what kube's admission plugins add that kapi does not (README): a Pod's
// service account token volume and its mounts and default tolerations,
// the storage-protection finalizers.
func maskStored(obj map[string]any) any {
	meta, _ := obj["metadata"].(map[string]any)
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
		delete(meta, k)
	}
	if k := obj["kind"]; k == "PersistentVolumeClaim" || k == "PersistentVolume" {
		delete(meta, "finalizers") // StorageObjectInUseProtection's
	}
	if obj["kind"] == "Pod" {
		spec, _ := obj["spec"].(map[string]any)
		delete(spec, "tolerations")
		dropNamed(spec, "volumes", "kube-api-access-")
		for _, k := range []string{"containers", "initContainers"} {
			cs, _ := spec[k].([]any)
			for _, c := range cs {
				cm, _ := c.(map[string]any)
				dropNamed(cm, "volumeMounts", "kube-api-access-")
			}
		}
	}
	return maskValues(obj, "")
}

// dropNamed removes the entries of m[key] named with prefix, and the
// list if it is left empty.
func dropNamed(m map[string]any, key, prefix string) {
	l, ok := m[key].([]any)
	if !ok {
		return
	}
	var out []any
	for _, e := range l {
		if em, ok := e.(map[string]any); ok && strings.HasPrefix(fmt.Sprint(em["name"]), prefix) {
			continue
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		delete(m, key)
		return
	}
	m[key] = out
}

func maskValues(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = maskValues(e, k)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = maskValues(e, key)
		}
		return x
	case string:
		switch {
		case corpusUIDPattern.MatchString(x):
			return "<uid>"
		case corpusIPPattern.MatchString(x) && (key == "clusterIP" || key == "clusterIPs"):
			return "<ip>"
		case corpusTimePattern.MatchString(x):
			return "<time>"
		}
	case int64, float64:
		if key == "nodePort" {
			return "<port>"
		}
	}
	return v
}
