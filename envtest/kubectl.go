package envtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// KubeCtl runs a kubectl binary: envtest's KubeCtl.
type KubeCtl struct {
	// Path is the kubectl binary; when empty, Run finds it as envtest
	// does (TEST_ASSET_KUBECTL, then KUBEBUILDER_ASSETS, then
	// /usr/local/kubebuilder/bin), then on PATH.
	Path string
	// Opts are flags given to every run, before its arguments (the
	// user's kubeconfig for AuthenticatedUser.Kubectl).
	Opts []string
}

// Run runs kubectl with Opts and args and returns what it wrote.
func (k *KubeCtl) Run(args ...string) (stdout, stderr io.Reader, err error) {
	if k.Path == "" {
		k.Path = kubectlPath("")
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(k.Path, append(append([]string(nil), k.Opts...), args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return &out, &errOut, err
}

// kubectlPath finds kubectl: envtest's BinPathFinder, then PATH; plain
// "kubectl" (for exec's error) when none is found.
func kubectlPath(assetsDir string) string {
	if p := os.Getenv("TEST_ASSET_KUBECTL"); p != "" {
		return p
	}
	for _, dir := range []string{assetsDir, os.Getenv("KUBEBUILDER_ASSETS"), "/usr/local/kubebuilder/bin"} {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, "kubectl"); isFile(p) {
			return p
		}
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		return p
	}
	return "kubectl"
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// ErrNoURL is Kubectl's error for an in-process API server: kubectl is
// another process and needs a URL.
var ErrNoURL = errors.New("kapi/envtest: the API server is in-process (InProcess): kubectl needs a URL")

// Kubectl is a kubectl that acts as the user: its Opts name a kubeconfig
// file of the user's, removed at Stop. kubectl itself is found as
// KubeCtl.Run says, or is ControlPlane.KubectlPath.
func (u *AuthenticatedUser) Kubectl() (*KubeCtl, error) {
	if u.kubectl != nil {
		return u.kubectl, nil
	}
	api := u.plane.GetAPIServer()
	if api.InProcess {
		return nil, ErrNoURL
	}
	kc, err := u.KubeConfig() // panics before Start, as envtest's
	if err != nil {
		return nil, err
	}
	dir, err := api.workDir()
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "*.kubecfg")
	if err != nil {
		return nil, fmt.Errorf("unable to create file for kubeconfig: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(kc); err != nil {
		return nil, fmt.Errorf("unable to write kubeconfig: %w", err)
	}
	u.kubectl = &KubeCtl{Path: u.plane.KubectlPath, Opts: []string{"--kubeconfig", f.Name()}}
	return u.kubectl, nil
}

// KubeCtl is a kubectl for the control plane's default user, an admin
// (system:masters) provisioned at the first call, as envtest's.
func (f *ControlPlane) KubeCtl() *KubeCtl {
	if f.defaultUser == nil {
		u, err := f.AddUser(User{Name: "default", Groups: []string{"system:masters"}}, nil)
		if err != nil {
			return &KubeCtl{Path: f.KubectlPath}
		}
		f.defaultUser = u
	}
	k, err := f.defaultUser.Kubectl()
	if err != nil {
		return &KubeCtl{Path: f.KubectlPath}
	}
	return k
}
