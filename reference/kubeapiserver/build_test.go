package kubeapiserver

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBuild builds kube-apiserver (the first build on a machine compiles
// k8s.io/kubernetes: minutes; `make test` runs this before the
// conformance tests that start it) and checks it is the release the
// module requires.
func TestBuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	bin, err := Build(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s in %s", bin, time.Since(start).Round(time.Millisecond))
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "Kubernetes "+Version; got != want {
		t.Errorf("%s --version: got %q; want %q", bin, got, want)
	}
}

func TestStartNeedsEtcd(t *testing.T) {
	_, err := Start(context.Background(), Options{Binary: "/nonexistent"})
	if !errors.Is(err, ErrNoEtcd) {
		t.Fatalf("Start without EtcdServers: got %v; want ErrNoEtcd", err)
	}
}

func TestModuleDir(t *testing.T) {
	dir, err := ModuleDir()
	if err != nil {
		t.Fatalf("ModuleDir: %q, %v", dir, err)
	}
	if !strings.HasSuffix(dir, "reference") {
		t.Errorf("ModuleDir: got %q; want the reference module's directory", dir)
	}
}
