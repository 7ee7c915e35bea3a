package kapi_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/kapi-dev/kapi/"

// allowed lists, per package, the kapi packages its non-test code may
// import (DESIGN.md: dependencies point one way). examples may import all.
var allowed = map[string][]string{
	"rv":                       {},
	"watch":                    {"rv"},
	"storage":                  {"rv", "watch", "internal/validation", "internal/jsonval", "internal/jsontree"},
	"storage/memory":           {"rv", "watch", "storage", "storage/internal/revlru", "storage/internal/keytree"},
	"storage/cache":            {"rv", "watch", "storage", "storage/internal/revlru", "storage/internal/keytree"},
	"storage/internal/revlru":  {},                                              // snapshots by revision, least recently used evicted first
	"storage/internal/keytree": {"watch", "storage", "storage/internal/revlru"}, // the B-tree of states by key, its snapshots and watch filter
	"storage/storagetest":      {"rv", "watch", "storage"},
	"codec":                    {},
	"codec/protobuf":           {"internal/jsonval"}, // FieldsV1 and RawExtension JSON, as encoding/json writes it
	"codec/cbor":               {},
	"schema":                   {"internal/validation", "internal/jsonval"},
	"patch":                    {"codec", "schema", "internal/jsonval", "internal/weakmemo"},
	"internal/validation":      {},
	"internal/jsonval":         {},
	"internal/jsontree":        {},
	"internal/weakmemo":        {}, // results memoized by a pointer while it lives (shared immutable compilations)
	"internal/benchobj":        {}, // test objects of the decode benchmarks
	"registry": {"rv", "watch", "storage", "codec", "codec/protobuf", "codec/cbor", "schema", "patch", "internal/validation", "internal/jsonval", "internal/jsontree", "internal/weakmemo",
		"registry/internal/negotiate", "registry/internal/jsonobj", "registry/internal/stream", "registry/internal/table",
		"registry/internal/openapi", "registry/internal/discovery", "registry/internal/gc", "registry/internal/inproc", "registry/internal/deleteopts",
		"registry/internal/gojson", "registry/request", "registry/authn", "registry/authz", "registry/authz/rbac", "registry/admission", "registry/admission/webhook"},
	// registry's stages with no need of its types (DESIGN.md: split along
	// the request path); none imports registry.
	"registry/internal/openapi":    {"schema"},                                      // the OpenAPI v2 and v3 documents
	"registry/internal/inproc":     {},                                              // the in-process RoundTripper
	"registry/internal/table":      {"internal/jsonval"},                            // Table rendering's JSONPath, cells and ages
	"registry/internal/gc":         {"watch", "storage"},                            // the ownerReferences garbage collector
	"registry/internal/negotiate":  {"codec"},                                       // response representations from Accept
	"registry/internal/discovery":  {},                                              // the discovery documents
	"registry/internal/jsonobj":    {"rv", "internal/jsontree", "internal/jsonval"}, // the JSON forms of an object
	"registry/internal/deleteopts": {"registry/internal/jsonobj"},                   // DELETE's DeleteOptions
	"registry/internal/gojson":     {"schema"},                                      // a body against Go types, encoding/json's errors
	"registry/internal/review":     {},                                              // delegating reviews' POST and answer cache
	// watch-stream framing and batching
	"registry/internal/stream": {"watch", "codec/protobuf", "codec/cbor", "registry/internal/negotiate"},
	// The request pipeline's exported stages, which users implement or
	// call; none imports registry.
	"registry/request":           {},                                                                                                                  // a request's Info (verb, resource, …) and User
	"registry/authn":             {"registry/request", "registry/internal/review"},                                                                    // authenticators: tokens, client certificates, front proxy, anonymous
	"registry/authz":             {"registry/request", "registry/internal/review"},                                                                    // the Authorizer interface, allow-all, unions
	"registry/authz/rbac":        {"registry/request", "registry/authz"},                                                                              // kube's RBAC rules, indexed by subject
	"registry/admission":         {"registry/request"},                                                                                                // admission hooks and their chain
	"registry/admission/webhook": {"codec", "registry/request", "registry/admission", "registry/authz", "registry/authz/rbac", "internal/validation"}, // calling admission webhooks (matchConditions ask the authorizer)
	// Serving a handler as kube-apiserver does: TLS, limits, timeouts,
	// health, shutdown (stdlib only; metrics in the metrics module).
	"serve": {"registry/request"},
	// The built-in Kubernetes kinds (pods, deployments, …) from data
	// gen/builtin generates; registered on a Registry like any kind.
	"builtin": {"registry", "registry/request", "registry/authz", "schema", "codec/protobuf", "internal/validation"},
}

// The third-party modules the core module may use (the design card).
var allowedModules = []string{
	"github.com/google/btree", "github.com/evanphx/json-patch/v5", "google.golang.org/protobuf",
	"github.com/fxamacker/cbor/v2", "sigs.k8s.io/structured-merge-diff/v4", "sigs.k8s.io/structured-merge-diff/v6", "sigs.k8s.io/yaml",
	"github.com/anishathalye/porcupine", // storage/storagetest: the linearizability check
	// registry: /openapi/v2's protobuf form is gnostic's parse of the JSON
	// one, as kube-openapi makes it (its module graph: yaml/v3 and protobuf).
	"github.com/google/gnostic-models",
	"github.com/pmezard/go-difflib",      // builtin: kube's update diffs in messages are go-difflib's unified diffs (apimachinery's util/diff)
	"github.com/go-json-experiment/json", // internal/jsontree: jsontext's tokenizer, ~2× encoding/json's decode (BENCHMARKS.md); registry.Client: case-sensitive typed decode
}

func TestDependencyDirection(t *testing.T) {
	imports := map[string]map[string]bool{} // package dir → kapi imports
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == "conformance" || path == ".git" || strings.HasPrefix(d.Name(), "testdata")) {
			return filepath.SkipDir
		}
		// A directory with a go.mod of its own (storage/etcd3, say) is
		// another module: go test ./... skips it, and its heavy
		// dependencies are why it is one, so the core's rules stop there.
		if d.IsDir() && path != "." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if strings.HasPrefix(p, module) {
				imports[dir][strings.TrimPrefix(p, module)] = true
			} else if strings.Contains(p, ".") && !isAllowedModule(p) {
				t.Errorf("%s imports %s, which is not on the design card's dependency list", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, deps := range imports {
		if dir == "." || strings.HasPrefix(dir, "examples") {
			continue
		}
		ok, known := allowed[dir]
		if !known {
			t.Errorf("package %s is not in the dependency table of deps_test.go; add it with its allowed imports", dir)
			continue
		}
		for dep := range deps {
			if !contains(ok, dep) {
				t.Errorf("%s imports %s: against the one-way dependency rule (allowed: %v)", dir, dep, ok)
			}
		}
	}
}

func TestCoreModuleIsLean(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.Contains(f[0], ".") {
			continue
		}
		for _, bad := range []string{"k8s.io/", "go.etcd.io/", "google.golang.org/grpc"} {
			if strings.HasPrefix(f[0], bad) {
				t.Errorf("go.mod requires %s: the core module must not pull k8s.io, etcd or gRPC", f[0])
			}
		}
	}
}

func isAllowedModule(p string) bool {
	for _, m := range allowedModules {
		if p == m || strings.HasPrefix(p, m+"/") {
			return true
		}
	}
	return false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
