package builtin

import (
	"context"
	"encoding/json"

	"github.com/kapi-dev/kapi/registry"
)

// HorizontalPodAutoscalers are stored at autoscaling/v2 and read and
// written at v1 too, converted as kube converts them
// (pkg/apis/autoscaling/v1/conversion.go). autoscaling/v1 has one metric,
// targetCPUUtilizationPercentage; what v2 says beyond it travels in
// annotations of the v1 object, JSON of v1's own metric types, so that a
// v1 client's read-modify-write keeps it:
//
//	v2: spec.metrics [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}},
//	                  {type: Pods, pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: "10"}}}]
//	v1: spec.targetCPUUtilizationPercentage: 60
//	    metadata.annotations["autoscaling.alpha.kubernetes.io/metrics"]:
//	        [{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]
//
// status.currentMetrics, status.conditions and spec.behavior travel the
// same way (behavior as JSON of kube's internal Go type, field names and
// all, as kube writes it). Reading v1 back to v2 takes the annotations
// out again; a v1 object with no metric at all gets kube's implicit 80%
// CPU utilization.

const (
	hpaV1 = "autoscaling/v1"

	hpaMetricsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	hpaCurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	hpaConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	hpaBehaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
)

// hpaRoundTripAnnotations are the annotations conversion owns: kube
// drops them from whatever it converts.
var hpaRoundTripAnnotations = []string{hpaMetricsAnnotation, hpaBehaviorAnnotation,
	"autoscaling.alpha.kubernetes.io/scale-down-tolerance", "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
	hpaCurrentMetricsAnnotation, hpaConditionsAnnotation}

// convertHPA is the registry.ConvertFunc of both HPA versions.
func convertHPA(_ context.Context, objs []registry.Object, apiVersion string) ([]registry.Object, error) {
	for _, o := range objs {
		from, _ := o["apiVersion"].(string)
		switch {
		case from == apiVersion:
		case apiVersion == hpaV1:
			if err := hpaToV1(o); err != nil {
				return nil, err
			}
		case from == hpaV1:
			hpaToV2(o)
		}
		o["apiVersion"] = apiVersion
	}
	return objs, nil
}

// hpaAnnotations are o's annotations without the round-trip ones.
func hpaAnnotations(o registry.Object) map[string]any {
	a := getMap(obj(o), "metadata", "annotations")
	if a == nil {
		return nil
	}
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for _, k := range hpaRoundTripAnnotations {
		delete(out, k)
	}
	return out
}

func setAnnotations(o registry.Object, a map[string]any) {
	if len(a) == 0 {
		delete(o.Meta(), "annotations")
		return
	}
	o.Meta()["annotations"] = a
}

// annotate sets annotation k of a to v's JSON.
func annotate(a map[string]any, k string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	a[k] = string(b)
	return nil
}

// isCPUUtilization reports whether a v2 metric is the one v1 has.
func isCPUUtilization(m map[string]any) bool {
	return getString(m, "type") == "Resource" && getString(m, "resource", "name") == "cpu" && get(m, "resource", "target", "averageUtilization") != nil
}

