package etcd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kapi-dev/kapi/reference/kubeapiserver"
)

// Package is the import path of etcd's main package, the reference
// module's tool.
const Package = "go.etcd.io/etcd/server/v3"

// Version is the etcd release the reference module requires.
const Version = "3.7.0"

// BuildError is a failed `go build` of etcd, with its output.
type BuildError struct {
	Err    error
	Output string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("etcd: go build %s: %v\n%s", Package, e.Err, e.Output)
}

func (e *BuildError) Unwrap() error { return e.Err }

// Build builds etcd into binDir (kubeapiserver.DefaultBinDir when empty)
// with `go build` in the reference module's directory and returns the
// binary's path. The first build on a machine takes a minute or two, later
// ones seconds (the Go build cache). Concurrent builds into one binDir are
// safe: `go build` moves the finished binary into place.
func Build(ctx context.Context, binDir string) (string, error) {
	mod, err := kubeapiserver.ModuleDir()
	if err != nil {
		return "", err
	}
	if binDir == "" {
		if binDir, err = kubeapiserver.DefaultBinDir(); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, "etcd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, Package)
	cmd.Dir = mod
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", &BuildError{Err: err, Output: out.String()}
	}
	return bin, nil
}
