package envtest_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// kubectlBinary is kubectl built from k8s.io/kubectl by the conformance
// module (its cmd/kubectl, with this test's -race setting, so the build
// cache of the conformance tests serves it) into t's temporary directory,
// or TEST_ASSET_KUBECTL.
func kubectlBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TEST_ASSET_KUBECTL"); p != "" {
		return p
	}
	bin := filepath.Join(t.TempDir(), "kubectl")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./cmd/kubectl")...)
	cmd.Dir = filepath.Join("..", "conformance")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build kubectl: %v\n%s", err, out)
	}
	return bin
}

func readAll(r io.Reader) string { b, _ := io.ReadAll(r); return string(b) }

// AuthenticatedUser.Kubectl and ControlPlane.KubeCtl run kubectl as the
// user (a bearer token or a client certificate, in a kubeconfig file
// removed at Stop), as envtest's do; in-process there is no URL for it.
func TestKubectl(t *testing.T) {
	t.Parallel()
	bin := kubectlBinary(t)
	for _, tc := range []struct {
		name  string
		authn func() (envtest.Authn, error)
	}{
		{name: "token", authn: func() (envtest.Authn, error) { return envtest.NewTokenAuthn(), nil }},
		{name: "client certificate", authn: func() (envtest.Authn, error) { return envtest.NewCertAuthn() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := tc.authn()
			if err != nil {
				t.Fatal(err)
			}
			e := &envtest.Environment{}
			e.ControlPlane.KubectlPath = bin
			e.ControlPlane.GetAPIServer().SecureServing.Authn = a
			cfg, err := e.Start()
			if err != nil {
				t.Fatal(err)
			}
			stopped := false
			defer func() {
				if !stopped {
					_ = e.Stop()
				}
			}()
			if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").Create(ctxFor(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			vera, err := e.AddUser(envtest.User{Name: "vera"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			k, err := vera.Kubectl()
			if err != nil {
				t.Fatal(err)
			}
			for _, run := range []struct {
				name       string
				k          *envtest.KubeCtl
				args       []string
				wantOut    string
				wantErrOut string
			}{
				{name: "default user", k: e.ControlPlane.KubeCtl(), args: []string{"get", "configmaps", "-n", "default", "-o", "name"}, wantOut: "configmap/x"},
				{name: "whoami", k: k, args: []string{"auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"}, wantOut: "vera"},
				{name: "vera forbidden", k: k, args: []string{"get", "configmaps", "-n", "default"}, wantErrOut: `User "vera" cannot list resource "configmaps"`},
			} {
				stdout, stderr, err := run.k.Run(run.args...)
				out, errOut := readAll(stdout), readAll(stderr)
				if !strings.Contains(out, run.wantOut) || !strings.Contains(errOut, run.wantErrOut) || (err == nil) != (run.wantErrOut == "") {
					t.Errorf("%s: kubectl %v: %v\nstdout %s\nstderr %s\nwant stdout %q, stderr %q", run.name, run.args, err, out, errOut, run.wantOut, run.wantErrOut)
				}
			}
			kubeconfig := k.Opts[1]
			if err := e.Stop(); err != nil {
				t.Fatal(err)
			}
			stopped = true
			if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
				t.Errorf("the kubeconfig %s after Stop: %v; want removed", kubeconfig, err)
			}
		})
	}
	t.Run("in-process", func(t *testing.T) {
		e := &envtest.Environment{InProcess: true}
		start(t, e)
		u, err := e.AddUser(envtest.User{Name: "vera"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := u.Kubectl(); !errors.Is(err, envtest.ErrNoURL) {
			t.Errorf("Kubectl in-process: %v; want ErrNoURL", err)
		}
	})
}
