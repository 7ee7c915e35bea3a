package table

import (
	"fmt"
	"strconv"
	"strings"
)

// Path is a compiled column path, the subset of kubectl's JSONPath that
// CRD additionalPrinterColumns use:
//
//	.spec.replicas                          fields
//	.spec.ports[0].port  .items[*].name     an index, or every element
//	.status.conditions[?(@.type=="Ready")].status   the elements whose field equals a string
//	.metadata.labels['app.kubernetes.io/name']      a quoted key
//
// The first value found is the column's value, as kube shows it.
type Path []pathStep

type pathStep struct {
	field  string // a map key, or
	index  int    // an array index (all when -1), or
	filter *pathFilter
	isElem bool // index or filter step
}

type pathFilter struct {
	field, value string
}

// ParsePath compiles s, a column's JSONPath such as ".spec.replicas".
func ParsePath(s string) (Path, error) {
	in := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "{"), "}")
	if !strings.HasPrefix(in, ".") {
		return nil, fmt.Errorf("JSONPath %q must start with '.'", s)
	}
	var p Path
	for i := 0; i < len(in); {
		switch in[i] {
		case '.':
			j := i + 1
			for j < len(in) && in[j] != '.' && in[j] != '[' {
				j++
			}
			if j == i+1 {
				return nil, fmt.Errorf("JSONPath %q: empty field name at %d", s, i)
			}
			p = append(p, pathStep{field: in[i+1 : j]})
			i = j
		case '[':
			end := strings.IndexByte(in[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("JSONPath %q: unterminated '['", s)
			}
			body := in[i+1 : i+end]
			step, err := parseBracket(body)
			if err != nil {
				return nil, fmt.Errorf("JSONPath %q: %v", s, err)
			}
			p = append(p, step)
			i += end + 1
		default:
			return nil, fmt.Errorf("JSONPath %q: unexpected %q at %d", s, in[i], i)
		}
	}
	return p, nil
}

func parseBracket(body string) (pathStep, error) {
	switch {
	case body == "*":
		return pathStep{index: -1, isElem: true}, nil
	case len(body) >= 2 && (body[0] == '\'' || body[0] == '"') && body[len(body)-1] == body[0]:
		return pathStep{field: body[1 : len(body)-1]}, nil
	case strings.HasPrefix(body, "?(@.") && strings.HasSuffix(body, ")"):
		field, value, ok := strings.Cut(body[4:len(body)-1], "==")
		value = strings.TrimSpace(value)
		if !ok || len(value) < 2 || (value[0] != '"' && value[0] != '\'') || value[len(value)-1] != value[0] {
			return pathStep{}, fmt.Errorf("unsupported filter %q: use [?(@.field==\"value\")]", body)
		}
		return pathStep{filter: &pathFilter{field: strings.TrimSpace(field), value: value[1 : len(value)-1]}, isElem: true}, nil
	}
	n, err := strconv.Atoi(body)
	if err != nil || n < 0 {
		return pathStep{}, fmt.Errorf("unsupported subscript [%s]", body)
	}
	return pathStep{index: n, isElem: true}, nil
}

// Find returns the first value the path reaches in v, a decoded JSON
// value; false if it reaches none.
func (p Path) Find(v any) (any, bool) {
	if len(p) == 0 {
		return v, true
	}
	s, rest := p[0], p[1:]
	if !s.isElem {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		x, ok := m[s.field]
		if !ok {
			return nil, false
		}
		return rest.Find(x)
	}
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	if s.filter == nil && s.index >= 0 {
		if s.index >= len(l) {
			return nil, false
		}
		return rest.Find(l[s.index])
	}
	for _, x := range l {
		if f := s.filter; f != nil {
			m, _ := x.(map[string]any)
			if got, ok := m[f.field].(string); !ok || got != f.value {
				continue
			}
		}
		if out, ok := rest.Find(x); ok {
			return out, true
		}
	}
	return nil, false
}
