package kuberaytest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	kuberayModule = "github.com/ray-project/kuberay/ray-operator"
	envtestImport = `"sigs.k8s.io/controller-runtime/pkg/envtest"`
	kapiImport    = `envtest "github.com/kapi-dev/kapi/envtest"`
)

// TestKubeRaySuite runs KubeRay's controller suite (Ginkgo, TestAPIs) with
// its suite_test.go changed in its envtest import alone, and fails when
// any spec fails.
func TestKubeRaySuite(t *testing.T) {
	src := goOutput(t, "list", "-m", "-f", "{{.Dir}}", kuberayModule)
	dst := filepath.Join("testdata", "kuberay")
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	copyTree(t, filepath.Join(src, "controllers", "ray"), filepath.Join(dst, "controllers", "ray"), false)
	copyTree(t, filepath.Join(src, "config", "crd", "bases"), filepath.Join(dst, "config", "crd", "bases"), true)
	copyFile(t, filepath.Join(src, "LICENSE"), filepath.Join(dst, "LICENSE"))

	suite := filepath.Join(dst, "controllers", "ray", "suite_test.go")
	b, err := os.ReadFile(suite)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte(envtestImport)); n != 1 {
		t.Fatalf("suite_test.go imports %s %d times; want once", envtestImport, n)
	}
	if err := os.WriteFile(suite, bytes.Replace(b, []byte(envtestImport), []byte(kapiImport), 1), 0o644); err != nil {
		t.Fatal(err)
	}

	// The package's tests all, as KubeRay runs them (go test
	// ./controllers/ray): its unit tests run before the Ginkgo suite
	// (TestAPIs, last by file name) and set package state some specs read
	// (testRayCluster, which "Should handle HeadPodReady and
	// RayClusterProvisioned conditions correctly" dereferences).
	cmd := exec.Command("go", "test", "-race", "-count", "1", "-timeout", "25m", "./"+filepath.ToSlash(filepath.Join(dst, "controllers", "ray")), "-args", "-ginkgo.no-color")
	// KubeRay's specs are written for controller-runtime's envtest, which
	// runs no garbage collector: "Should process multi-stage deletions in
	// order on success" checks that the submitter Job outlives its owner,
	// the RayJob, deleted by then. kapi/envtest turns its collector off
	// for them as envtest's users would expect.
	cmd.Env = append(os.Environ(), "KAPI_ENVTEST_NO_GARBAGE_COLLECTOR=true")
	out, err := cmd.CombinedOutput()
	// The whole output, for the failures and data races the tail misses.
	if werr := os.WriteFile(filepath.Join("testdata", "kuberay.log"), out, 0o644); werr != nil {
		t.Error(werr)
	}
	if err != nil {
		t.Fatalf("KubeRay's suite on kapi/envtest: %v (all of it in testdata/kuberay.log)\n%s%s", err, races(string(out)), tail(string(out), 200))
	}
	t.Logf("%s", tail(string(out), 8))
}

// races is the race detector's reports in out, "" if none.
func races(out string) string {
	var b strings.Builder
	for {
		i := strings.Index(out, "WARNING: DATA RACE")
		if i < 0 {
			return b.String()
		}
		out = out[i:]
		j := strings.Index(out, "\n==================")
		if j < 0 {
			j = len(out)
		}
		b.WriteString(out[:j] + "\n")
		out = out[j:]
		if len(out) > 0 {
			out = out[1:]
		}
	}
}

func goOutput(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// copyTree copies the regular files of src (and, if deep, of its
// subdirectories) to dst.
func copyTree(t *testing.T, src, dst string, deep bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != src && !deep {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		copyFile(t, p, filepath.Join(dst, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
