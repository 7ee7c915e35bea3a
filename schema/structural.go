package schema

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/internal/validation"
)

// embedded is kube's objectmeta.Validate: the apiVersion, kind and
// metadata of every x-kubernetes-embedded-resource value below the root.
func embedded(s *Schema, x any, path string) []FieldError {
	if s == nil {
		return nil
	}
	var errs []FieldError
	switch t := x.(type) {
	case map[string]any:
		if s.EmbeddedResource {
			errs = append(errs, embeddedResource(t, path)...)
		}
		for _, k := range sortedKeys(t) {
			if p, ok := s.Properties[k]; ok {
				errs = append(errs, embedded(p, t[k], child(path, k))...)
			} else if s.AdditionalProperties != nil {
				errs = append(errs, embedded(s.AdditionalProperties, t[k], path+"["+k+"]")...)
			}
		}
	case []any:
		for i, e := range t {
			errs = append(errs, embedded(s.Items, e, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return errs
}

func embeddedResource(x map[string]any, path string) []FieldError {
	var errs []FieldError
	at := func(f string) string { return child(path, f) }
	if _, ok := x["apiVersion"]; !ok {
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: at("apiVersion"), Value: ""})
	}
	if _, ok := x["kind"]; !ok {
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: at("kind"), Value: ""})
	}
	for _, k := range sortedKeys(x) {
		v := x[k]
		switch k {
		case "apiVersion":
			s, ok := v.(string)
			switch {
			case !ok:
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: kubeValue(v), Detail: "must be a string"})
			case s == "":
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: s, Detail: "must not be empty"})
			case strings.Count(s, "/") > 1:
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: s, Detail: fmt.Sprintf("unexpected GroupVersion string: %v", s)})
			}
		case "kind":
			s, ok := v.(string)
			switch {
			case !ok:
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: kubeValue(v), Detail: "must be a string"})
			case s == "":
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: s, Detail: "must not be empty"})
			default:
				if msgs := dns1035Label(strings.ToLower(s)); len(msgs) > 0 {
					errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: s, Detail: "may have mixed case, but should otherwise match: " + strings.Join(msgs, ",")})
				}
			}
		case "metadata":
			m, ok := v.(map[string]any)
			if !ok {
				if v == nil {
					continue
				}
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at(k), Value: kubeValue(v), Detail: "expected map[string]interface{}, got " + fmt.Sprintf("%T", kubeValue(v))})
				continue
			}
			meta := m
			if n, _ := m["name"].(string); n == "" {
				meta = make(map[string]any, len(m)+1)
				for mk, mv := range m {
					meta[mk] = mv
				}
				meta["name"] = "fakename"
			}
			ns, _ := m["namespace"].(string)
			for _, e := range validation.ValidateObjectMeta(meta, validation.MetaOptions{Namespaced: ns != "", NameFunc: validation.IsPathSegmentName}) {
				e.Field = child(path, e.Field)
				errs = append(errs, e)
			}
		}
	}
	return errs
}

// kubeValue is a value as kube decodes it (numbers int64 or float64).
func kubeValue(x any) any {
	if n, ok := number(x); ok {
		return n
	}
	return x
}

// dns1035Label is apimachinery's IsDNS1035Label.
func dns1035Label(s string) []string {
	var msgs []string
	if len(s) > 63 {
		msgs = append(msgs, "must be no more than 63 characters")
	}
	if !dns1035Re.MatchString(s) {
		msgs = append(msgs, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
	}
	return msgs
}

var dns1035Re = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// listSetsAndMaps is kube's listtype.ValidateListSetsAndMaps: the items of
// an x-kubernetes-list-type set are unique, and so are the keys of the
// items of a list-type map.
func listSetsAndMaps(s *Schema, x any, path string) []FieldError {
	if s == nil {
		return nil
	}
	var errs []FieldError
	switch t := x.(type) {
	case map[string]any:
		keys := sortedKeys(t)
		if s.AdditionalProperties != nil {
			for _, k := range keys {
				errs = append(errs, listSetsAndMaps(s.AdditionalProperties, t[k], path+"["+k+"]")...)
			}
		}
		for _, k := range keys {
			if p, ok := s.Properties[k]; ok {
				errs = append(errs, listSetsAndMaps(p, t[k], child(path, k))...)
			}
		}
	case []any:
		switch s.ListType {
		case "set":
			for _, i := range duplicates(t) {
				errs = append(errs, FieldError{Type: validation.TypeDuplicate, Field: index(path, i), Value: kubeValue(t[i])})
			}
		case "map":
			errs = append(errs, listMap(s, t, path)...)
		}
		if s.Items != nil {
			for i, e := range t {
				errs = append(errs, listSetsAndMaps(s.Items, e, index(path, i))...)
			}
		}
	}
	return errs
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// duplicates lists the indexes of the second occurrence of every value
// that occurs more than once.
func duplicates(l []any) []int {
	if len(l) <= 1 {
		return nil
	}
	seen := make(map[string]int, len(l))
	var out []int
	for i, x := range l {
		k := identity(x)
		seen[k]++
		if seen[k] == 2 {
			out = append(out, i)
		}
	}
	return out
}

// identity is a key equal for values kube's set check takes as equal:
// scalars by Go value (int64 1 and float64 1 differ), lists and maps by
// their JSON encoding.
func identity(x any) string {
	switch t := kubeValue(x).(type) {
	case nil:
		return "n"
	case string:
		return "s" + t
	case bool:
		return "b" + strconv.FormatBool(t)
	case int64:
		return "i" + strconv.FormatInt(t, 10)
	case float64:
		return "f" + strconv.FormatFloat(t, 'g', -1, 64)
	case unspecified:
		return "u"
	default:
		b, _ := json.Marshal(t)
		return "j" + string(b)
	}
}

type unspecified struct{}

func listMap(s *Schema, l []any, path string) []FieldError {
	for i, x := range l {
		if _, ok := x.(map[string]any); x != nil && !ok {
			return []FieldError{{Type: validation.TypeInvalid, Field: index(path, i), Value: kubeValue(x), Detail: "must be an object for an array of list-type map"}}
		}
	}
	if len(l) <= 1 {
		return nil
	}
	keys := make([]any, len(l))
	for i, x := range l {
		m, _ := x.(map[string]any)
		if len(s.ListMapKeys) == 1 {
			k, ok := m[s.ListMapKeys[0]]
			if !ok {
				keys[i] = unspecified{}
			} else {
				keys[i] = kubeValue(k)
			}
			continue
		}
		key := map[string]any{}
		for _, f := range s.ListMapKeys {
			if k, ok := m[f]; ok {
				key[f] = kubeValue(k)
			}
		}
		keys[i] = key
	}
	var errs []FieldError
	for _, i := range duplicates(keys) {
		var v any
		switch k := keys[i].(type) {
		case unspecified:
			v = map[string]any{}
		case map[string]any:
			v = k
		default:
			v = map[string]any{s.ListMapKeys[0]: k}
		}
		errs = append(errs, FieldError{Type: validation.TypeDuplicate, Field: index(path, i), Value: v})
	}
	return errs
}

// child is kube's field.Path Child: path.name, or name at the root.
func child(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
