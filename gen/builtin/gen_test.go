package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedOutputIsCurrent fails when a generated file in the
// checkout differs from what the generator writes now: run `make
// generate` (and `make proto`) and commit.
func TestCommittedOutputIsCurrent(t *testing.T) {
	kube, err := kubeDir()
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate(kube)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range files {
		t.Run(p, func(t *testing.T) {
			got, err := os.ReadFile(filepath.Join("../..", p))
			if err != nil {
				t.Fatalf("%v: run make generate", err)
			}
			if p == schemasFile {
				zr, err := gzip.NewReader(bytes.NewReader(got))
				if err != nil {
					t.Fatal(err)
				}
				if got, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: run make generate and commit", p)
			}
		})
	}
}
