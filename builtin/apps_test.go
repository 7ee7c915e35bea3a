package builtin

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/request"
)

// The apps, autoscaling and events validations answer kube's causes, as
// the differential corpus (builtin-apps.yaml) compares them with
// kube-apiserver's.
func TestAppsValidations(t *testing.T) {
	status := request.WithInfo(context.Background(), &request.Info{Subresource: "status"})
	deployment := `{"metadata":{"name":"d"},"spec":{"replicas":1,"selector":{"matchLabels":{"a":"b"}},"strategy":{"type":"Recreate"},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"restartPolicy":"Always","dnsPolicy":"ClusterFirst","containers":[{"name":"c","image":"x","imagePullPolicy":"Always"}]}}},"status":`
	hpaCreate := func(ctx context.Context, o, _ registry.Object) []registry.FieldError { return validateHPA(ctx, o) }
	event := func(fields string) string {
		return `{"metadata":{"name":"e","namespace":"ns"},"regarding":{"kind":"Deployment","name":"web","namespace":"ns"},` + fields + `}`
	}
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		validate func(ctx context.Context, o, old registry.Object) []registry.FieldError
		obj, old string
		want     []string
	}{
		{"hpa no target", nil, hpaCreate, `{"spec":{"minReplicas":1,"maxReplicas":5}}`, `{}`,
			[]string{`spec.scaleTargetRef.kind: Required value`, `spec.scaleTargetRef.name: Required value`,
				`spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group`}},
		{"hpa zero max", nil, hpaCreate, `{"spec":{"minReplicas":1,"maxReplicas":0,"scaleTargetRef":{"kind":"Deployment","name":"web"}}}`, `{}`,
			[]string{`spec.maxReplicas: Required value`, "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`",
				`spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group`}},
		{"hpa bad names and versions", nil, hpaCreate, `{"spec":{"minReplicas":-1,"maxReplicas":-2,"scaleTargetRef":{"apiVersion":"a/b/c","kind":"..","name":"x/y%"}}}`, `{}`,
			[]string{`spec.minReplicas: Invalid value: -1: must be greater than or equal to 0`, `spec.maxReplicas: Invalid value: -2: must be greater than or equal to 1`,
				"spec.maxReplicas: Invalid value: -2: must be greater than or equal to `minReplicas`",
				`spec.scaleTargetRef.kind: Invalid value: "..": may not be '..'`, `spec.scaleTargetRef.name: Invalid value: "x/y%": may not contain '/'`,
				`spec.scaleTargetRef.name: Invalid value: "x/y%": may not contain '%'`, `spec.scaleTargetRef.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`}},
		{"hpa metrics", nil, hpaCreate, `{"spec":{"minReplicas":0,"maxReplicas":2,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"metrics":[` +
			`{"resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}},` +
			`{"type":"Pods","pods":{"metric":{"name":"a/b"},"target":{"type":"Sometimes"}}},` +
			`{"type":"External","external":{"metric":{"name":"q"},"target":{"type":"Value","value":"-1","averageValue":"-500m"}}},` +
			`{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":0}},"pods":{"metric":{"name":"q"},"target":{"type":"AverageValue","averageValue":"1"}}},` +
			`{"type":"Object"}]}}`, `{}`,
			[]string{`spec.metrics[0].type: Required value: must specify a metric source type`,
				`spec.metrics[0].type: Unsupported value: "": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`,
				`spec.metrics[1].pods.metric.name: Invalid value: "a/b": may not contain '/'`,
				`spec.metrics[1].pods.target.type: Invalid value: "Sometimes": must be either Utilization, Value, or AverageValue`,
				`spec.metrics[1].pods.target.averageValue: Required value: must specify a positive target averageValue`,
				`spec.metrics[2].external.target.value: Invalid value: "-1": must be positive`,
				`spec.metrics[2].external.target.averageValue: Invalid value: "-500m": must be positive`,
				`spec.metrics[2].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target`,
				// the first source present (pods, before resource) is the one checked
				`spec.metrics[3].pods: Forbidden: must populate the given metric source only`,
				`spec.metrics[4].object: Required value: must populate information for the given metric source`}},
		{"hpa scale to zero", nil, hpaCreate, `{"spec":{"minReplicas":0,"maxReplicas":2,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"metrics":[` +
			`{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]}}`, `{}`,
			[]string{`spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas`}},
		{"hpa replicationcontroller in core", nil, hpaCreate, `{"spec":{"maxReplicas":2,"scaleTargetRef":{"apiVersion":"v1","kind":"ReplicationController","name":"rc"}}}`, `{}`, nil},
		{"hpa update keeping its target", nil, validateHPAUpdate, `{"spec":{"maxReplicas":3,"scaleTargetRef":{"apiVersion":"v1","kind":"Deployment","name":"web"}}}`,
			`{"spec":{"maxReplicas":2,"scaleTargetRef":{"apiVersion":"v1","kind":"Deployment","name":"web"}}}`, nil},
		{"deployment status", status, validateDeploymentUpdate, deployment + `{"replicas":-1,"readyReplicas":1,"availableReplicas":1,"updatedReplicas":1}}`, deployment + `{}}`,
			[]string{`status.replicas: Invalid value: -1: must be greater than or equal to 0`,
				`status.updatedReplicas: Invalid value: 1: cannot be greater than status.replicas`,
				`status.readyReplicas: Invalid value: 1: cannot be greater than status.replicas`,
				`status.availableReplicas: Invalid value: 1: cannot be greater than status.replicas`}},
		{"deployment status available above ready", status, validateDeploymentUpdate, deployment + `{"replicas":3,"readyReplicas":1,"availableReplicas":2,"collisionCount":1}}`,
			deployment + `{"collisionCount":2}}`,
			[]string{`status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas`, `status.collisionCount: Invalid value: 1: cannot be decremented`}},
		{"deployment spec through status is not checked", status, validateDeploymentUpdate, strings.Replace(deployment, `"replicas":1`, `"replicas":-1`, 1) + `{}}`, deployment + `{}}`, nil},
		{"deployment spec", nil, validateDeploymentUpdate, strings.Replace(deployment, `"replicas":1`, `"replicas":-1`, 1) + `{}}`, deployment + `{}}`,
			[]string{`spec.replicas: Invalid value: -1: must be greater than or equal to 0`}},
		{"event no reportingController", nil, func(ctx context.Context, o, _ registry.Object) []registry.FieldError { return validateEventsV1(ctx, o) },
			event(`"eventTime":"2026-11-26T06:00:00.000000Z","action":"Scale","reason":"Scaled","type":"Normal"`), `{}`,
			[]string{`reportingController: Required value`, `reportingController: Invalid value: "": name part must be non-empty`,
				`reportingController: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				`reportingInstance: Required value`}},
		{"event deprecated fields and series", nil, func(ctx context.Context, o, _ registry.Object) []registry.FieldError { return validateEventsV1(ctx, o) },
			event(`"eventTime":"2026-11-26T06:00:00.000000Z","reportingController":"c","reportingInstance":"i","action":"A","reason":"R","type":"Odd","series":{"count":1},"deprecatedCount":3,"deprecatedSource":{"component":"x"},"deprecatedFirstTimestamp":"2026-01-01T00:00:00Z"`), `{}`,
			[]string{`series.count: Invalid value: "": should be at least 2`, `series.lastObservedTime: Required value`, `type: Invalid value: "": has invalid value: Odd`,
				`firstTimestamp: Invalid value: "": needs to be unset`, `count: Invalid value: "": needs to be unset`, `source: Invalid value: "": needs to be unset`}},
		{"event without eventTime regards another namespace", nil, func(ctx context.Context, o, _ registry.Object) []registry.FieldError { return validateEventsV1(ctx, o) },
			`{"metadata":{"name":"e","namespace":"ns"},"regarding":{"namespace":"other"},"type":"Normal"}`, `{}`,
			[]string{`involvedObject.namespace: Invalid value: "other": does not match event.namespace`, `eventTime: Required value`}},
		{"hpa status", status, validateHPAUpdate, `{"spec":{"maxReplicas":0},"status":{"currentReplicas":-1,"desiredReplicas":-2,"conditions":[{"type":"AbleToScale","observedGeneration":-1}]}}`, `{"spec":{"maxReplicas":0}}`,
			[]string{`status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or equal to 0`,
				`status.currentReplicas: Invalid value: -1: must be greater than or equal to 0`, `status.desiredReplicas: Invalid value: -2: must be greater than or equal to 0`}},
		{"event update of kept fields", nil, validateEventsV1Update,
			event(`"eventTime":"2026-11-26T06:00:00.000000Z","reportingController":"c","reportingInstance":"i","action":"B","reason":"R2","type":"Normal","note":"n2","deprecatedCount":2`),
			`{"metadata":{"name":"e","namespace":"ns"},"regarding":{"kind":"Deployment","name":"api","namespace":"ns"},"eventTime":"2026-11-26T06:00:00.000000Z","reportingController":"c","reportingInstance":"i","action":"A","reason":"R","type":"Normal","note":"n"}`,
			[]string{`involvedObject: Invalid value: {"Kind":"Deployment","Namespace":"ns","Name":"web","UID":"","APIVersion":"","ResourceVersion":"","FieldPath":""}: field is immutable`,
				`reason: Invalid value: "R2": field is immutable`, `message: Invalid value: "n2": field is immutable`,
				`count: Invalid value: 2: field is immutable`, `action: Invalid value: "B": field is immutable`}},
		{"core event with eventTime", nil, func(ctx context.Context, o, _ registry.Object) []registry.FieldError { return validateEvent(ctx, o) },
			`{"metadata":{"name":"e","namespace":"ns"},"eventTime":"2026-11-26T06:00:00.000000Z","reason":"R","type":"Odd","involvedObject":{"kind":"Deployment","name":"web"}}`, `{}`,
			[]string{`involvedObject.namespace: Invalid value: "": does not match event.namespace`, `reportingComponent: Required value`,
				`reportingComponent: Invalid value: "": name part must be non-empty`,
				`reportingComponent: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				`reportingInstance: Required value`, `action: Required value`}},
		{"core event without eventTime in default", nil, func(ctx context.Context, o, _ registry.Object) []registry.FieldError { return validateEvent(ctx, o) },
			`{"metadata":{"name":"e","namespace":"default"},"reason":"R","involvedObject":{"kind":"Node","name":"n"}}`, `{}`, nil},
		{"event update of series", nil, validateEventsV1Update,
			event(`"eventTime":"2026-11-26T06:00:00.000000Z","reportingController":"c","reportingInstance":"i","action":"A","reason":"R","type":"Normal","series":{"count":1}`),
			event(`"eventTime":"2026-11-26T06:00:00.000000Z","reportingController":"c","reportingInstance":"i","action":"A","reason":"R","type":"Normal"`),
			[]string{`series.count: Invalid value: "": should be at least 2`, `series.lastObservedTime: Required value`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			var got []string
			for _, e := range tt.validate(ctx, object(t, tt.obj), object(t, tt.old)) {
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

// roundTrip converts in to apiVersion and back with convert, returning
// both results as JSON values (json.Number kept as numbers).
func converted(t *testing.T, convert registry.ConvertFunc, in string, apiVersion string) map[string]any {
	t.Helper()
	out, err := convert(context.Background(), []registry.Object{object(t, in)}, apiVersion)
	if err != nil {
		t.Fatal(err)
	}
	return normal(t, out[0])
}

// normal is v as plain JSON values, for comparison.
func normal(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// HPAs convert between autoscaling/v2 and v1 as kube converts them:
// v1's CPU target is a field, the rest travels in annotations, and
// reading v1 back gives the v2 object again.
func TestConvertHPA(t *testing.T) {
	for _, tt := range []struct {
		name, v2, v1 string
	}{
		{"cpu alone",
			`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":5,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}}]},"status":{"desiredReplicas":0,"currentMetrics":null}}`,
			`{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":5,"targetCPUUtilizationPercentage":60},"status":{"currentReplicas":0,"desiredReplicas":0}}`},
		{"other metrics, status, conditions and behavior in annotations",
			`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h","annotations":{"keep":"me"}},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":5,` +
				`"metrics":[{"type":"Pods","pods":{"metric":{"name":"qps","selector":{"matchLabels":{"a":"b"}}},"target":{"type":"AverageValue","averageValue":"10"}}},{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"500Mi"}}}],` +
				`"behavior":{"scaleDown":{"stabilizationWindowSeconds":300,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15}]}}},` +
				`"status":{"currentReplicas":2,"desiredReplicas":3,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":70,"averageValue":"100m"}}}],` +
				`"conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"Ready"}]}}`,
			`{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h","annotations":{"keep":"me",` +
				`"autoscaling.alpha.kubernetes.io/metrics":"[{\"type\":\"Pods\",\"pods\":{\"metricName\":\"qps\",\"targetAverageValue\":\"10\",\"selector\":{\"matchLabels\":{\"a\":\"b\"}}}},{\"type\":\"Resource\",\"resource\":{\"name\":\"memory\",\"targetAverageValue\":\"500Mi\"}}]",` +
				`"autoscaling.alpha.kubernetes.io/current-metrics":"[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\",\"currentAverageUtilization\":70,\"currentAverageValue\":\"100m\"}}]",` +
				`"autoscaling.alpha.kubernetes.io/behavior":"{\"ScaleUp\":null,\"ScaleDown\":{\"StabilizationWindowSeconds\":300,\"SelectPolicy\":\"Max\",\"Policies\":[{\"Type\":\"Pods\",\"Value\":4,\"PeriodSeconds\":15}],\"Tolerance\":null}}",` +
				`"autoscaling.alpha.kubernetes.io/conditions":"[{\"type\":\"AbleToScale\",\"status\":\"True\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"reason\":\"Ready\"}]"}},` +
				`"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":5},"status":{"currentReplicas":2,"desiredReplicas":3,"currentCPUUtilizationPercentage":70}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := converted(t, convertHPA, tt.v2, hpaV1), normal(t, object(t, tt.v1)); !reflect.DeepEqual(got, want) {
				t.Errorf("v2 → v1: got\n%v\nwant\n%v", got, want)
			}
			if got, want := converted(t, convertHPA, tt.v1, "autoscaling/v2"), normal(t, object(t, tt.v2)); !reflect.DeepEqual(got, want) {
				t.Errorf("v1 → v2: got\n%v\nwant\n%v", got, want)
			}
		})
	}
	t.Run("v1 without a target", func(t *testing.T) {
		got := converted(t, convertHPA, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"maxReplicas":5}}`, "autoscaling/v2")
		want := normal(t, object(t, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"maxReplicas":5,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]},"status":{"desiredReplicas":0,"currentMetrics":null}}`))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got\n%v\nwant\n%v", got, want)
		}
	})
}

// events.k8s.io Events and core Events are one object under two sets of
// names, each with its Go struct's zero values.
func TestConvertEvent(t *testing.T) {
	v1 := `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e"},"eventTime":"2026-11-26T06:00:00.000000Z","reportingController":"example.com/c","reportingInstance":"c-1",` +
		`"action":"Scale","reason":"Scaled","type":"Normal","note":"scaled up","regarding":{"kind":"Deployment","name":"web"},"deprecatedSource":{},"deprecatedFirstTimestamp":null,"deprecatedLastTimestamp":null}`
	core := `{"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},"eventTime":"2026-11-26T06:00:00.000000Z","reportingComponent":"example.com/c","reportingInstance":"c-1",` +
		`"action":"Scale","reason":"Scaled","type":"Normal","message":"scaled up","involvedObject":{"kind":"Deployment","name":"web"},"source":{},"firstTimestamp":null,"lastTimestamp":null}`
	if got, want := converted(t, convertEvent, v1, "v1"), normal(t, object(t, core)); !reflect.DeepEqual(got, want) {
		t.Errorf("events.k8s.io → core: got\n%v\nwant\n%v", got, want)
	}
	if got, want := converted(t, convertEvent, core, eventsV1), normal(t, object(t, v1)); !reflect.DeepEqual(got, want) {
		t.Errorf("core → events.k8s.io: got\n%v\nwant\n%v", got, want)
	}
	// A core Event of the old kind: its count and source, and the empty
	// strings core always writes, as events.k8s.io writes them.
	old := `{"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"p"},"reason":"Pulled","message":"ok","source":{"component":"kubelet"},` +
		`"firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:01:00Z","count":3,"type":"Normal","eventTime":null,"reportingComponent":"","reportingInstance":""}`
	want := `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e"},"regarding":{"kind":"Pod","name":"p"},"reason":"Pulled","note":"ok","deprecatedSource":{"component":"kubelet"},` +
		`"deprecatedFirstTimestamp":"2026-01-01T00:00:00Z","deprecatedLastTimestamp":"2026-01-01T00:01:00Z","deprecatedCount":3,"type":"Normal","eventTime":null}`
	if got, want := converted(t, convertEvent, old, eventsV1), normal(t, object(t, want)); !reflect.DeepEqual(got, want) {
		t.Errorf("old core → events.k8s.io: got\n%v\nwant\n%v", got, want)
	}
}

// A v2 HPA's behavior gets kube's defaults for the rules it leaves out
// (SetDefaults_HorizontalPodAutoscalerBehavior); one without a behavior
// gets none; its status has currentMetrics (null), as Go writes it.
func TestDefaultHPABehavior(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"no behavior", `{"spec":{"maxReplicas":5}}`, `{"spec":{"maxReplicas":5,"minReplicas":1,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]}}`},
		{"scale down given", `{"spec":{"maxReplicas":5,"metrics":[],"minReplicas":2,"behavior":{"scaleDown":{"stabilizationWindowSeconds":60,"policies":[{"type":"Pods","value":1,"periodSeconds":30}]}}}}`,
			`{"spec":{"maxReplicas":5,"minReplicas":2,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}],"behavior":{` +
				`"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},` +
				`"scaleDown":{"stabilizationWindowSeconds":60,"selectPolicy":"Max","policies":[{"type":"Pods","value":1,"periodSeconds":30}]}}}}`},
		{"status has currentMetrics", `{"spec":{"maxReplicas":5,"minReplicas":1,"metrics":[{"type":"Pods"}]},"status":{"desiredReplicas":1}}`,
			`{"spec":{"maxReplicas":5,"minReplicas":1,"metrics":[{"type":"Pods"}]},"status":{"desiredReplicas":1,"currentMetrics":null}}`},
		{"empty policies kept", `{"spec":{"maxReplicas":5,"minReplicas":1,"metrics":[{"type":"Pods"}],"behavior":{"scaleUp":{"policies":[],"selectPolicy":"Disabled"}}}}`,
			`{"spec":{"maxReplicas":5,"minReplicas":1,"metrics":[{"type":"Pods"}],"behavior":{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Disabled","policies":[]},` +
				`"scaleDown":{"selectPolicy":"Max","policies":[{"type":"Percent","value":100,"periodSeconds":15}]}}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := object(t, tt.in)
			if err := defaultHPAv2(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			if got, want := normal(t, o), normal(t, object(t, tt.want)); !reflect.DeepEqual(got, want) {
				t.Errorf("got\n%v\nwant\n%v", got, want)
			}
		})
	}
}
