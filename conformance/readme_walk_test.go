package conformance

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
)

// The README's first walk, as printed, on kapi (the example server's
// handler) and on the real kube-apiserver with the example's widgets CRD
// installed: each command must succeed on both (fail on both, where its
// comment says "fails") and print the same, ages, uids, timestamps and
// resourceVersions masked.
func TestREADMEWalkAsKube(t *testing.T) {
	walk := readmeWalk(t)
	kube := kubeAPIServer(t)
	sides := []struct {
		name string
		k    *kubectl
	}{
		{"kube-apiserver", kubectlAs(t, kube.URL, server.Credentials{Token: "admin-token", CertificateAuthPEM: kube.CA})},
		{"kapi", newKubectl(t, newEnv(t))},
	}
	sides[0].k.mustRun(t, "apply", "-f", "../examples/apiserver/server/crds/")
	sides[0].k.mustRun(t, "wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s")
	// kube serves the kind a moment after Established (its discovery and
	// storage): wait until a list answers.
	for deadline := time.Now().Add(waitTimeout); ; time.Sleep(100 * time.Millisecond) {
		if _, _, err := sides[0].k.run("get", "widgets", "-A"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("kube-apiserver does not serve widgets")
		}
	}
	for _, step := range walk {
		line := step.line
		args := readmeCommand(t, line)
		var outs []string
		for i, s := range sides {
			args := args
			if i == 0 && len(args) > 1 && args[0] == "delete" && (args[1] == "ns" || args[1] == "namespace") {
				// Without kube-controller-manager, whose namespace
				// controller empties and removes a namespace, kube-apiserver
				// keeps it Terminating: kubectl would wait for ever.
				args = append(args, "--wait=false")
			}
			out, stderr, err := s.k.runPast503(args...)
			if (err != nil) != step.fails {
				t.Fatalf("%s: %s: error %v, want one: %v\n%s", s.name, line, err, step.fails, stderr)
			}
			if err != nil {
				out += err.Error()
			}
			outs = append(outs, maskWalk(line, out))
		}
		if outs[0] != outs[1] {
			t.Errorf("%s\nkube-apiserver:\n%s\nkapi:\n%s", line, outs[0], outs[1])
		}
	}
}

// walkStep is a command of the walk, and whether its comment says it
// fails.
type walkStep struct {
	line  string
	fails bool
}

// readmeWalk returns the kubectl lines of the README's first walk (the
// block after the one that starts the server), without comments; a line
// run in the background (a watch, "&") is left out.
func readmeWalk(t *testing.T) []walkStep {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "## A first walk through")
	blocks := strings.Split(after, "```sh\n")
	if !ok || len(blocks) < 3 {
		t.Fatal("README: no walk through")
	}
	block, _, _ := strings.Cut(blocks[2], "```")
	var out []walkStep
	for _, line := range strings.Split(block, "\n") {
		line, comment, _ := strings.Cut(line, "  #")
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "export ") || strings.HasSuffix(line, "&") {
			continue
		}
		out = append(out, walkStep{line: line, fails: strings.HasPrefix(strings.TrimSpace(comment), "fails")})
	}
	if len(out) < 10 {
		t.Fatalf("README walk: only %d commands: %v", len(out), out)
	}
	return out
}

var sedPipe = regexp.MustCompile(`^sed s/([^/]*)/([^/]*)/ (\S+) \| (kubectl .*)$`)

// readmeCommand turns a README line into kubectl's arguments:
// "kubectl ARGS", or "sed s/A/B/ FILE | kubectl ARGS -f -", where "-"
// becomes a file holding FILE with A replaced by B (kubectl in-process
// reads "-" from the process's stdin). Paths are the repository's.
func readmeCommand(t *testing.T, line string) []string {
	t.Helper()
	piped := ""
	if m := sedPipe.FindStringSubmatch(line); m != nil {
		b, err := os.ReadFile("../" + m[3])
		if err != nil {
			t.Fatal(err)
		}
		piped = writeTemp(t, "stdin.yaml", []byte(strings.Replace(string(b), m[1], m[2], 1)))
		line = m[4]
	}
	fields := strings.Fields(line)
	if len(fields) == 0 || fields[0] != "kubectl" || strings.ContainsAny(line, "|;&<>'\"") {
		t.Fatalf("README walk: %q is not a kubectl command this test can run", line)
	}
	args := fields[1:]
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "examples/"):
			args[i] = "../" + a
		case a == "-" && piped != "":
			args[i] = piped
		}
	}
	return args
}

var (
	walkTime = regexp.MustCompile(`"?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"?`)
	walkRV   = regexp.MustCompile(`(resourceVersion: )"\d+"`)
)

// maskWalk masks what differs from run to run; `get ns` keeps the
// namespaces the walk uses (the shared kube-apiserver has the other
// tests' too).
func maskWalk(line, out string) string {
	out = walkRV.ReplaceAllString(walkTime.ReplaceAllString(maskKubectl(out), "<time>"), `$1<rv>`)
	if !strings.HasPrefix(line, "kubectl get ns") {
		return out
	}
	var keep []string
	for i, row := range strings.Split(out, "\n") {
		if name, _, _ := strings.Cut(row, " "); i == 0 || name == "default" || name == "demo" {
			keep = append(keep, row)
		}
	}
	return strings.Join(keep, "\n")
}