func hpaToV1(o registry.Object) error {
	m := obj(o)
	a := hpaAnnotations(o)
	if a == nil {
		a = map[string]any{}
	}
	spec, status := getMap(m, "spec"), getMap(m, "status")
	v1spec := map[string]any{}
	for _, k := range []string{"scaleTargetRef", "minReplicas", "maxReplicas"} {
		if v, ok := spec[k]; ok {
			v1spec[k] = v
		}
	}
	var other []v1MetricSpec
	cpu := false
	for _, metric := range maps(spec, "metrics") {
		if isCPUUtilization(metric) {
			if !cpu {
				v1spec["targetCPUUtilizationPercentage"] = get(metric, "resource", "target", "averageUtilization")
				cpu = true
			}
			continue
		}
		other = append(other, metricSpecToV1(metric))
	}
	if len(other) > 0 {
		if err := annotate(a, hpaMetricsAnnotation, other); err != nil {
			return err
		}
	}
	v1status := map[string]any{"currentReplicas": num(intAt(status, "currentReplicas")), "desiredReplicas": num(intAt(status, "desiredReplicas"))}
	for _, k := range []string{"observedGeneration", "lastScaleTime"} {
		if v, ok := status[k]; ok {
			v1status[k] = v
		}
	}
	if current := maps(status, "currentMetrics"); len(current) > 0 {
		l := make([]v1MetricStatus, len(current))
		for i, c := range current {
			l[i] = metricStatusToV1(c)
			if getString(c, "type") == "Resource" && getString(c, "resource", "name") == "cpu" {
				if u := get(c, "resource", "current", "averageUtilization"); u != nil {
					v1status["currentCPUUtilizationPercentage"] = u
				}
			}
		}
		if err := annotate(a, hpaCurrentMetricsAnnotation, l); err != nil {
			return err
		}
	}
	if b := getMap(spec, "behavior"); b != nil {
		if err := annotate(a, hpaBehaviorAnnotation, behaviorToGo(b)); err != nil {
			return err
		}
	}
	if conds := maps(status, "conditions"); len(conds) > 0 {
		l := make([]hpaCondition, len(conds))
		for i, c := range conds {
			l[i] = hpaCondition{Type: getString(c, "type"), Status: getString(c, "status"), Reason: getString(c, "reason"), Message: getString(c, "message"),
				LastTransitionTime: optString(c, "lastTransitionTime"), ObservedGeneration: optInt(c, "observedGeneration")}
		}
		if err := annotate(a, hpaConditionsAnnotation, l); err != nil {
			return err
		}
	}
	setAnnotations(o, a)
	o["spec"], o["status"] = v1spec, v1status
	return nil
}

func hpaToV2(o registry.Object) {
	m := obj(o)
	ann := getMap(m, "metadata", "annotations")
	spec, status := getMap(m, "spec"), getMap(m, "status")
	v2spec := map[string]any{}
	for _, k := range []string{"scaleTargetRef", "minReplicas", "maxReplicas"} {
		if v, ok := spec[k]; ok {
			v2spec[k] = v
		}
	}
	var metrics []any
	var other []v1MetricSpec
	if s, ok := ann[hpaMetricsAnnotation].(string); ok && json.Unmarshal([]byte(s), &other) == nil {
		for _, x := range other {
			metrics = append(metrics, x.toV2())
		}
	}
	if t := spec["targetCPUUtilizationPercentage"]; t != nil {
		metrics = append(metrics, cpuUtilization(t))
	}
	if len(metrics) == 0 {
		metrics = []any{cpuUtilization(num(80))} // v1's implicit target
	}
	v2spec["metrics"] = metrics
	if s, ok := ann[hpaBehaviorAnnotation].(string); ok {
		var b goBehavior
		if json.Unmarshal([]byte(s), &b) == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			v2spec["behavior"] = b.toV2()
		}
	}
	v2status := map[string]any{"desiredReplicas": num(intAt(status, "desiredReplicas")), "currentMetrics": nil}
	if n := intAt(status, "currentReplicas"); n != 0 {
		v2status["currentReplicas"] = num(n)
	}
	for _, k := range []string{"observedGeneration", "lastScaleTime"} {
		if v, ok := status[k]; ok {
			v2status[k] = v
		}
	}
	if u := status["currentCPUUtilizationPercentage"]; u != nil {
		v2status["currentMetrics"] = []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", "current": map[string]any{"averageUtilization": u}}}}
	}
	var current []v1MetricStatus
	if s, ok := ann[hpaCurrentMetricsAnnotation].(string); ok && json.Unmarshal([]byte(s), &current) == nil {
		l := make([]any, len(current))
		for i, c := range current {
			l[i] = c.toV2()
		}
		v2status["currentMetrics"] = l
	}
	var conds []hpaCondition
	if s, ok := ann[hpaConditionsAnnotation].(string); ok && json.Unmarshal([]byte(s), &conds) == nil && len(conds) > 0 {
		l := make([]any, len(conds))
		for i, c := range conds {
			l[i] = c.toMap()
		}
		v2status["conditions"] = l
	}
	setAnnotations(o, hpaAnnotations(o))
	o["spec"], o["status"] = v2spec, v2status
}

func cpuUtilization(target any) map[string]any {
	return map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu",
		"target": map[string]any{"type": "Utilization", "averageUtilization": target}}}
}

