package codec

import (
	"bytes"
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"
)

// MaxDepth bounds the nesting of objects and arrays in a YAML body; deeper
// documents are refused before they are converted.
const MaxDepth = 1000

// ErrInvalidYAML is wrapped by every error of YAMLToJSON.
var ErrInvalidYAML = errors.New("codec: invalid YAML")

// YAMLToJSON converts one YAML document into JSON, as kube-apiserver reads
// YAML bodies. The YAML library refuses documents whose aliases would
// expand excessively (a "billion laughs" body); nesting deeper than
// MaxDepth is refused here.
func YAMLToJSON(b []byte) ([]byte, error) {
	if d := yamlDepth(b); d > MaxDepth {
		return nil, fmt.Errorf("%w: nesting deeper than %d levels", ErrInvalidYAML, MaxDepth)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidYAML, err)
	}
	return j, nil
}

// JSONToYAML converts a JSON document into YAML exactly as kube-apiserver
// writes YAML responses (keys sorted, two-space indent).
func JSONToYAML(j []byte) ([]byte, error) { return yaml.JSONToYAML(j) }

// yamlDepth over-estimates a YAML document's nesting cheaply, before the
// parser builds anything: the deepest run of open flow brackets, or the
// deepest indentation in block style, counted in columns.
func yamlDepth(b []byte) int {
	depth, deepest := 0, 0
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		indent := 0
		for indent < len(line) && (line[indent] == ' ' || line[indent] == '-') {
			indent++
		}
		deepest = max(deepest, indent/2)
		for _, c := range line {
			switch c {
			case '[', '{':
				depth++
				deepest = max(deepest, depth)
			case ']', '}':
				depth--
			}
		}
	}
	return deepest
}
