package builtin

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
)

// Pods: kube's defaults (pkg/apis/core/v1/defaults.go SetDefaults_PodSpec,
// _Container, _Probe, _Pod, the volume sources') and strategy
// (pkg/registry/core/pod/strategy.go): status starts Pending with its QoS
// class, and an update may change only the containers' images, the
// activeDeadlineSeconds and tolerations (additions), as kube's
// ValidatePodUpdate allows.

// defaultPodSpec fills spec as SetDefaults_PodSpec and what it holds do;
// it runs for Pods and every pod template.
func defaultPodSpec(spec map[string]any) {
	if spec == nil {
		return
	}
	if sa, ok := spec["serviceAccountName"].(string); !ok || sa == "" {
		if dep, _ := spec["serviceAccount"].(string); dep != "" {
			spec["serviceAccountName"] = dep
		}
	}
	if sa, _ := spec["serviceAccountName"].(string); sa != "" {
		spec["serviceAccount"] = sa
	}
	def(spec, "dnsPolicy", "ClusterFirst")
	def(spec, "restartPolicy", "Always")
	def(spec, "securityContext", map[string]any{})
	def(spec, "terminationGracePeriodSeconds", num(30))
	def(spec, "schedulerName", "default-scheduler")
	for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
		for _, c := range maps(spec, list) {
			defaultContainer(c)
		}
	}
	if hn, _ := spec["hostNetwork"].(bool); hn {
		// defaultHostNetworkPorts: a host-network pod's ports are the
		// host's.
		for _, list := range []string{"containers", "initContainers"} {
			for _, c := range maps(spec, list) {
				for _, p := range maps(c, "ports") {
					if p["hostPort"] == nil || p["hostPort"] == num(0) {
						p["hostPort"] = p["containerPort"]
					}
				}
			}
		}
	}
	for _, v := range maps(spec, "volumes") {
		defaultVolume(v)
	}
}

// defaultContainer is SetDefaults_Container and its probes' defaults.
func defaultContainer(c map[string]any) {
	if p, _ := c["imagePullPolicy"].(string); p == "" {
		c["imagePullPolicy"] = pullPolicy(getString(c, "image"))
	}
	def(c, "terminationMessagePath", "/dev/termination-log")
	def(c, "terminationMessagePolicy", "File")
	def(c, "resources", map[string]any{})
	for _, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		p := getMap(c, probe)
		if p == nil {
			continue
		}
		def(p, "timeoutSeconds", num(1))
		def(p, "periodSeconds", num(10))
		def(p, "successThreshold", num(1))
		def(p, "failureThreshold", num(3))
		defaultHTTPGet(getMap(p, "httpGet"))
	}
	for _, h := range []string{"postStart", "preStop"} {
		defaultHTTPGet(getMap(c, "lifecycle", h, "httpGet"))
	}
	for _, p := range maps(c, "ports") {
		def(p, "protocol", "TCP")
	}
	for _, e := range maps(c, "env") {
		def(getMap(e, "valueFrom", "fieldRef"), "apiVersion", "v1") // SetDefaults_ObjectFieldSelector
	}
}

func defaultHTTPGet(g map[string]any) {
	def(g, "path", "/")
	def(g, "scheme", "HTTP")
}

