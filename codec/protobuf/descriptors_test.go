package protobuf

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestDescriptorSetFresh recompiles proto/ and compares the result with the
// committed descriptors.binpb (`make proto` rewrites it). It needs protoc, so
// it skips where there is none: building and the other tests do not.
func TestDescriptorSetFresh(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not on PATH: cannot check descriptors.binpb against proto/ (install protobuf-compiler to run this check)")
	}
	var files []string
	err = filepath.WalkDir("proto", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".proto" {
			rel, _ := filepath.Rel("proto", path)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	out := filepath.Join(t.TempDir(), "set.binpb")
	cmd := exec.Command(protoc, append([]string{"--include_imports", "--descriptor_set_out=" + out}, files...)...)
	cmd.Dir = "proto"
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, b)
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var want, got descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(fresh, &want); err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(descriptorSet, &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, &want) {
		t.Error("descriptors.binpb is out of date with proto/: run `make proto`")
	}
}
