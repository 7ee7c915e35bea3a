package builtin

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/registry"
)

// The kinds' Table columns, as kube's server-side printers
// (pkg/printers/internalversion/printers.go) show them after NAME;
// priority 1 columns are kubectl's -o wide.

var age = registry.Column{Name: "Age", Type: "date", DeclaredType: "string", JSONPath: ".metadata.creationTimestamp",
	Description: "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}

func col(name, typ, desc string, v func(o map[string]any) any) registry.Column {
	return registry.Column{Name: name, Type: typ, Description: desc, Value: func(o registry.Object) any { return v(obj(o)) }}
}

func wide(c registry.Column) registry.Column { c.Priority = 1; return c }

// templateColumns are the workloads' wide CONTAINERS, IMAGES and SELECTOR.
func templateColumns(templatePath ...string) []registry.Column {
	names := func(o map[string]any, key string) any {
		var out []string
		for _, c := range maps(o, append(templatePath, "spec", "containers")...) {
			out = append(out, getString(c, key))
		}
		return strings.Join(out, ",")
	}
	return []registry.Column{
		wide(col("Containers", "string", "Names of each container in the template.", func(o map[string]any) any { return names(o, "name") })),
		wide(col("Images", "string", "Images referenced by each container in the template.", func(o map[string]any) any { return names(o, "image") })),
		wide(col("Selector", "string", "Label selector for pods.", func(o map[string]any) any { return selectorString(getMap(o, "spec", "selector")) })),
	}
}

// selectorString prints a LabelSelector as kube's metav1 does: "a=b,c in (d)".
func selectorString(sel map[string]any) string {
	if sel == nil {
		return "<none>"
	}
	var parts []string
	ml := stringMap(getMap(sel, "matchLabels"))
	for k, v := range ml {
		parts = append(parts, k+"="+v)
	}
	for _, e := range maps(sel, "matchExpressions") {
		var vals []string
		for _, v := range getList(e, "values") {
			vals = append(vals, fmt.Sprint(v))
		}
		sort.Strings(vals)
		k := getString(e, "key")
		switch getString(e, "operator") {
		case "In":
			parts = append(parts, k+" in ("+strings.Join(vals, ",")+")")
		case "NotIn":
			parts = append(parts, k+" notin ("+strings.Join(vals, ",")+")")
		case "Exists":
			parts = append(parts, k)
		case "DoesNotExist":
			parts = append(parts, "!"+k)
		}
	}
	if len(parts) == 0 {
		return "<none>"
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func intAt(o map[string]any, path ...string) int64 {
	switch v := get(o, path...).(type) {
	case interface{ Int64() (int64, error) }:
		n, _ := v.Int64()
		return n
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

// humanDuration is kube's duration.HumanDuration, as kubectl prints ages.
func humanDuration(d time.Duration) string {
	if s := int(d.Seconds()); s < -1 {
		return "<invalid>"
	} else if s < 0 {
		return "0s"
	} else if s < 60*2 {
		return fmt.Sprintf("%ds", s)
	}
	m := int(d / time.Minute)
	if m < 10 {
		if s := int(d/time.Second) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", m, s)
		}
		return fmt.Sprintf("%dm", m)
	} else if m < 60*3 {
		return fmt.Sprintf("%dm", m)
	}
	h := int(d / time.Hour)
	if h < 8 {
		if m := int(d/time.Minute) % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", h, m)
		}
		return fmt.Sprintf("%dh", h)
	} else if h < 48 {
		return fmt.Sprintf("%dh", h)
	} else if h < 24*8 {
		if h%24 != 0 {
			return fmt.Sprintf("%dd%dh", h/24, h%24)
		}
		return fmt.Sprintf("%dd", h/24)
	} else if h < 24*365*2 {
		return fmt.Sprintf("%dd", h/24)
	} else if h < 24*365*8 {
		if dy := h / 24 % 365; dy != 0 {
			return fmt.Sprintf("%dy%dd", h/24/365, dy)
		}
		return fmt.Sprintf("%dy", h/24/365)
	}
	return fmt.Sprintf("%dy", h/24/365)
}

func timeAt(o map[string]any, path ...string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, getString(o, path...))
	return t, err == nil
}

func ago(o map[string]any, path ...string) any {
	t, ok := timeAt(o, path...)
	if !ok {
		return "<none>"
	}
	return humanDuration(time.Since(t))
}

// podStatus is kube's printPod STATUS: the phase, or a reason the pod or
// a container gives, or Terminating.
func podStatus(o map[string]any) string {
	reason := getString(o, "status", "phase")
	if r := getString(o, "status", "reason"); r != "" {
		reason = r
	}
	inits := maps(o, "status", "initContainerStatuses")
	initializing := false
	for i, c := range inits {
		switch {
		case getString(c, "state", "terminated", "reason") != "" && intAt(c, "state", "terminated", "exitCode") == 0:
			continue
		case get(c, "state", "terminated") != nil:
			if r := getString(c, "state", "terminated", "reason"); r != "" {
				reason = "Init:" + r
			} else {
				reason = "Init:ExitCode:" + strconv.FormatInt(intAt(c, "state", "terminated", "exitCode"), 10)
			}
			initializing = true
		case getString(c, "state", "waiting", "reason") != "" && getString(c, "state", "waiting", "reason") != "PodInitializing":
			reason = "Init:" + getString(c, "state", "waiting", "reason")
			initializing = true
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(maps(o, "spec", "initContainers")))
			initializing = true
		}
		break
	}
	if !initializing {
		cs := maps(o, "status", "containerStatuses")
		for i := len(cs) - 1; i >= 0; i-- {
			c := cs[i]
			if r := getString(c, "state", "waiting", "reason"); r != "" {
				reason = r
			} else if r := getString(c, "state", "terminated", "reason"); r != "" {
				reason = r
			} else if t := getMap(c, "state", "terminated"); t != nil {
				if sig := intAt(t, "signal"); sig != 0 {
					reason = fmt.Sprintf("Signal:%d", sig)
				} else {
					reason = fmt.Sprintf("ExitCode:%d", intAt(t, "exitCode"))
				}
			}
		}
	}
	if getString(o, "metadata", "deletionTimestamp") != "" {
		if getString(o, "status", "reason") == "NodeLost" {
			return "Unknown"
		}
		return "Terminating"
	}
	return reason
}

func podReady(o map[string]any) any {
	ready := 0
	for _, c := range maps(o, "status", "containerStatuses") {
		if r, _ := c["ready"].(bool); r {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(getList(o, "spec", "containers")))
}

func podRestarts(o map[string]any) any {
	var n int64
	var last time.Time
	for _, c := range maps(o, "status", "containerStatuses") {
		n += intAt(c, "restartCount")
		if t, ok := timeAt(c, "lastState", "terminated", "finishedAt"); ok && t.After(last) {
			last = t
		}
	}
	if n > 0 && !last.IsZero() {
		return fmt.Sprintf("%d (%s ago)", n, humanDuration(time.Since(last)))
	}
	return strconv.FormatInt(n, 10)
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func servicePorts(o map[string]any) any {
	var out []string
	for _, p := range maps(o, "spec", "ports") {
		s := fmt.Sprintf("%d/%s", intAt(p, "port"), getString(p, "protocol"))
		if np := intAt(p, "nodePort"); np != 0 {
			s = fmt.Sprintf("%d:%d/%s", intAt(p, "port"), np, getString(p, "protocol"))
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return "<none>"
	}
	return strings.Join(out, ",")
}

func externalIP(o map[string]any) any {
	var ips []string
	for _, i := range maps(o, "status", "loadBalancer", "ingress") {
		if ip := getString(i, "ip"); ip != "" {
			ips = append(ips, ip)
		} else if h := getString(i, "hostname"); h != "" {
			ips = append(ips, h)
		}
	}
	for _, ip := range getList(o, "spec", "externalIPs") {
		ips = append(ips, fmt.Sprint(ip))
	}
	switch getString(o, "spec", "type") {
	case "ExternalName":
		return getString(o, "spec", "externalName")
	case "LoadBalancer":
		if len(ips) == 0 {
			return "<pending>"
		}
	}
	if len(ips) == 0 {
		return "<none>"
	}
	return strings.Join(ips, ",")
}

// jobStatus is kube's Job STATUS: Complete, Failed, Suspended,
// Terminating, FailureTarget, SuccessCriteriaMet or Running.
func jobStatus(o map[string]any) any {
	has := func(t string) bool {
		for _, c := range maps(o, "status", "conditions") {
			if getString(c, "type") == t && getString(c, "status") == "True" {
				return true
			}
		}
		return false
	}
	switch {
	case has("Complete"):
		return "Complete"
	case has("Failed"):
		return "Failed"
	case getString(o, "metadata", "deletionTimestamp") != "":
		return "Terminating"
	case has("FailureTarget"):
		return "FailureTarget"
	case has("SuccessCriteriaMet"):
		return "SuccessCriteriaMet"
	case has("Suspended"):
		return "Suspended"
	}
	return "Running"
}

func jobCompletions(o map[string]any) any {
	succeeded := intAt(o, "status", "succeeded")
	if get(o, "spec", "completions") != nil {
		return fmt.Sprintf("%d/%d", succeeded, intAt(o, "spec", "completions"))
	}
	par := intAt(o, "spec", "parallelism")
	if par > 1 {
		return fmt.Sprintf("%d/1 of %d", succeeded, par)
	}
	return fmt.Sprintf("%d/1", succeeded)
}

func jobDuration(o map[string]any) any {
	start, ok := timeAt(o, "status", "startTime")
	if !ok {
		return ""
	}
	end, ok := timeAt(o, "status", "completionTime")
	if !ok {
		end = time.Now()
	}
	return humanDuration(end.Sub(start))
}

func count(path ...string) func(o map[string]any) any {
	return func(o map[string]any) any { return intAt(o, path...) }
}

func ratio(a, b []string) func(o map[string]any) any {
	return func(o map[string]any) any { return fmt.Sprintf("%d/%d", intAt(o, a...), intAt(o, b...)) }
}

func str(path ...string) func(o map[string]any) any {
	return func(o map[string]any) any { return getString(o, path...) }
}

func strOrNone(path ...string) func(o map[string]any) any {
	return func(o map[string]any) any { return orNone(getString(o, path...)) }
}

// columns are the kinds' columns, by group/plural.
var columns = map[string][]registry.Column{
	"/pods": {
		col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic.", podReady),
		col("Status", "string", "The aggregate status of the containers in this pod.", func(o map[string]any) any { return podStatus(o) }),
		col("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", podRestarts),
		age,
		wide(col("IP", "string", "The IP address assigned to the pod", strOrNone("status", "podIP"))),
		wide(col("Node", "string", "The node on which the pod is scheduled", strOrNone("spec", "nodeName"))),
		wide(col("Nominated Node", "string", "The node that the pod is nominated to", strOrNone("status", "nominatedNodeName"))),
		wide(col("Readiness Gates", "string", "The readiness gates of the pod", func(o map[string]any) any {
			gates := maps(o, "spec", "readinessGates")
			if len(gates) == 0 {
				return "<none>"
			}
			return fmt.Sprintf("%d/%d", 0, len(gates))
		})),
	},
	"apps/deployments": append([]registry.Column{
		col("Ready", "string", "Number of the pod with ready state", ratio([]string{"status", "readyReplicas"}, []string{"spec", "replicas"})),
		col("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment that have the desired template spec.", count("status", "updatedReplicas")),
		col("Available", "string", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.", count("status", "availableReplicas")),
		age,
	}, templateColumns("spec", "template")...),
	"apps/replicasets": append([]registry.Column{
		col("Desired", "integer", "Replicas is the number of desired replicas.", count("spec", "replicas")),
		col("Current", "integer", "Replicas is the most recently observed number of replicas.", count("status", "replicas")),
		col("Ready", "integer", "The number of ready replicas for this replica set.", count("status", "readyReplicas")),
		age,
	}, templateColumns("spec", "template")...),
	"/replicationcontrollers": append([]registry.Column{
		col("Desired", "integer", "Replicas is the number of desired replicas.", count("spec", "replicas")),
		col("Current", "integer", "Replicas is the most recently observed number of replicas.", count("status", "replicas")),
		col("Ready", "integer", "The number of ready replicas for this replication controller.", count("status", "readyReplicas")),
		age,
	}, templateColumns("spec", "template")...),
	"apps/statefulsets": append([]registry.Column{
		col("Ready", "string", "Number of the pod with ready state", ratio([]string{"status", "readyReplicas"}, []string{"spec", "replicas"})),
		age,
	}, templateColumns("spec", "template")[:2]...),
	"apps/daemonsets": append([]registry.Column{
		col("Desired", "integer", "The total number of nodes that should be running the daemon pod.", count("status", "desiredNumberScheduled")),
		col("Current", "integer", "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.", count("status", "currentNumberScheduled")),
		col("Ready", "integer", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.", count("status", "numberReady")),
		col("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod", count("status", "updatedNumberScheduled")),
		col("Available", "integer", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)", count("status", "numberAvailable")),
		col("Node Selector", "string", "NodeSelector is a selector which must be true for the pod to fit on a node.", func(o map[string]any) any {
			var parts []string
			for k, v := range stringMap(getMap(o, "spec", "template", "spec", "nodeSelector")) {
				parts = append(parts, k+"="+v)
			}
			sort.Strings(parts)
			return orNone(strings.Join(parts, ","))
		}),
		age,
	}, templateColumns("spec", "template")...),
	"/services": {
		col("Type", "string", "The type of service.", str("spec", "type")),
		col("Cluster-IP", "string", "The cluster IP of the service.", strOrNone("spec", "clusterIP")),
		col("External-IP", "string", "The external IP of the service.", externalIP),
		col("Port(s)", "string", "The ports of the service.", servicePorts),
		age,
		wide(col("Selector", "string", "Route service traffic to pods with label keys and values matching this selector.", func(o map[string]any) any {
			var parts []string
			for k, v := range stringMap(getMap(o, "spec", "selector")) {
				parts = append(parts, k+"="+v)
			}
			sort.Strings(parts)
			return orNone(strings.Join(parts, ","))
		})),
	},
	"batch/jobs": append([]registry.Column{
		col("Status", "string", "Status of the job.", jobStatus),
		col("Completions", "string", "The completion status of the job.", jobCompletions),
		col("Duration", "string", "Time required to complete the job.", jobDuration),
		age,
	}, templateColumns("spec", "template")...),
	"batch/cronjobs": append([]registry.Column{
		col("Schedule", "string", "The schedule for running the job.", str("spec", "schedule")),
		col("Timezone", "string", "The timezone for the schedule.", strOrNone("spec", "timeZone")),
		col("Suspend", "string", "Whether the cronjob is suspended.", func(o map[string]any) any {
			if b, _ := get(o, "spec", "suspend").(bool); b {
				return "True"
			}
			return "False"
		}),
		col("Active", "integer", "The number of active jobs.", func(o map[string]any) any { return int64(len(getList(o, "status", "active"))) }),
		col("Last Schedule", "string", "When the job was last scheduled.", func(o map[string]any) any { return ago(o, "status", "lastScheduleTime") }),
		age,
	}, templateColumns("spec", "jobTemplate", "spec", "template")...),
	"/secrets": {
		col("Type", "string", "The type of the secret.", str("type")),
		col("Data", "integer", "The number of entries in the secret's data.", func(o map[string]any) any { return int64(len(getMap(o, "data"))) }),
		age,
	},
	"/serviceaccounts": {age},
	"/endpoints": {
		col("Endpoints", "string", "Endpoints of the endpoints object.", func(o map[string]any) any {
			var out []string
			for _, s := range maps(o, "subsets") {
				for _, a := range maps(s, "addresses") {
					for _, p := range maps(s, "ports") {
						out = append(out, fmt.Sprintf("%s:%d", getString(a, "ip"), intAt(p, "port")))
					}
				}
			}
			if len(out) > 3 {
				return strings.Join(out[:3], ",") + fmt.Sprintf(" + %d more...", len(out)-3)
			}
			return orNone(strings.Join(out, ","))
		}),
		age,
	},
	"/nodes": {
		col("Status", "string", "The status of the node.", func(o map[string]any) any {
			status := "Unknown"
			for _, c := range maps(o, "status", "conditions") {
				if getString(c, "type") == "Ready" {
					status = "NotReady"
					if getString(c, "status") == "True" {
						status = "Ready"
					}
				}
			}
			if u, _ := get(o, "spec", "unschedulable").(bool); u {
				status += ",SchedulingDisabled"
			}
			return status
		}),
		col("Roles", "string", "The roles of the node.", func(o map[string]any) any {
			var roles []string
			for k := range stringMap(getMap(o, "metadata", "labels")) {
				if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok {
					roles = append(roles, r)
				}
			}
			sort.Strings(roles)
			return orNone(strings.Join(roles, ","))
		}),
		age,
		col("Version", "string", "Kubelet Version reported by the node.", str("status", "nodeInfo", "kubeletVersion")),
	},
	"/persistentvolumeclaims": {
		col("Status", "string", "The status of the claim.", str("status", "phase")),
		col("Volume", "string", "The volume bound to the claim.", str("spec", "volumeName")),
		col("Capacity", "string", "The capacity of the bound volume.", str("status", "capacity", "storage")),
		col("Access Modes", "string", "The access modes of the bound volume.", accessModes),
		col("StorageClass", "string", "The storage class of the claim.", str("spec", "storageClassName")),
		col("VolumeAttributesClass", "string", "The volume attributes class of the claim.", func(o map[string]any) any {
			if c := getString(o, "spec", "volumeAttributesClassName"); c != "" {
				return c
			}
			return "<unset>"
		}),
		age,
	},
	"/events":              eventColumns(coreEvent),
	"events.k8s.io/events": eventColumns(eventsEvent),
	"certificates.k8s.io/certificatesigningrequests": {
		age,
		col("SignerName", "string", "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.", strOrNone("spec", "signerName")),
		col("Requestor", "string", "Base64-encoded PKCS#10 CSR data", str("spec", "username")),
		col("RequestedDuration", "string", "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.", csrRequestedDuration),
		col("Condition", "string", "Conditions applied to the request, such as approval or denial.", csrCondition),
	},
	"coordination.k8s.io/leases": {
		col("Holder", "string", "The holder of the lease.", str("spec", "holderIdentity")),
		age,
	},
	"networking.k8s.io/ingresses": {
		col("Class", "string", "The name of the IngressClass resource that should be used for additional configurations", strOrNone("spec", "ingressClassName")),
		col("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule", func(o map[string]any) any {
			var hosts []string
			for _, r := range maps(o, "spec", "rules") {
				if h := getString(r, "host"); h != "" {
					hosts = append(hosts, h)
				}
			}
			if len(hosts) == 0 {
				return "*"
			}
			return strings.Join(hosts, ",")
		}),
		col("Address", "string", "Address is a list containing ingress points for the load-balancer", func(o map[string]any) any {
			var out []string
			for _, i := range maps(o, "status", "loadBalancer", "ingress") {
				if ip := getString(i, "ip"); ip != "" {
					out = append(out, ip)
				} else {
					out = append(out, getString(i, "hostname"))
				}
			}
			return strings.Join(out, ",")
		}),
		col("Ports", "string", "Ports of TLS configurations that open", func(o map[string]any) any {
			if len(getList(o, "spec", "tls")) > 0 {
				return "80, 443"
			}
			return "80"
		}),
		age,
	},
}

func accessModes(o map[string]any) any {
	short := map[string]string{"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
	var out []string
	for _, m := range getList(o, "status", "accessModes") {
		out = append(out, short[fmt.Sprint(m)])
	}
	return strings.Join(out, ",")
}

// eventFields are where an Event's version keeps what kube's printEvent
// reads (core v1 names, or events.k8s.io v1's).
type eventFields struct {
	first, last, count, object, message, source []string
	controller, instance                        []string
}

var (
	coreEvent = eventFields{
		first: []string{"firstTimestamp"}, last: []string{"lastTimestamp"}, count: []string{"count"},
		object: []string{"involvedObject"}, message: []string{"message"}, source: []string{"source"},
		controller: []string{"reportingComponent"}, instance: []string{"reportingInstance"},
	}
	eventsEvent = eventFields{
		first: []string{"deprecatedFirstTimestamp"}, last: []string{"deprecatedLastTimestamp"}, count: []string{"deprecatedCount"},
		object: []string{"regarding"}, message: []string{"note"}, source: []string{"deprecatedSource"},
		controller: []string{"reportingController"}, instance: []string{"reportingInstance"},
	}
)

// eventColumns are kube's printEvent columns, which kube prints for both
// versions of Event (both are its internal Event): LAST SEEN first, and
// NAME last, in -o wide (a column of format "name": the table has no
// NAME column before them).
//
// Worked example: an event with firstTimestamp 5m ago, no lastTimestamp
// and count 0 reads LAST SEEN "5m" (the first time stands for the last),
// COUNT 1 (a singleton); with a series, LAST SEEN is the series'
// lastObservedTime and COUNT its count.
func eventColumns(f eventFields) []registry.Column {
	since := func(o map[string]any, path ...string) (string, bool) {
		t, ok := timeAt(o, path...)
		if !ok || t.IsZero() {
			return "<unknown>", false
		}
		return humanDuration(time.Since(t)), true
	}
	first := func(o map[string]any) string {
		if s, ok := since(o, f.first...); ok {
			return s
		}
		s, _ := since(o, "eventTime")
		return s
	}
	last := func(o map[string]any) any {
		if getMap(o, "series") != nil {
			s, _ := since(o, "series", "lastObservedTime")
			return s
		}
		if s, ok := since(o, f.last...); ok {
			return s
		}
		return first(o)
	}
	count := func(o map[string]any) any {
		if getMap(o, "series") != nil {
			return intAt(o, "series", "count")
		}
		if n := intAt(o, f.count...); n != 0 {
			return n
		}
		return int64(1)
	}
	target := func(o map[string]any) any {
		kind := strings.ToLower(getString(o, append(f.object, "kind")...))
		if name := getString(o, append(f.object, "name")...); name != "" {
			return kind + "/" + name
		}
		return kind
	}
	source := func(o map[string]any) any {
		component := firstNonEmpty(getString(o, append(f.source, "component")...), getString(o, f.controller...))
		instance := firstNonEmpty(getString(o, append(f.source, "host")...), getString(o, f.instance...))
		if instance == "" {
			return component
		}
		return component + ", " + instance
	}
	name := col("Name", "string", "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
		func(o map[string]any) any { return getString(o, "metadata", "name") })
	name.Format = "name"
	return []registry.Column{
		col("Last Seen", "string", "The time at which the most recent occurrence of this event was recorded.", last),
		col("Type", "string", "Type of this event (Normal, Warning), new types could be added in the future", str("type")),
		col("Reason", "string", "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.", str("reason")),
		col("Object", "string", "The object that this event is about.", target),
		wide(col("Subobject", "string", "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.", str(append(f.object, "fieldPath")...))),
		wide(col("Source", "string", "The component reporting this event. Should be a short machine understandable string.", source)),
		col("Message", "string", "A human-readable description of the status of this operation.", func(o map[string]any) any { return strings.TrimSpace(getString(o, f.message...)) }),
		wide(col("First Seen", "string", "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", func(o map[string]any) any { return first(o) })),
		wide(col("Count", "string", "The number of times this event has occurred.", count)),
		wide(name),
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