func optString(m map[string]any, k string) *string {
	if s, ok := m[k].(string); ok {
		return &s
	}
	return nil
}

func optInt(m map[string]any, k string) *int64 {
	if m[k] == nil {
		return nil
	}
	n := intAt(m, k)
	return &n
}

// quantity is a v2 quantity, "0" when unset (v1's non-pointer
// resource.Quantity).
func quantity(m map[string]any, path ...string) string {
	if s, ok := get(m, path...).(string); ok {
		return s
	}
	return "0"
}

// selector is a v2 metric's label selector as v1 writes it.
func selector(m map[string]any, path ...string) *labelSelector {
	v := get(m, path...)
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var s labelSelector
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}

// ref is a CrossVersionObjectReference in field order.
type ref struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
}

func refOf(m map[string]any) ref {
	return ref{Kind: getString(m, "kind"), Name: getString(m, "name"), APIVersion: getString(m, "apiVersion")}
}

func (r ref) toMap() map[string]any {
	out := map[string]any{"kind": r.Kind, "name": r.Name}
	if r.APIVersion != "" {
		out["apiVersion"] = r.APIVersion
	}
	return out
}

// labelSelector is metav1.LabelSelector in field order.
type labelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []struct {
		Key      string   `json:"key"`
		Operator string   `json:"operator"`
		Values   []string `json:"values,omitempty"`
	} `json:"matchExpressions,omitempty"`
}

