package builtin

import (
	"context"
	"slices"
	"sort"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
)

// validateService is what kube's ValidateService checks of a Service's
// spec that users meet first: the type, sessionAffinity, externalName,
// the selector's labels, and each port's name (required when there are
// several, unique, a DNS label), number, protocol, targetPort and
// nodePort (only for NodePort and LoadBalancer, in 30000-32767).
func validateService(_ context.Context, o registry.Object) []registry.FieldError {
	spec := getMap(obj(o), "spec")
	var errs []registry.FieldError
	typ := getString(spec, "type")
	switch typ {
	case "ClusterIP", "ExternalName", "LoadBalancer", "NodePort":
	default:
		errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: "spec.type", Value: typ,
			Detail: `supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`})
	}
	if typ == "ExternalName" && getString(spec, "externalName") == "" {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.externalName"})
	}
	switch sa := getString(spec, "sessionAffinity"); sa {
	case "ClientIP", "None":
	default:
		errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: "spec.sessionAffinity", Value: sa, Detail: `supported values: "ClientIP", "None"`})
	}
	sel := stringMap(getMap(spec, "selector"))
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		errs = appendInvalid(errs, "spec.selector", k, validation.IsQualifiedName(k))
		errs = appendInvalid(errs, "spec.selector", sel[k], validation.IsValidLabelValue(sel[k]))
	}
	ports := maps(spec, "ports")
	headless := getString(spec, "clusterIP") == "None"
	if len(ports) == 0 && !headless && typ != "ExternalName" {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.ports"})
	}
	names := map[string]bool{}
	for i, p := range ports {
		path := "spec.ports[" + itoa(i) + "]"
		name := getString(p, "name")
		switch {
		case name == "" && len(ports) > 1:
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".name"})
		case name != "":
			errs = appendInvalid(errs, path+".name", name, validation.IsDNS1123Label(name))
			if names[name] {
				errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: path + ".name", Value: name})
			}
			names[name] = true
		}
		if n := intAt(p, "port"); n < 1 || n > 65535 {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".port", Value: get(p, "port"), Detail: portRange})
		}
		errs = append(errs, validateProtocol(getString(p, "protocol"), path+".protocol")...)
		switch tp := get(p, "targetPort").(type) {
		case string:
			errs = appendInvalid(errs, path+".targetPort", tp, portNameErrors(tp))
		case nil:
		default:
			if n := intAt(p, "targetPort"); n < 1 || n > 65535 {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".targetPort", Value: tp, Detail: portRange})
			}
		}
		if np := get(p, "nodePort"); np != nil && intAt(p, "nodePort") != 0 {
			if typ != "NodePort" && typ != "LoadBalancer" && slices.Contains([]string{"ClusterIP", "ExternalName"}, typ) {
				errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: path + ".nodePort", Detail: "may not be used when `type` is '" + typ + "'"})
			} else if n := intAt(p, "nodePort"); n < 30000 || n > 32767 {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".nodePort", Value: np,
					Detail: "provided port is not in the valid range. The range of valid ports is 30000-32767"})
			}
		}
	}
	return errs
}
