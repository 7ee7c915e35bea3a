package kubeapiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Package is the import path of kube-apiserver's main package, the
// reference module's tool.
const Package = "k8s.io/kubernetes/cmd/kube-apiserver"

// Version is the k8s.io/kubernetes release the reference module requires,
// which Build stamps into the binary as kube's own build does (without it,
// /version would say v0.0.0-master).
const Version = "v1.37.2"

// ldflags set k8s.io/component-base/version's variables to Version.
const ldflags = "-X k8s.io/component-base/version.gitVersion=" + Version +
	" -X k8s.io/component-base/version.gitMajor=1" +
	" -X k8s.io/component-base/version.gitMinor=37" +
	" -X k8s.io/component-base/version.gitTreeState=clean"

// ErrNoModule is returned when the reference module's directory (its
// go.mod) cannot be found to build kube-apiserver in.
var ErrNoModule = errors.New("kubeapiserver: the reference module's directory is unknown")

// BuildError is a failed `go build` of kube-apiserver, with its output.
type BuildError struct {
	Err    error
	Output string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("kubeapiserver: go build %s: %v\n%s", Package, e.Err, e.Output)
}

func (e *BuildError) Unwrap() error { return e.Err }

// ModuleDir returns the directory of the reference module (the one holding
// its go.mod), found from this source file's location: the module is used
// through a replace of a local directory, never from the module cache.
func ModuleDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", ErrNoModule
	}
	dir := filepath.Dir(filepath.Dir(file))
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoModule, err)
	}
	return dir, nil
}

// DefaultBinDir is where Build puts kube-apiserver when not told
// otherwise: a directory of the user's cache, the same for every process,
// so that `go build` finds the binary up to date and does not link it
// again.
func DefaultBinDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "kapi-reference", runtime.GOOS+"_"+runtime.GOARCH), nil
}

// Build builds kube-apiserver into binDir (DefaultBinDir when empty) with
// `go build`, run in the reference module's directory, and returns the
// binary's path. The first build on a machine compiles all of
// k8s.io/kubernetes' dependencies (minutes); later ones are served from
// the Go build cache (seconds). Concurrent builds into one binDir are
// safe: `go build` moves the finished binary into place.
func Build(ctx context.Context, binDir string) (string, error) {
	mod, err := ModuleDir()
	if err != nil {
		return "", err
	}
	if binDir == "" {
		if binDir, err = DefaultBinDir(); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, "kube-apiserver")
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags="+ldflags, "-o", bin, Package)
	cmd.Dir = mod
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", &BuildError{Err: err, Output: out.String()}
	}
	return bin, nil
}
