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
