// Command builtin generates kapi's built-in kinds from Kubernetes' own
// sources: the protobuf files (codec/protobuf/proto/k8s.io/api/...) from
// k8s.io/api's Go types, and the builtin package's schemas
// (builtin/schemas.json.gz) and kinds table (builtin/zz_generated_kinds.go)
// from the OpenAPI v3 and discovery documents k8s.io/kubernetes commits.
//
// It is a module of its own so that kapi's core module never imports
// k8s.io/*: the core embeds what this writes. Run it with `make generate`
// (then `make proto`); its test fails when the committed output is stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", "../..", "the kapi checkout to write into")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gen/builtin:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	kube, err := kubeDir()
	if err != nil {
		return err
	}
	files, err := generate(kube)
	if err != nil {
		return err
	}
	for p, b := range files {
		if p == schemasFile {
			b = compress(b)
		}
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
