package builtin

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

func object(t *testing.T, s string) registry.Object {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return registry.Object(m)
}

// The validations answer kube's causes (as the differential corpus
// compares with kube-apiserver): "field: message" each.
func TestValidations(t *testing.T) {
	ctx := context.Background()
	pod := func(spec string) string { return `{"metadata":{"name":"p"},"spec":` + spec + `}` }
	for _, tt := range []struct {
		name     string
		validate func(context.Context, registry.Object) []registry.FieldError
		obj      string
		want     []string
	}{
		{"pod valid", validatePod, pod(`{"restartPolicy":"Always","dnsPolicy":"ClusterFirst","containers":[{"name":"a","image":"x","imagePullPolicy":"Always"}]}`), nil},
		{"pod container name and port", validatePod, pod(`{"restartPolicy":"Always","dnsPolicy":"ClusterFirst","containers":[{"name":"A","image":"x","imagePullPolicy":"Always","ports":[{"containerPort":70000,"protocol":"TCP","name":"Not_Valid"}]}]}`),
			[]string{`spec.containers[0].name: Invalid value: "A": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`spec.containers[0].ports[0].name: Invalid value: "Not_Valid": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
				`spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`}},
		{"pod policies and mounts", validatePod, pod(`{"restartPolicy":"Always","dnsPolicy":"Nowhere","activeDeadlineSeconds":-1,"volumes":[{"name":"a"},{"name":"a"}],"containers":[{"name":"a","image":"x","imagePullPolicy":"Sometimes","volumeMounts":[{"name":"b","mountPath":"/b"}]}]}`),
			[]string{`spec.volumes[1].name: Duplicate value: "a"`,
				`spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"`,
				`spec.containers[0].volumeMounts[0].name: Not found: "b"`,
				`spec.dnsPolicy: Unsupported value: "Nowhere": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"`,
				`spec.activeDeadlineSeconds: Invalid value: -1: must be between 1 and 2147483647, inclusive`}},
		{"service ports", validateService, `{"metadata":{"name":"s"},"spec":{"type":"ClusterIP","sessionAffinity":"None","ports":[{"port":0,"protocol":"TCP","targetPort":0},{"port":80,"protocol":"ICMP","nodePort":30001}]}}`,
			[]string{`spec.ports[0].name: Required value`, `spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`,
				`spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive`, `spec.ports[1].name: Required value`,
				`spec.ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`,
				"spec.ports[1].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"}},
		{"service type", validateService, `{"metadata":{"name":"s"},"spec":{"type":"ExternalName","sessionAffinity":"Sticky"}}`,
			[]string{`spec.externalName: Required value`, `spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"`}},
		{"cronjob", validateCronJob, `{"spec":{"schedule":"every minute","timeZone":"Mars/Base","concurrencyPolicy":"Sometimes"}}`,
			[]string{`spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]`,
				`spec.timeZone: Invalid value: "Mars/Base": unknown time zone Mars/Base`,
				`spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"`}},
		{"lease", validateLease, `{"spec":{"leaseDurationSeconds":0,"leaseTransitions":-1}}`,
			[]string{`spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0`, `spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0`}},
		{"pdb", validatePDB, `{"spec":{"minAvailable":"150%","maxUnavailable":-1}}`,
			[]string{`spec.minAvailable: Invalid value: "150%": must not be greater than 100%`, `spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0`,
				`spec: Invalid value: {"MinAvailable":"150%","Selector":null,"MaxUnavailable":-1,"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set`}},
		{"ingress", validateIngress, `{"spec":{"rules":[{"host":"1.2.3.4","http":{"paths":[{"path":"x","pathType":"Prefix"},{"path":"/"}]}}]}}`,
			[]string{`spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address`, `spec.rules[0].http.paths[0].path: Invalid value: "x": must be an absolute path`,
				`spec.rules[0].http.paths[1].pathType: Required value: pathType must be specified`}},
		{"endpointslice", validateEndpointSlice, `{"addressType":"IPv4","endpoints":[{"addresses":["nope"]}]}`,
			[]string{`endpoints[0].addresses[0]: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`}},
		{"priorityclass", validatePriorityClass, `{"metadata":{"name":"system-x"},"value":2000000000}`,
			[]string{`metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-x is not a known system priority class`,
				`value: Forbidden: maximum allowed value of a user defined priority is 1000000000`}},
		{"storageclass", validateStorageClass, `{"reclaimPolicy":"Recycle"}`,
			[]string{`provisioner: Required value`, `reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"`}},
		{"deployment strategy", validateDeployment, `{"spec":{"replicas":-1,"selector":{"matchLabels":{"a":"b"}},"strategy":{"type":"Blue"},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"restartPolicy":"Never","dnsPolicy":"ClusterFirst","containers":[{"name":"c","image":"x","imagePullPolicy":"Always"}]}}}}`,
			[]string{`spec.replicas: Invalid value: -1: must be greater than or equal to 0`, `spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`,
				`spec.strategy: Unsupported value: {"Type":"Blue","RollingUpdate":null}: supported values: "Recreate", "RollingUpdate"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range tt.validate(ctx, object(t, tt.obj)) {
				got = append(got, e.Error())
			}
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestDefaultTolerations(t *testing.T) {
	for _, tt := range []struct {
		name, tolerations string
		want              int
	}{
		{"none", `[]`, 2},
		{"not-ready already", `[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute"}]`, 2},
		{"every taint", `[{"operator":"Exists"}]`, 1},
		{"another effect", `[{"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"}]`, 3},
	} {
		spec := map[string]any(object(t, `{"tolerations":`+tt.tolerations+`}`))
		defaultTolerations(spec)
		if got := len(getList(spec, "tolerations")); got != tt.want {
			t.Errorf("%s: %d tolerations; want %d", tt.name, got, tt.want)
		}
	}
}

func TestStaticBand(t *testing.T) {
	for _, tt := range []struct{ size, want uint32 }{{8, 0}, {256, 16}, {1024, 64}, {1 << 20, 256}} {
		if got := staticBand(tt.size); got != tt.want {
			t.Errorf("staticBand(%d) = %d; want %d", tt.size, got, tt.want)
		}
	}
	s, err := newServices("10.0.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		off, ok := s.ips.allocate()
		if !ok || off < 2+16 {
			t.Fatalf("dynamic allocation gave offset %d (ok %v); want the band above the first 16", off, ok)
		}
	}
}

func TestSecretWarnings(t *testing.T) {
	tls := object(t, `{"type":"kubernetes.io/tls","data":{"tls.crt":"Y3J0","tls.key":"a2V5"}}`)
	if got := secretWarnings(context.Background(), tls); !slices.Equal(got, []string{"tls: failed to find any PEM data in certificate input"}) {
		t.Errorf("warnings = %q", got)
	}
	if got := secretWarnings(context.Background(), object(t, `{"type":"Opaque"}`)); got != nil {
		t.Errorf("opaque secret warnings = %q; want none", got)
	}
}
