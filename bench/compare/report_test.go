package compare

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteSection(t *testing.T) {
	tests := []struct {
		name, before, want string
	}{
		{"no section", "# B\n", "# B\n\n" + SectionBegin + "\nGEN\n" + SectionEnd + "\n"},
		{"section", "a\n" + SectionBegin + "\nold\n" + SectionEnd + "\nz\n", "a\n" + SectionBegin + "\nGEN\n" + SectionEnd + "\nz\n"},
		{"table markers keep the notes", "a\n" + SectionBegin + "\nnotes\n" + TableBegin + "\nold\n" + TableEnd + "\nmore\n" + SectionEnd + "\n",
			"a\n" + SectionBegin + "\nnotes\nGEN\nmore\n" + SectionEnd + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "B.md")
			if err := os.WriteFile(path, []byte(tt.before), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := WriteSection(path, "GEN\n"); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}
