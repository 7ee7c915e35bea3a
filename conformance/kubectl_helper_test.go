package conformance

import (
	"bytes"
	"fmt"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// kubectl runs kubectl, built from k8s.io/kubectl/pkg/cmd, in-process
// against one env, with its own kubeconfig and discovery cache.
type kubectl struct {
	kubeconfig string
	cacheDir   string
}

// newKubectl writes the kubeconfig that `go run ./examples/apiserver
// --kubeconfig PATH` writes (server.Kubeconfig) for e to a temporary
// directory, so every kubectl test also tests the README's flow.
func newKubectl(t *testing.T, e *env) *kubectl {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, server.Kubeconfig(e.srv.URL), 0o600); err != nil {
		t.Fatalf("write kubeconfig: %v", err)
	}
	return &kubectl{kubeconfig: kubeconfig, cacheDir: filepath.Join(dir, "cache")}
}

// kubectlExit is what kubectl's fatal handler panics with instead of
// calling os.Exit; runKubectl recovers it into an error.
type kubectlExit struct {
	msg  string
	code int
}

var (
	// kubectlMu serialises kubectl runs: kubectl keeps package-level state
	// (profiling flags, the completion factory) that every run writes while
	// building its command and reads while executing it. A test must
	// therefore not run kubectl while its own background run is going.
	kubectlMu        sync.Mutex
	fatalHandlerOnce sync.Once
)

// command builds a kubectl command for args with the given streams.
func (k *kubectl) command(streams genericiooptions.IOStreams, args []string) interface{ Execute() error } {
	fatalHandlerOnce.Do(func() {
		cmdutil.BehaviorOnFatal(func(msg string, code int) {
			panic(kubectlExit{msg: msg, code: code})
		})
	})
	flags := genericclioptions.NewConfigFlags(true).
		WithDeprecatedPasswordFlag().
		WithDiscoveryBurst(300).
		WithDiscoveryQPS(50.0).
		WithWarningPrinter(streams)
	cmd := kubectlcmd.NewKubectlCommand(kubectlcmd.KubectlOptions{
		// Only the program name: no kuberc preferences are applied.
		Arguments:   []string{"kubectl"},
		ConfigFlags: flags,
		IOStreams:   streams,
	})
	cmd.SetArgs(append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cacheDir}, args...))
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	return cmd
}

// execute runs kubectl args and turns a fatal exit into an error.
func (k *kubectl) execute(streams genericiooptions.IOStreams, args []string) (err error) {
	kubectlMu.Lock()
	defer kubectlMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			ex, ok := r.(kubectlExit)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("kubectl exited with code %d: %s", ex.code, strings.TrimSpace(ex.msg))
		}
	}()
	return k.command(streams, args).Execute()
}

// run runs kubectl with args and returns its stdout, stderr and error.
func (k *kubectl) run(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	err = k.execute(streams, args)
	return out.String(), errOut.String(), err
}

// runPast503 is run, retried (bounded) while kubectl reports a 503:
// kube-apiserver answers 503 for a group version's OpenAPI v3 (explain
// reads it) for a moment whenever a CRD changes, which tests running
// beside the caller do on the shared kube-apiserver.
func (k *kubectl) runPast503(args ...string) (stdout, stderr string, err error) {
	stdout, stderr, err = k.run(args...)
	for deadline := time.Now().Add(time.Minute); err != nil && strings.Contains(fmt.Sprint(err, stderr), "currently unable to handle the request") && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		stdout, stderr, err = k.run(args...)
	}
	return stdout, stderr, err
}

// mustRun runs kubectl and fails the test on error; it returns stdout.
func (k *kubectl) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := k.run(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// background is a kubectl run in its own goroutine.
type background struct {
	args   []string
	out    syncBuffer
	errOut syncBuffer
	done   chan struct{}
	err    error
}

// start runs kubectl args in a goroutine. Until it ends, other kubectl runs
// wait (see kubectlMu).
func (k *kubectl) start(args ...string) *background {
	b := &background{args: args, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &b.out, ErrOut: &b.errOut}
		b.err = k.execute(streams, args)
	}()
	return b
}

// waitOutput waits until the run's stdout contains want.
func (b *background) waitOutput(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for !strings.Contains(b.out.String(), want) {
		select {
		case <-b.done:
			if strings.Contains(b.out.String(), want) {
				return
			}
			t.Fatalf("kubectl %s ended (err %v) without printing %q\nstdout:\n%s\nstderr:\n%s", strings.Join(b.args, " "), b.err, want, b.out.String(), b.errOut.String())
		case <-deadline:
			t.Fatalf("kubectl %s: %q not printed within %v\nstdout:\n%s\nstderr:\n%s", strings.Join(b.args, " "), want, waitTimeout, b.out.String(), b.errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// wait waits for the run to end and returns its error.
func (b *background) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-b.done:
		return b.err
	case <-time.After(waitTimeout):
		t.Fatalf("kubectl %s still running after %v\nstdout:\n%s\nstderr:\n%s", strings.Join(b.args, " "), waitTimeout, b.out.String(), b.errOut.String())
	}
	return nil
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