// pullPolicy is the default imagePullPolicy of an image: Always for
// ":latest" or no tag, IfNotPresent otherwise (a digest counts as a tag).
func pullPolicy(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	tag := ""
	if i := strings.LastIndex(image, ":"); i >= 0 && !strings.Contains(image[i:], "/") {
		tag = image[i+1:]
	}
	if tag == "" || tag == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

// defaultVolume is SetDefaults_Volume and the volume sources' modes.
func defaultVolume(v map[string]any) {
	sources := []string{"hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
		"glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc", "azureFile",
		"configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume", "scaleIO",
		"storageos", "csi", "ephemeral", "image"}
	found := false
	for _, s := range sources {
		if _, ok := v[s]; ok {
			found = true
		}
	}
	if !found {
		v["emptyDir"] = map[string]any{}
	}
	for _, s := range []string{"secret", "configMap", "downwardAPI", "projected"} {
		def(getMap(v, s), "defaultMode", num(420))
	}
	items := maps(v, "downwardAPI", "items")
	for _, src := range maps(v, "projected", "sources") {
		items = append(items, maps(src, "downwardAPI", "items")...)
	}
	for _, it := range items {
		def(getMap(it, "fieldRef"), "apiVersion", "v1")
	}
	def(getMap(v, "hostPath"), "type", "")
}

// defaultPod is SetDefaults_Pod on top of the spec's defaults, and what
// kube's decoding writes in a status: the conditions' times (non-pointer
// metav1.Time, so null when unset) and podIPs from podIP.
func defaultPod(_ context.Context, o registry.Object) error {
	status := getMap(obj(o), "status")
	for _, c := range maps(status, "conditions") {
		def(c, "lastProbeTime", nil)
		def(c, "lastTransitionTime", nil)
	}
	if ip := getString(status, "podIP"); ip != "" && len(getList(status, "podIPs")) == 0 {
		status["podIPs"] = []any{map[string]any{"ip": ip}}
	}
	spec := getMap(obj(o), "spec")
	defaultPodSpec(spec)
	def(spec, "enableServiceLinks", true)
	for _, list := range []string{"containers", "initContainers"} {
		for _, c := range maps(spec, list) {
			limits := getMap(c, "resources", "limits")
			if len(limits) == 0 {
				continue
			}
			req := ensureMap(c, "resources", "requests")
			for k, v := range limits {
				def(req, k, clone(v))
			}
		}
	}
	return nil
}

// preparePodCreate starts a pod's status as kube's PrepareForCreate does,
// and sets what kube-apiserver's default admission plugins set on a new
// pod (admitPod). They run after its field manager, so what they set is
// owned by no manager: here too, Prepare hooks run after managedFields.
func preparePodCreate(ctx context.Context, o registry.Object) error {
	spec := getMap(obj(o), "spec")
	// Priority: without a priorityClassName (and kube has no global
	// default class), priority 0 and PreemptLowerPriority.
	def(spec, "priority", num(0))
	def(spec, "preemptionPolicy", "PreemptLowerPriority")
	defaultTolerations(spec)
	if g := get(spec, "terminationGracePeriodSeconds"); g != nil && intAt(spec, "terminationGracePeriodSeconds") < 0 {
		spec["terminationGracePeriodSeconds"] = num(1) // kube's strategy: a negative grace period is 1
	}
	status := map[string]any{"phase": "Pending", "qosClass": qosClass(spec)}
	if gates, _ := spec["schedulingGates"].([]any); len(gates) > 0 {
		// kube's applySchedulingGatedCondition.
		status["conditions"] = []any{map[string]any{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
			"message": "Scheduling is blocked due to non-empty scheduling gates", "lastProbeTime": nil,
			"lastTransitionTime": now(ctx)}}
	}
	o["status"] = status
	return nil
}

// preparePodUpdate is admitPod on an update: the priority set on create
// is kept when the new object leaves it out (Priority), and the default
// tolerations are added again (DefaultTolerationSeconds).
func preparePodUpdate(_ context.Context, o, old registry.Object) error {
	// The QoS class is the spec's, which an update does not change.
	if q := getString(obj(old), "status", "qosClass"); q != "" {
		def(ensureMap(obj(o), "status"), "qosClass", q)
	}
	spec, oldSpec := getMap(obj(o), "spec"), getMap(obj(old), "spec")
	if spec == nil {
		return nil
	}
	for _, f := range []string{"priority", "preemptionPolicy"} {
		if spec[f] == nil && oldSpec[f] != nil {
			spec[f] = oldSpec[f]
		}
	}
	defaultTolerations(spec)
	return nil
}

// defaultTolerations is kube's DefaultTolerationSeconds admission plugin:
// a pod that does not tolerate the NoExecute taints of a not-ready or an
// unreachable node tolerates them for 300 seconds.
func defaultTolerations(spec map[string]any) {
	if spec == nil {
		return
	}
	notReady, unreachable := false, false
	for _, t := range maps(spec, "tolerations") {
		key, effect := getString(t, "key"), getString(t, "effect")
		if effect != "" && effect != "NoExecute" {
			continue
		}
		notReady = notReady || key == "" || key == taintNotReady
		unreachable = unreachable || key == "" || key == taintUnreachable
	}
	l, _ := spec["tolerations"].([]any)
	for _, add := range []struct {
		has bool
		key string
	}{{notReady, taintNotReady}, {unreachable, taintUnreachable}} {
		if !add.has {
			l = append(l, map[string]any{"key": add.key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": num(300)})
		}
	}
	if len(l) > 0 {
		spec["tolerations"] = l
	}
}

// The taints of a node that is not ready or not reachable.
const (
	taintNotReady    = "node.kubernetes.io/not-ready"
	taintUnreachable = "node.kubernetes.io/unreachable"
)

// qosClass is kube's QoS class of a pod spec: Guaranteed when every
// container limits cpu and memory with requests equal to the limits,
// BestEffort when none requests or limits anything, Burstable otherwise.
func qosClass(spec map[string]any) string {
	some, guaranteed := false, true
	for _, list := range []string{"containers", "initContainers"} {
		for _, c := range maps(spec, list) {
			req, lim := getMap(c, "resources", "requests"), getMap(c, "resources", "limits")
			if len(req) > 0 || len(lim) > 0 {
				some = true
			}
			for _, r := range []string{"cpu", "memory"} {
				l, ok := lim[r]
				if !ok || (req[r] != nil && !equal(req[r], l)) {
					guaranteed = false
				}
			}
		}
	}
	switch {
	case !some:
		return "BestEffort"
	case guaranteed:
		return "Guaranteed"
	}
	return "Burstable"
}

// podWarnings is kube's warning for a pod name that is not a DNS label.
func podWarnings(_ context.Context, o registry.Object) []string {
	if errs := validation.IsDNS1123Label(o.Name()); len(errs) > 0 {
		return []string{fmt.Sprintf("metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: %v", errs)}
	}
	return nil
}

// validatePod is what kube's ValidatePodCreate checks beyond the schema
// that controllers and users meet first.
func validatePod(_ context.Context, o registry.Object) []registry.FieldError {
	return validatePodSpec(getMap(obj(o), "spec"), "spec")
}

// podUpdateForbidden is kube's message for a pod update that changes more
// than it may.
const podUpdateForbidden = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"

// validatePodUpdate refuses a change of the pod's spec beyond what kube
// lets change.
func validatePodUpdate(ctx context.Context, o, old registry.Object) []registry.FieldError {
	spec, oldSpec := clone(getMap(obj(o), "spec")), clone(getMap(obj(old), "spec"))
	// kube's ValidateContainerUpdates, checked first and alone
	for _, list := range []string{"containers", "initContainers"} {
		if len(getList(spec, list)) != len(getList(oldSpec, list)) {
			return []registry.FieldError{{Type: validation.TypeForbidden, Field: "spec." + list, Detail: "pod updates may not add or remove containers"}}
		}
	}
	if binding, _ := ctx.Value(bindingKey{}).(bool); binding && getString(oldSpec, "nodeName") == "" {
		delete(spec.(map[string]any), "nodeName") // pods/binding sets it once
	}
	mutable := func(s any) {
		m, _ := s.(map[string]any)
		if m == nil {
			return
		}
		for _, list := range []string{"containers", "initContainers"} {
			for _, c := range maps(m, list) {
				delete(c, "image")
			}
		}
		delete(m, "activeDeadlineSeconds")
		delete(m, "tolerations")
		delete(m, "schedulingGates")
	}
	mutable(spec)
	mutable(oldSpec)
	if !equal(spec, oldSpec) {
		return []registry.FieldError{{Type: validation.TypeForbidden, Field: "spec", Detail: podUpdateForbidden + "\n" + podSpecUpdateDiff(getMap(obj(old), "spec"), getMap(obj(o), "spec"))}}
	}
	return nil
}

func itoa(i int) string {
	return num(int64(i)).String()
}

// requestsWithinLimits is kube's rule that a container requests no more
// of a resource than it limits.
func requestsWithinLimits(c map[string]any, path string) []registry.FieldError {
	limits := getMap(c, "resources", "limits")
	var errs []registry.FieldError
	req := getMap(c, "resources", "requests")
	names := make([]string, 0, len(req))
	for name := range req {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		l, ok := limits[name]
		if !ok {
			continue
		}
		rv, ok1 := quantityValue(req[name])
		lv, ok2 := quantityValue(l)
		if ok1 && ok2 && rv.Cmp(lv) > 0 {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".resources.requests", Value: req[name],
				Detail: fmt.Sprintf("must be less than or equal to %s limit of %s", name, l)})
		}
	}
	return errs
}

// podGracePeriod is kube's podStrategy.CheckGracefulDelete: the period
// asked for, else the pod's terminationGracePeriodSeconds; 0 for a pod
// no node runs (unscheduled, Succeeded or Failed), which is removed at
// once; a negative one is 1.
func podGracePeriod(_ context.Context, o registry.Object, requested *int64) int64 {
	var period int64
	switch {
	case requested != nil:
		period = *requested
	case get(o, "spec", "terminationGracePeriodSeconds") != nil:
		period = intAt(o, "spec", "terminationGracePeriodSeconds")
	}
	if getString(o, "spec", "nodeName") == "" {
		period = 0
	}
	if p := getString(o, "status", "phase"); p == "Failed" || p == "Succeeded" {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	return period
}