func (s *labelSelector) toMap() any {
	if s == nil {
		return nil
	}
	b, _ := json.Marshal(s)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// metricIdentifier is a v2 metric's name and selector.
func metricIdentifier(name string, sel *labelSelector) map[string]any {
	m := map[string]any{"name": name}
	if sel != nil {
		m["selector"] = sel.toMap()
	}
	return m
}

// setQ sets k to *q when q is not nil.
func setQ(m map[string]any, k string, q *string) {
	if q != nil {
		m[k] = *q
	}
}

// optQ is the v2 quantity at path, nil when unset.
func optQ(m map[string]any, path ...string) *string {
	if s, ok := get(m, path...).(string); ok {
		return &s
	}
	return nil
}

func optI(m map[string]any, path ...string) *int64 {
	if get(m, path...) == nil {
		return nil
	}
	n := intAt(m, path...)
	return &n
}

// v1MetricSpec is autoscaling/v1's MetricSpec, in its field order.
type v1MetricSpec struct {
	Type   string `json:"type"`
	Object *struct {
		Target       ref            `json:"target"`
		MetricName   string         `json:"metricName"`
		TargetValue  string         `json:"targetValue"`
		Selector     *labelSelector `json:"selector,omitempty"`
		AverageValue *string        `json:"averageValue,omitempty"`
	} `json:"object,omitempty"`
	Pods *struct {
		MetricName         string         `json:"metricName"`
		TargetAverageValue string         `json:"targetAverageValue"`
		Selector           *labelSelector `json:"selector,omitempty"`
	} `json:"pods,omitempty"`
	Resource          *v1ResourceSource `json:"resource,omitempty"`
	ContainerResource *v1ResourceSource `json:"containerResource,omitempty"`
	External          *struct {
		MetricName         string         `json:"metricName"`
		MetricSelector     *labelSelector `json:"metricSelector,omitempty"`
		TargetValue        *string        `json:"targetValue,omitempty"`
		TargetAverageValue *string        `json:"targetAverageValue,omitempty"`
	} `json:"external,omitempty"`
}

// v1ResourceSource is v1's ResourceMetricSource, and with a container
// its ContainerResourceMetricSource.
type v1ResourceSource struct {
	Name                     string  `json:"name"`
	TargetAverageUtilization *int64  `json:"targetAverageUtilization,omitempty"`
	TargetAverageValue       *string `json:"targetAverageValue,omitempty"`
	Container                *string `json:"container,omitempty"`
}

func metricSpecToV1(m map[string]any) v1MetricSpec {
	out := v1MetricSpec{Type: getString(m, "type")}
	if s := getMap(m, "object"); s != nil {
		out.Object = &struct {
			Target       ref            `json:"target"`
			MetricName   string         `json:"metricName"`
			TargetValue  string         `json:"targetValue"`
			Selector     *labelSelector `json:"selector,omitempty"`
			AverageValue *string        `json:"averageValue,omitempty"`
		}{Target: refOf(getMap(s, "describedObject")), MetricName: getString(s, "metric", "name"), TargetValue: quantity(s, "target", "value"),
			Selector: selector(s, "metric", "selector"), AverageValue: optQ(s, "target", "averageValue")}
	}
	if s := getMap(m, "pods"); s != nil {
		out.Pods = &struct {
			MetricName         string         `json:"metricName"`
			TargetAverageValue string         `json:"targetAverageValue"`
			Selector           *labelSelector `json:"selector,omitempty"`
		}{MetricName: getString(s, "metric", "name"), TargetAverageValue: quantity(s, "target", "averageValue"), Selector: selector(s, "metric", "selector")}
	}
	if s := getMap(m, "resource"); s != nil {
		out.Resource = &v1ResourceSource{Name: getString(s, "name"), TargetAverageUtilization: optI(s, "target", "averageUtilization"), TargetAverageValue: optQ(s, "target", "averageValue")}
	}
	if s := getMap(m, "containerResource"); s != nil {
		c := getString(s, "container")
		out.ContainerResource = &v1ResourceSource{Name: getString(s, "name"), TargetAverageUtilization: optI(s, "target", "averageUtilization"),
			TargetAverageValue: optQ(s, "target", "averageValue"), Container: &c}
	}
	if s := getMap(m, "external"); s != nil {
		out.External = &struct {
			MetricName         string         `json:"metricName"`
			MetricSelector     *labelSelector `json:"metricSelector,omitempty"`
			TargetValue        *string        `json:"targetValue,omitempty"`
			TargetAverageValue *string        `json:"targetAverageValue,omitempty"`
		}{MetricName: getString(s, "metric", "name"), MetricSelector: selector(s, "metric", "selector"),
			TargetValue: optQ(s, "target", "value"), TargetAverageValue: optQ(s, "target", "averageValue")}
	}
	return out
}

func (x v1MetricSpec) toV2() map[string]any {
	out := map[string]any{"type": x.Type}
	if s := x.Object; s != nil {
		target := map[string]any{"type": "Value", "value": s.TargetValue}
		if s.AverageValue != nil {
			target = map[string]any{"type": "AverageValue", "averageValue": *s.AverageValue}
			if s.TargetValue != "0" && s.TargetValue != "" {
				target["value"] = s.TargetValue
			}
		}
		out["object"] = map[string]any{"describedObject": s.Target.toMap(), "target": target, "metric": metricIdentifier(s.MetricName, s.Selector)}
	}
	if s := x.Pods; s != nil {
		out["pods"] = map[string]any{"metric": metricIdentifier(s.MetricName, s.Selector),
			"target": map[string]any{"type": "AverageValue", "averageValue": s.TargetAverageValue}}
	}
	for k, s := range map[string]*v1ResourceSource{"resource": x.Resource, "containerResource": x.ContainerResource} {
		if s == nil {
			continue
		}
		target := map[string]any{"type": "AverageValue"}
		if s.TargetAverageUtilization != nil {
			target = map[string]any{"type": "Utilization", "averageUtilization": num(*s.TargetAverageUtilization)}
		}
		setQ(target, "averageValue", s.TargetAverageValue)
		src := map[string]any{"name": s.Name, "target": target}
		if s.Container != nil {
			src["container"] = *s.Container
		}
		out[k] = src
	}
	if s := x.External; s != nil {
		target := map[string]any{"type": "AverageValue"}
		if s.TargetValue != nil {
			target = map[string]any{"type": "Value", "value": *s.TargetValue}
		}
		setQ(target, "averageValue", s.TargetAverageValue)
		out["external"] = map[string]any{"metric": metricIdentifier(s.MetricName, s.MetricSelector), "target": target}
	}
	return out
}

// v1MetricStatus is autoscaling/v1's MetricStatus, in its field order.
type v1MetricStatus struct {
	Type   string `json:"type"`
	Object *struct {
		Target       ref            `json:"target"`
		MetricName   string         `json:"metricName"`
		CurrentValue string         `json:"currentValue"`
		Selector     *labelSelector `json:"selector,omitempty"`
		AverageValue *string        `json:"averageValue,omitempty"`
	} `json:"object,omitempty"`
	Pods *struct {
		MetricName          string         `json:"metricName"`
		CurrentAverageValue string         `json:"currentAverageValue"`
		Selector            *labelSelector `json:"selector,omitempty"`
	} `json:"pods,omitempty"`
	Resource          *v1ResourceStatus `json:"resource,omitempty"`
	ContainerResource *v1ResourceStatus `json:"containerResource,omitempty"`
	External          *struct {
		MetricName          string         `json:"metricName"`
		MetricSelector      *labelSelector `json:"metricSelector,omitempty"`
		CurrentValue        string         `json:"currentValue"`
		CurrentAverageValue *string        `json:"currentAverageValue,omitempty"`
	} `json:"external,omitempty"`
}

// v1ResourceStatus is v1's ResourceMetricStatus, and with a container
// its ContainerResourceMetricStatus.
type v1ResourceStatus struct {
	Name                      string  `json:"name"`
	CurrentAverageUtilization *int64  `json:"currentAverageUtilization,omitempty"`
	CurrentAverageValue       string  `json:"currentAverageValue"`
	Container                 *string `json:"container,omitempty"`
}

func metricStatusToV1(m map[string]any) v1MetricStatus {
	out := v1MetricStatus{Type: getString(m, "type")}
	if s := getMap(m, "object"); s != nil {
		out.Object = &struct {
			Target       ref            `json:"target"`
			MetricName   string         `json:"metricName"`
			CurrentValue string         `json:"currentValue"`
			Selector     *labelSelector `json:"selector,omitempty"`
			AverageValue *string        `json:"averageValue,omitempty"`
		}{Target: refOf(getMap(s, "describedObject")), MetricName: getString(s, "metric", "name"), CurrentValue: quantity(s, "current", "value"),
			Selector: selector(s, "metric", "selector"), AverageValue: optQ(s, "current", "averageValue")}
	}
	if s := getMap(m, "pods"); s != nil {
		out.Pods = &struct {
			MetricName          string         `json:"metricName"`
			CurrentAverageValue string         `json:"currentAverageValue"`
			Selector            *labelSelector `json:"selector,omitempty"`
		}{MetricName: getString(s, "metric", "name"), CurrentAverageValue: quantity(s, "current", "averageValue"), Selector: selector(s, "metric", "selector")}
	}
	if s := getMap(m, "resource"); s != nil {
		out.Resource = &v1ResourceStatus{Name: getString(s, "name"), CurrentAverageUtilization: optI(s, "current", "averageUtilization"), CurrentAverageValue: quantity(s, "current", "averageValue")}
	}
	if s := getMap(m, "containerResource"); s != nil {
		c := getString(s, "container")
		out.ContainerResource = &v1ResourceStatus{Name: getString(s, "name"), CurrentAverageUtilization: optI(s, "current", "averageUtilization"),
			CurrentAverageValue: quantity(s, "current", "averageValue"), Container: &c}
	}
	if s := getMap(m, "external"); s != nil {
		out.External = &struct {
			MetricName          string         `json:"metricName"`
			MetricSelector      *labelSelector `json:"metricSelector,omitempty"`
			CurrentValue        string         `json:"currentValue"`
			CurrentAverageValue *string        `json:"currentAverageValue,omitempty"`
		}{MetricName: getString(s, "metric", "name"), MetricSelector: selector(s, "metric", "selector"),
			CurrentValue: quantity(s, "current", "value"), CurrentAverageValue: optQ(s, "current", "averageValue")}
	}
	return out
}

func (x v1MetricStatus) toV2() map[string]any {
	out := map[string]any{"type": x.Type}
	if s := x.Object; s != nil {
		current := map[string]any{"value": s.CurrentValue}
		setQ(current, "averageValue", s.AverageValue)
		out["object"] = map[string]any{"describedObject": s.Target.toMap(), "current": current, "metric": metricIdentifier(s.MetricName, s.Selector)}
	}
	if s := x.Pods; s != nil {
		out["pods"] = map[string]any{"metric": metricIdentifier(s.MetricName, s.Selector), "current": map[string]any{"averageValue": s.CurrentAverageValue}}
	}
	for k, s := range map[string]*v1ResourceStatus{"resource": x.Resource, "containerResource": x.ContainerResource} {
		if s == nil {
			continue
		}
		current := map[string]any{"averageValue": s.CurrentAverageValue}
		if s.CurrentAverageUtilization != nil {
			current["averageUtilization"] = num(*s.CurrentAverageUtilization)
		}
		st := map[string]any{"name": s.Name, "current": current}
		if s.Container != nil {
			st["container"] = *s.Container
		}
		out[k] = st
	}
	if s := x.External; s != nil {
		current := map[string]any{"value": s.CurrentValue}
		setQ(current, "averageValue", s.CurrentAverageValue)
		out["external"] = map[string]any{"metric": metricIdentifier(s.MetricName, s.MetricSelector), "current": current}
	}
	return out
}

// hpaCondition is v1's HorizontalPodAutoscalerCondition in its field
// order (an unset lastTransitionTime is null, as metav1.Time writes it).
type hpaCondition struct {
	Type               string  `json:"type"`
	Status             string  `json:"status"`
	LastTransitionTime *string `json:"lastTransitionTime"`
	Reason             string  `json:"reason,omitempty"`
	Message            string  `json:"message,omitempty"`
	ObservedGeneration *int64  `json:"observedGeneration,omitempty"`
}

func (c hpaCondition) toMap() map[string]any {
	m := map[string]any{"type": c.Type, "status": c.Status, "lastTransitionTime": nil}
	if c.LastTransitionTime != nil {
		m["lastTransitionTime"] = *c.LastTransitionTime
	}
	if c.Reason != "" {
		m["reason"] = c.Reason
	}
	if c.Message != "" {
		m["message"] = c.Message
	}
	if c.ObservedGeneration != nil {
		m["observedGeneration"] = num(*c.ObservedGeneration)
	}
	return m
}

// goBehavior is kube's internal HorizontalPodAutoscalerBehavior as Go's
// JSON writes it (no json tags: Go field names), which is what kube puts
// in the behavior annotation.
type goBehavior struct {
	ScaleUp, ScaleDown *goScalingRules
}

type goScalingRules struct {
	StabilizationWindowSeconds *int64
	SelectPolicy               *string
	Policies                   []goScalingPolicy
	Tolerance                  *string
}

type goScalingPolicy struct {
	Type          string
	Value         int64
	PeriodSeconds int64
}

func behaviorToGo(b map[string]any) goBehavior {
	rules := func(r map[string]any) *goScalingRules {
		if r == nil {
			return nil
		}
		out := &goScalingRules{StabilizationWindowSeconds: optI(r, "stabilizationWindowSeconds"), SelectPolicy: optString(r, "selectPolicy"), Tolerance: optQ(r, "tolerance")}
		for _, p := range maps(r, "policies") {
			out.Policies = append(out.Policies, goScalingPolicy{Type: getString(p, "type"), Value: intAt(p, "value"), PeriodSeconds: intAt(p, "periodSeconds")})
		}
		return out
	}
	return goBehavior{ScaleUp: rules(getMap(b, "scaleUp")), ScaleDown: rules(getMap(b, "scaleDown"))}
}

func (b goBehavior) toV2() map[string]any {
	rules := func(r *goScalingRules) map[string]any {
		out := map[string]any{}
		if r.StabilizationWindowSeconds != nil {
			out["stabilizationWindowSeconds"] = num(*r.StabilizationWindowSeconds)
		}
		if r.SelectPolicy != nil {
			out["selectPolicy"] = *r.SelectPolicy
		}
		setQ(out, "tolerance", r.Tolerance)
		if r.Policies != nil {
			l := make([]any, len(r.Policies))
			for i, p := range r.Policies {
				l[i] = map[string]any{"type": p.Type, "value": num(p.Value), "periodSeconds": num(p.PeriodSeconds)}
			}
			out["policies"] = l
		}
		return out
	}
	out := map[string]any{}
	if b.ScaleUp != nil {
		out["scaleUp"] = rules(b.ScaleUp)
	}
	if b.ScaleDown != nil {
		out["scaleDown"] = rules(b.ScaleDown)
	}
	return out
}
