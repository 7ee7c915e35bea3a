package builtin

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/request"
)

// The storage and node kinds' validations answer kube's causes, in
// kube's order (the corpus, testdata/diff/builtin-storage.yaml, compares
// them with kube-apiserver's): "field: message" each.
func TestStorageValidations(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name     string
		validate func(context.Context, registry.Object) []registry.FieldError
		obj      string
		want     []string
	}{
		{"csidriver defaulted", validateCSIDriver, `{"spec":{"attachRequired":true,"podInfoOnMount":false,"storageCapacity":false,"seLinuxMount":false,"preventPodSchedulingIfMissing":false}}`, nil},
		{"csidriver unset", validateCSIDriver, `{"spec":{}}`,
			[]string{`spec.attachedRequired: Required value`, `spec.podInfoOnMount: Required value`, `spec.storageCapacity: Required value`,
				`spec.seLinuxMount: Required value`, `spec.preventPodSchedulingIfMissing: Required value`}},
		{"csidriver bad values", validateCSIDriver, `{"spec":{"attachRequired":true,"podInfoOnMount":false,"storageCapacity":false,"seLinuxMount":false,"preventPodSchedulingIfMissing":false,
			"fsGroupPolicy":"Sometimes","volumeLifecycleModes":["Forever"],"tokenRequests":[{"audience":"a","expirationSeconds":60},{"audience":"a"},{"audience":"b","expirationSeconds":5000000000}],
			"nodeAllocatableUpdatePeriodSeconds":5}}`,
			[]string{`spec.fsGroupPolicy: Unsupported value: "Sometimes": supported values: "File", "None", "ReadWriteOnceWithFSType"`,
				`spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`,
				`spec.tokenRequests[1].audience: Duplicate value: "a"`,
				`spec.tokenRequests[2].expirationSeconds: Invalid value: 5000000000: may not specify a duration larger than 2^32 seconds`,
				`spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"`,
				`spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater than or equal to 10 seconds`}},
		{"csidriver secrets without tokens", validateCSIDriver, `{"spec":{"attachRequired":true,"podInfoOnMount":false,"storageCapacity":false,"seLinuxMount":false,"preventPodSchedulingIfMissing":false,"serviceAccountTokenInSecrets":false}}`,
			[]string{`spec.serviceAccountTokenInSecrets: Invalid value: false: serviceAccountTokenInSecrets is set but no tokenRequests are specified`}},
		{"csinode drivers", validateCSINode, `{"spec":{"drivers":[{},{"name":"Not A Name","nodeID":"n","allocatable":{"count":-1},"topologyKeys":["","a","a"]}]}}`,
			[]string{`spec.drivers[0].name: Required value`, `spec.drivers[0].nodeID: Required value`,
				`spec.drivers[1].name: Invalid value: "Not A Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				`spec.drivers[1].allocatable.count: Invalid value: -1: must be greater than or equal to 0`,
				`spec.drivers[1]: Required value`,
				`spec.drivers[1]: Invalid value: "": name part must be non-empty`,
				`spec.drivers[1]: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				`spec.drivers[1]: Duplicate value: "a"`}},
		{"csistoragecapacity", validateCSIStorageCapacity, `{"storageClassName":"Fast","capacity":"-1Gi","nodeTopology":{"matchExpressions":[{"key":"k","operator":"In"},{"key":"k","operator":"Near"}]}}`,
			[]string{`nodeTopology.matchExpressions[0].values: Required value: must be specified when ` + "`operator`" + ` is 'In' or 'NotIn'`,
				`nodeTopology.matchExpressions[1].operator: Invalid value: "Near": not a valid selector operator`,
				`storageClassName: Invalid value: "Fast": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				`capacity: Invalid value: "-1Gi": must be greater than or equal to 0`}},
		{"volumeattachment no source, attacher last", validateVolumeAttachment, `{"spec":{"nodeName":"n"}}`,
			[]string{`spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName`, `spec.attacher: Required value`}},
		{"volumeattachment both sources", validateVolumeAttachment, `{"spec":{"attacher":"csi.example.com","nodeName":"n","source":{"persistentVolumeName":"pv","inlineVolumeSpec":{}}}}`,
			[]string{`spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName`}},
		{"volumeattachment status", validateVolumeAttachment, `{"spec":{"attacher":"csi.example.com","nodeName":"n","source":{"persistentVolumeName":"pv"}},"status":{"detachError":{"errorCode":-1}}}`,
			[]string{`status.detachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive`}},
		{"volumeattachment attacher, declarative", validateVolumeAttachment, `{"spec":{"attacher":"Not Valid","nodeName":"n","source":{"persistentVolumeName":"pv"}}}`,
			[]string{`spec.attacher: Invalid value: "Not Valid": an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'Example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{"volumeattachment long attacher", validateVolumeAttachment, `{"spec":{"attacher":"` + strings.Repeat("a", 64) + `","nodeName":"n","source":{"persistentVolumeName":"pv"}}}`,
			[]string{`spec.attacher: Too long: may not be more than 63 characters`}},
		{"volumeattachment inline", validateVolumeAttachment, `{"spec":{"attacher":"csi.example.com","nodeName":"n","source":{"inlineVolumeSpec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOncePod","ReadWriteOnce"],"nfs":{},"csi":{"driver":""}}}}}`,
			[]string{`spec.source.inlineVolumeSpec.capacity: Forbidden: may not be specified in the context of inline volumes`,
				`spec.source.inlineVolumeSpec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes`,
				`spec.source.inlineVolumeSpec.csi: Forbidden: may not specify more than 1 volume type`}},
		{"volumeattachment inline without source", validateVolumeAttachment, `{"spec":{"attacher":"csi.example.com","nodeName":"n","source":{"inlineVolumeSpec":{"accessModes":["Sometimes"]}}}}`,
			[]string{`spec.source.inlineVolumeSpec.csi: Required value: has to be specified in the context of inline volumes`,
				`spec.source.inlineVolumeSpec.accessModes: Unsupported value: "Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
				`spec.source.inlineVolumeSpec: Required value: must specify a volume type`}},
		{"volumeattributesclass empty", validateVolumeAttributesClass, `{}`,
			[]string{`driverName: Required value`, `parameters: Required value: must contain at least one key/value pair`}},
		{"runtimeclass", validateRuntimeClass, `{"handler":"","overhead":{"podFixed":{"cpu":"-1","gpu":"1"}},"scheduling":{"tolerations":[{"operator":"Equal","value":"v"},{"key":"k","operator":"Exists"},{"key":"k","operator":"Exists"}]}}`,
			[]string{`overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
				`overhead.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified`,
				`overhead.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers`,
				`scheduling.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when ` + "`key`" + ` is empty, which means "match all values and all keys"`,
				`scheduling.tolerations[2]: Duplicate value: {"Key":"k","Operator":"Exists","Value":"","Effect":"","TolerationSeconds":null}`,
				`handler: Required value`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range tt.validate(ctx, object(t, tt.obj)) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// Updates: the fields each kind keeps, in kube's order (a declarative
// immutability error last, naming no value).
func TestStorageUpdateValidations(t *testing.T) {
	status := request.WithInfo(context.Background(), &request.Info{Subresource: "status"})
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		validate func(context.Context, registry.Object, registry.Object) []registry.FieldError
		old, obj string
		want     []string
	}{
		{"csidriver attachRequired and modes", context.Background(), validateCSIDriverUpdate,
			`{"spec":{"attachRequired":true,"podInfoOnMount":false,"storageCapacity":false,"seLinuxMount":false,"preventPodSchedulingIfMissing":false,"volumeLifecycleModes":["Persistent"]}}`,
			`{"spec":{"attachRequired":false,"podInfoOnMount":true,"storageCapacity":false,"seLinuxMount":false,"preventPodSchedulingIfMissing":false,"volumeLifecycleModes":["Persistent","Ephemeral"]}}`,
			[]string{`spec.attachedRequired: Invalid value: false: field is immutable`, `spec.volumeLifecycleModes: Invalid value: ["Persistent","Ephemeral"]: field is immutable`}},
		{"csinode nodeID", context.Background(), validateCSINodeUpdate,
			`{"spec":{"drivers":[{"name":"a.example.com","nodeID":"n","allocatable":{"count":1}}]}}`,
			`{"spec":{"drivers":[{"name":"a.example.com","nodeID":"m","allocatable":{"count":2}}]}}`,
			[]string{`spec.drivers: Invalid value: {"Name":"a.example.com","NodeID":"m","TopologyKeys":null,"Allocatable":null}: field is immutable`}},
		{"csinode allocatable", context.Background(), validateCSINodeUpdate,
			`{"spec":{"drivers":[{"name":"a.example.com","nodeID":"n","allocatable":{"count":1}}]}}`,
			`{"spec":{"drivers":[{"name":"a.example.com","nodeID":"n","allocatable":{"count":2}}]}}`, nil},
		{"csistoragecapacity class and topology", context.Background(), validateCSIStorageCapacityUpdate,
			`{"storageClassName":"fast","nodeTopology":{"matchLabels":{"zone":"a"}}}`,
			`{"storageClassName":"slow","nodeTopology":{"matchLabels":{"zone":"b"}}}`,
			[]string{`nodeTopology: Invalid value: {"matchLabels":{"zone":"b"}}: field is immutable`, `storageClassName: Invalid value: "slow": field is immutable`}},
		{"volumeattachment spec", context.Background(), validateVolumeAttachmentUpdate,
			`{"spec":{"attacher":"csi.example.com","nodeName":"n","source":{"persistentVolumeName":"pv"}}}`,
			`{"spec":{"attacher":"csi.example.com","nodeName":"Bad_Node","source":{"persistentVolumeName":"pv"}}}`,
			[]string{`spec.nodeName: Invalid value: "Bad_Node": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				`spec: Invalid value: null: field is immutable`}},
		{"volumeattributesclass driver and parameters", context.Background(), validateVolumeAttributesClassUpdate,
			`{"driverName":"csi.example.com","parameters":{"a":"b"}}`, `{"driverName":"other.example.com","parameters":{"a":"c"}}`,
			[]string{`driverName: Forbidden: updates to driverName are forbidden.`, `parameters: Forbidden: updates to parameters are forbidden.`}},
		{"runtimeclass handler", context.Background(), validateRuntimeClassUpdate, `{"handler":"runc"}`, `{"handler":"Kata"}`,
			[]string{`handler: Invalid value: "Kata": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`handler: Invalid value: null: field is immutable`}},
		{"runtimeclass same handler", context.Background(), validateRuntimeClassUpdate, `{"handler":"runc"}`, `{"handler":"runc","overhead":{"podFixed":{"cpu":"1"}}}`, nil},
		{"csinode status write", status, validateCSINodeUpdate, `{"spec":{"drivers":[{"name":"a.example.com","nodeID":"n"}]}}`,
			`{"spec":{"drivers":[{"name":"a.example.com","nodeID":"n"}]},"status":{}}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range tt.validate(tt.ctx, object(t, tt.obj), object(t, tt.old)) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestStorageDefaultsAndWarnings(t *testing.T) {
	ctx := context.Background()
	d := object(t, `{"spec":{"tokenRequests":[{"audience":"a"}]}}`)
	if err := defaultCSIDriver(ctx, d); err != nil {
		t.Fatal(err)
	}
	want := object(t, `{"spec":{"attachRequired":true,"podInfoOnMount":false,"storageCapacity":false,"fsGroupPolicy":"ReadWriteOnceWithFSType",
		"volumeLifecycleModes":["Persistent"],"requiresRepublish":false,"seLinuxMount":false,"preventPodSchedulingIfMissing":false,"tokenRequests":[{"audience":"a"}]}}`)
	if !equal(map[string]any(d), map[string]any(want)) {
		t.Errorf("defaulted CSIDriver %v; want %v", d, want)
	}
	// CSIDriver: no generation on create, one more per spec change.
	old := object(t, `{"metadata":{"name":"d"},"spec":{"podInfoOnMount":false}}`)
	for _, tt := range []struct {
		name, obj string
		want      any
	}{
		{"spec unchanged", `{"metadata":{"name":"d","labels":{"a":"b"}},"spec":{"podInfoOnMount":false}}`, nil},
		{"spec changed", `{"metadata":{"name":"d"},"spec":{"podInfoOnMount":true}}`, int64(1)},
	} {
		o := object(t, tt.obj)
		if err := prepareCSIDriverUpdate(ctx, o, old); err != nil {
			t.Fatal(err)
		}
		if got := o.Meta()["generation"]; got != tt.want {
			t.Errorf("csidriver %s: generation %v; want %v", tt.name, got, tt.want)
		}
	}
	// CSINode: drivers null when none, an empty list stored as null.
	for _, tt := range []struct{ name, obj string }{{"missing", `{"spec":{}}`}, {"empty", `{"spec":{"drivers":[]}}`}} {
		o := object(t, tt.obj)
		if err := defaultCSINode(ctx, o); err != nil {
			t.Fatal(err)
		}
		canonicalizeCSINode(ctx, o)
		if v, ok := getMap(obj(o), "spec")["drivers"]; !ok || v != nil {
			t.Errorf("csinode %s drivers: %v (present %v); want null", tt.name, v, ok)
		}
	}
	for _, tt := range []struct {
		name string
		got  []string
		want []string
	}{
		{"csidriver tokens without secrets", csiDriverWarnings(ctx, d), []string{csiTokenWarning}},
		{"csidriver unchanged tokens", csiDriverUpdateWarnings(ctx, d, d), nil},
		{"runtimeclass deprecated label", runtimeClassWarnings(ctx, object(t, `{"scheduling":{"nodeSelector":{"beta.kubernetes.io/os":"linux","zone":"a"}}}`)),
			[]string{`scheduling.nodeSelector: deprecated since v1.14; use "kubernetes.io/os" instead`}},
		{"csistoragecapacity deprecated label", csiStorageCapacityWarnings(ctx, object(t, `{"nodeTopology":{"matchExpressions":[{"key":"failure-domain.beta.kubernetes.io/zone","operator":"Exists"}]}}`)),
			[]string{`nodeTopology.matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead`}},
	} {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("%s: warnings %q; want %q", tt.name, tt.got, tt.want)
		}
	}
}
