package builtin

import (
	"fmt"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
)

// The metrics of an autoscaling/v2 HPA, checked as kube's validateMetrics
// checks them (pkg/apis/autoscaling/validation): each metric has a
// supported type and the one source its type names, filled in: a metric
// name that is a path segment, a target of a known type whose values
// are positive, the target value its source needs. And scaling to zero
// needs an Object or External metric.

// metricSourceTypes are kube's, sorted as its messages list them.
var metricSourceTypes = []string{"ContainerResource", "External", "Object", "Pods", "Resource"}

// metricSources are the source fields in the order kube looks at them,
// with the type each belongs to.
var metricSources = []struct{ field, typ string }{
	{"object", "Object"}, {"external", "External"}, {"pods", "Pods"}, {"resource", "Resource"}, {"containerResource", "ContainerResource"},
}

func validateHPAMetrics(spec map[string]any) fieldErrors {
	var errs fieldErrors
	scalesToZero := false
	for i, m := range maps(spec, "metrics") {
		errs = append(errs, validateMetricSpec(m, fmt.Sprintf("spec.metrics[%d]", i))...)
		if t := getString(m, "type"); t == "Object" || t == "External" {
			scalesToZero = true
		}
	}
	if get(spec, "minReplicas") != nil && intAt(spec, "minReplicas") == 0 && !scalesToZero {
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "spec.metrics",
			Detail: "must specify at least one Object or External metric to support scaling to zero replicas"})
	}
	return errs
}

func validateMetricSpec(m map[string]any, path string) fieldErrors {
	var errs fieldErrors
	t := getString(m, "type")
	if t == "" {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".type", Detail: "must specify a metric source type"})
	}
	supported := false
	for _, s := range metricSourceTypes {
		supported = supported || s == t
	}
	if !supported {
		errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: path + ".type", Value: t,
			Detail: `supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`})
	}
	var present []string
	for _, s := range metricSources {
		src := getMap(m, s.field)
		if src == nil {
			continue
		}
		present = append(present, s.field)
		if len(present) == 1 {
			errs = append(errs, validateMetricSource(s.field, src, path+"."+s.field)...)
		}
	}
	expected := ""
	for _, s := range metricSources {
		if s.typ == t {
			expected = s.field
			if getMap(m, s.field) == nil {
				errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + "." + s.field, Detail: "must populate information for the given metric source"})
			}
		}
	}
	if len(present) > 1 {
		for _, p := range present {
			if p != expected {
				errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: path + "." + p, Detail: "must populate the given metric source only"})
			}
		}
	}
	return errs
}

// validateMetricSource checks one source: validateObjectSource,
// validateExternalSource, validatePodsSource, validateResourceSource or
// validateContainerResourceSource.
func validateMetricSource(field string, src map[string]any, path string) fieldErrors {
	var errs fieldErrors
	target := getMap(src, "target")
	has := func(k string) bool { return get(target, k) != nil }
	required := func(k, detail string) {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".target." + k, Detail: detail})
	}
	forbidden := func(k, detail string) {
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: path + ".target." + k, Detail: detail})
	}
	switch field {
	case "object":
		errs = append(errs, validateObjectReference(getMap(src, "describedObject"), path+".describedObject")...)
		errs = append(errs, validateMetricIdentifier(getMap(src, "metric"), path+".metric")...)
		errs = append(errs, validateMetricTarget(target, path+".target")...)
		if !has("value") && !has("averageValue") {
			required("averageValue", "must set either a target value or averageValue")
		}
	case "external":
		errs = append(errs, validateMetricIdentifier(getMap(src, "metric"), path+".metric")...)
		errs = append(errs, validateMetricTarget(target, path+".target")...)
		if !has("value") && !has("averageValue") {
			required("averageValue", "must set either a target value for metric or a per-pod target")
		}
		if has("value") && has("averageValue") {
			forbidden("value", "may not set both a target value for metric and a per-pod target")
		}
	case "pods":
		errs = append(errs, validateMetricIdentifier(getMap(src, "metric"), path+".metric")...)
		errs = append(errs, validateMetricTarget(target, path+".target")...)
		if !has("averageValue") {
			required("averageValue", "must specify a positive target averageValue")
		}
	case "resource", "containerResource":
		if getString(src, "name") == "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".name", Detail: "must specify a resource name"})
		}
		if field == "containerResource" {
			if c := getString(src, "container"); c == "" {
				errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".container", Detail: "must specify a container"})
			} else {
				errs = appendInvalid(errs, path+".container", c, validation.IsDNS1123Label(c))
			}
		}
		errs = append(errs, validateMetricTarget(target, path+".target")...)
		if !has("averageUtilization") && !has("averageValue") {
			required("averageUtilization", "must set either a target raw value or a target utilization")
		}
		if has("averageUtilization") && has("averageValue") {
			forbidden("averageValue", "may not set both a target raw value and a target utilization")
		}
	}
	return errs
}

// validateObjectReference is ValidateCrossVersionObjectReference of a
// metric's describedObject (an apiVersion without a group allowed).
func validateObjectReference(ref map[string]any, path string) fieldErrors {
	var errs fieldErrors
	for _, f := range []string{"kind", "name"} {
		v := getString(ref, f)
		if v == "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + "." + f})
		}
		errs = appendInvalid(errs, path+"."+f, v, pathSegmentName(v))
	}
	if av := getString(ref, "apiVersion"); countSlashes(av) > 1 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".apiVersion", Value: av, Detail: "unexpected GroupVersion string: " + av})
	}
	return errs
}

func countSlashes(s string) int {
	n := 0
	for _, c := range s {
		if c == '/' {
			n++
		}
	}
	return n
}

func validateMetricIdentifier(id map[string]any, path string) fieldErrors {
	name := getString(id, "name")
	if name == "" {
		return fieldErrors{{Type: validation.TypeRequired, Field: path + ".name", Detail: "must specify a metric name"}}
	}
	return appendInvalid(nil, path+".name", name, pathSegmentName(name))
}

// validateMetricTarget is kube's: a known type, positive values, a
// utilization above 0.
func validateMetricTarget(t map[string]any, path string) fieldErrors {
	var errs fieldErrors
	typ := getString(t, "type")
	if typ == "" {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".type", Detail: "must specify a metric target type"})
	}
	if typ != "Utilization" && typ != "Value" && typ != "AverageValue" {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".type", Value: typ, Detail: "must be either Utilization, Value, or AverageValue"})
	}
	for _, k := range []string{"value", "averageValue"} {
		if v := get(t, k); v != nil {
			if q, ok := quantityValue(v); ok && q.Sign() != 1 {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + "." + k, Value: v, Detail: "must be positive"})
			}
		}
	}
	if get(t, "averageUtilization") != nil && intAt(t, "averageUtilization") < 1 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".averageUtilization", Value: intAt(t, "averageUtilization"), Detail: "must be greater than 0"})
	}
	return errs
}
