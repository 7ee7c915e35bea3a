package etcd

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBuild builds etcd and checks it is the release the module requires.
func TestBuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bin, err := Build(ctx, "") // the shared directory: later builds find it up to date
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	if want := "etcd Version: " + Version; !strings.Contains(string(out), want) {
		t.Errorf("%s --version: got %q; want a line %q", bin, out, want)
	}
}
