package codec

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

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

// YAMLDuplicateKeys returns the keys a YAML document gives twice in one
// map, as kube's strict YAML decoding reports them for an apply body
// (`line 7: key "size" already set in map`); none for a document without.
// It does not check anything else: YAMLToJSON reports malformed YAML.
func YAMLDuplicateKeys(b []byte) []string {
	if yamlDepth(b) > MaxDepth {
		return nil
	}
	err := yaml.UnmarshalStrict(b, &map[string]any{})
	if err == nil {
		return nil
	}
	msg := err.Error()
	_, rest, ok := strings.Cut(msg, "yaml: unmarshal errors:\n")
	if !ok {
		return nil
	}
	var out []string
	for _, l := range strings.Split(rest, "\n") {
		if l = strings.TrimSpace(l); strings.Contains(l, "already set in map") {
			out = append(out, l)
		}
	}
	return out
}
