package builtin

import (
	"math"
	"strings"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
)

// validatePodSpec is what kube's ValidatePodSpec checks that controllers
// and users meet first (pkg/apis/core/validation): the containers' names,
// images, pull policies, ports, env and volume mounts, the volumes' names,
// and the spec's restartPolicy, dnsPolicy and activeDeadlineSeconds, with
// kube's paths, types and messages. Pods and every pod template run it.
func validatePodSpec(spec map[string]any, path string) []registry.FieldError {
	var errs []registry.FieldError
	volumes := map[string]bool{}
	for i, v := range maps(spec, "volumes") {
		p := path + ".volumes[" + itoa(i) + "].name"
		name := getString(v, "name")
		switch {
		case name == "":
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: p})
		case volumes[name]:
			errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: p, Value: name})
		default:
			errs = appendInvalid(errs, p, name, validation.IsDNS1123Label(name))
		}
		volumes[name] = true
	}
	if len(getList(spec, "containers")) == 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".containers"})
	}
	names := map[string]bool{}
	for _, list := range []string{"containers", "initContainers"} {
		for i, c := range maps(spec, list) {
			errs = append(errs, validateContainer(c, path+"."+list+"["+itoa(i)+"]", names, volumes)...)
		}
	}
	switch rp := getString(spec, "restartPolicy"); rp {
	case "Always", "OnFailure", "Never":
	default:
		errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: path + ".restartPolicy", Value: rp, Detail: `supported values: "Always", "OnFailure", "Never"`})
	}
	switch dp := getString(spec, "dnsPolicy"); dp {
	case "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None":
	default:
		errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: path + ".dnsPolicy", Value: dp,
			Detail: `supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"`})
	}
	if v := get(spec, "activeDeadlineSeconds"); v != nil {
		if n := intAt(spec, "activeDeadlineSeconds"); n < 1 || n > math.MaxInt32 {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".activeDeadlineSeconds", Value: v, Detail: "must be between 1 and 2147483647, inclusive"})
		}
	}
	return errs
}

// validateContainer checks one container at path; names are the
// container names seen so far, volumes the pod's volume names.
func validateContainer(c map[string]any, path string, names, volumes map[string]bool) []registry.FieldError {
	var errs []registry.FieldError
	name := getString(c, "name")
	switch {
	case name == "":
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".name"})
	case names[name]:
		errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: path + ".name", Value: name})
	default:
		errs = appendInvalid(errs, path+".name", name, validation.IsDNS1123Label(name))
	}
	names[name] = true
	if getString(c, "image") == "" {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".image"})
	}
	switch pp := getString(c, "imagePullPolicy"); pp {
	case "Always", "IfNotPresent", "Never":
	default:
		errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: path + ".imagePullPolicy", Value: pp, Detail: `supported values: "Always", "IfNotPresent", "Never"`})
	}
	portNames := map[string]bool{}
	for i, p := range maps(c, "ports") {
		pp := path + ".ports[" + itoa(i) + "]"
		if n := getString(p, "name"); n != "" {
			errs = appendInvalid(errs, pp+".name", n, portNameErrors(n))
			if portNames[n] {
				errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: pp + ".name", Value: n})
			}
			portNames[n] = true
		}
		if port := intAt(p, "containerPort"); port == 0 {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: pp + ".containerPort"})
		} else if port < 1 || port > 65535 {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: pp + ".containerPort", Value: get(p, "containerPort"), Detail: portRange})
		}
		if hp := intAt(p, "hostPort"); hp != 0 && (hp < 1 || hp > 65535) {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: pp + ".hostPort", Value: get(p, "hostPort"), Detail: portRange})
		}
		errs = append(errs, validateProtocol(getString(p, "protocol"), pp+".protocol")...)
	}
	for i, e := range maps(c, "env") {
		if getString(e, "name") == "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".env[" + itoa(i) + "].name"})
		}
	}
	for i, m := range maps(c, "volumeMounts") {
		mp := path + ".volumeMounts[" + itoa(i) + "]"
		if n := getString(m, "name"); n == "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: mp + ".name"})
		} else if !volumes[n] {
			errs = append(errs, registry.FieldError{Type: validation.TypeNotFound, Field: mp + ".name", Value: n})
		}
		if getString(m, "mountPath") == "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: mp + ".mountPath"})
		}
	}
	return append(errs, requestsWithinLimits(c, path)...)
}

// portRange is kube's message for a port number out of range.
const portRange = "must be between 1 and 65535, inclusive"

// validateProtocol checks a port's protocol (defaulted to TCP before).
func validateProtocol(proto, path string) []registry.FieldError {
	switch proto {
	case "TCP", "UDP", "SCTP":
		return nil
	case "":
		return []registry.FieldError{{Type: validation.TypeRequired, Field: path}}
	}
	return []registry.FieldError{{Type: validation.TypeNotSupported, Field: path, Value: proto, Detail: `supported values: "SCTP", "TCP", "UDP"`}}
}

// portNameErrors is kube's IsValidPortName (an IANA service name).
func portNameErrors(port string) []string {
	var errs []string
	if len(port) > 15 {
		errs = append(errs, "must be no more than 15 characters")
	}
	letter, charset := false, true
	for _, r := range port {
		switch {
		case r >= 'a' && r <= 'z':
			letter = true
		case r >= '0' && r <= '9' || r == '-':
		default:
			charset = false
		}
	}
	if !charset {
		errs = append(errs, "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
	}
	if !letter {
		errs = append(errs, "must contain at least one letter (a-z)")
	}
	if strings.Contains(port, "--") {
		errs = append(errs, "must not contain consecutive hyphens (-)")
	}
	if port != "" && (port[0] == '-' || port[len(port)-1] == '-') {
		errs = append(errs, "must not begin or end with a hyphen (-)")
	}
	return errs
}

// appendInvalid adds one Invalid error per message, as kube's callers of
// the IsXxx functions do.
func appendInvalid(errs []registry.FieldError, path string, value any, msgs []string) []registry.FieldError {
	for _, m := range msgs {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path, Value: value, Detail: m})
	}
	return errs
}
