package controller_test

import (
	"os"
	"strings"
	"testing"
)

// The suite's two envtest files differ by their build constraint and their
// import alone: switching from controller-runtime's envtest to kapi's is
// one import, and the compiler checks the suite against both
// (go vet -tags crenvtest).
func TestOneImportApart(t *testing.T) {
	t.Parallel()
	files := []struct {
		name, constraint, imp string
	}{
		{name: "envtest_kapi_test.go", constraint: "//go:build !crenvtest", imp: `import "github.com/kapi-dev/kapi/envtest"`},
		{name: "envtest_cr_test.go", constraint: "//go:build crenvtest", imp: `import "sigs.k8s.io/controller-runtime/pkg/envtest"`},
	}
	var rest []string
	for _, f := range files {
		b, err := os.ReadFile(f.name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		var kept []string
		var sawConstraint, sawImport bool
		for _, l := range lines {
			switch l {
			case f.constraint:
				sawConstraint = true
			case f.imp:
				sawImport = true
			default:
				kept = append(kept, l)
			}
		}
		if !sawConstraint || !sawImport {
			t.Fatalf("%s: constraint %v, import %v; want the line %q and the line %q", f.name, sawConstraint, sawImport, f.constraint, f.imp)
		}
		rest = append(rest, strings.Join(kept, "\n"))
	}
	if rest[0] != rest[1] {
		t.Fatalf("the two files differ beyond their constraint and import:\n%s\n---\n%s", rest[0], rest[1])
	}
}
