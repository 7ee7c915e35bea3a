package conformance

import (
	"strings"
	"testing"
)

// Issue 8: kubectl's field validation against the server. kubectl sends
// fieldValidation=Strict for --validate=strict (its default when the
// server's OpenAPI lists the parameter) and Warn for --validate=warn; the
// messages are kube's, as kubectl prints them.
func TestKubectlFieldValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := newKubectl(t, e)
	const manifest = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: NAME
  namespace: default
spec:
  color: red
  colour: red
`
	for _, tc := range []struct {
		name, validate string
		created        bool
		want           string // in what kubectl prints
	}{
		{"strict", "--validate=strict", false, `Error from server (BadRequest): error when creating "PATH": Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.colour"`},
		{"default", "", false, `strict decoding error: unknown field "spec.colour"`},
		{"warn", "--validate=warn", true, `Warning: unknown field "spec.colour"`},
		{"ignore", "--validate=false", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "w.yaml", strings.ReplaceAll(manifest, "NAME", "v-"+tc.name))
			tc.want = strings.ReplaceAll(tc.want, "PATH", path)
			args := []string{"create", "-f", path}
			if tc.validate != "" {
				args = append(args, tc.validate)
			}
			stdout, stderr, err := k.run(args...)
			if created := err == nil && strings.Contains(stdout, "widget.example.com/v-"+tc.name+" created"); created != tc.created {
				t.Fatalf("kubectl %s: created %v, want %v (err %v)\nstdout: %s\nstderr: %s", strings.Join(args, " "), created, tc.created, err, stdout, stderr)
			}
			out := stderr // what kubectl prints: warnings, then the error
			if err != nil {
				out += "error: " + err.Error()
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("kubectl %s: printed %q; want it to contain %q", strings.Join(args, " "), out, tc.want)
			}
			if tc.validate == "--validate=false" && strings.Contains(stderr, "unknown field") {
				t.Errorf("kubectl %s warned: %q", strings.Join(args, " "), stderr)
			}
		})
	}
}
