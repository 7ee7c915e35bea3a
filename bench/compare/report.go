package compare

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Markers delimit the section of BENCHMARKS.md this package owns. Inside
// it, WriteSection rewrites only the generated block between the table
// markers when they are present, so the hand-written analysis around the
// table survives a rerun.
const (
	SectionBegin = "<!-- bench-compare:begin -->"
	SectionEnd   = "<!-- bench-compare:end -->"
	TableBegin   = "<!-- bench-compare:table:begin -->"
	TableEnd     = "<!-- bench-compare:table:end -->"
)

// Peers returns every peer, kapi first.
func Peers() []PeerInfo {
	return []PeerInfo{
		KapiMemory(),
		KapiEtcd3(),
		KapiCacheMemory(),
		KapiCacheEtcd3(),
		Tracker(),
		ControllerRuntimeFake(),
		KubeEtcd3(),
		KubeCacher(),
		KapiHTTP(),
		KapiInProcess(),
		KubeHTTP(),
	}
}

// Section is the generated block: the command, the machine, the table
// and what each column measures.
func Section(cfg Config, results []Result, args string) string {
	cfg.defaults()
	var b strings.Builder
	b.WriteString(TableBegin + "\n")
	fmt.Fprintf(&b, "Command (from the repository root):\n\n```sh\ncd bench && go run ./cmd/compare %s\n```\n\n", args)
	fmt.Fprintf(&b, "Machine: GOMAXPROCS=%d, %s/%s, %s. %d objects of ~%d B JSON over %d namespaces.\n\n",
		runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version(), cfg.N, ObjectSize, Namespaces)
	b.WriteString(Table(cfg, results))
	b.WriteString("\nColumns (what a Go caller gets back is a decoded `*unstructured.Unstructured` in every column):\n\n")
	for _, r := range results {
		fmt.Fprintf(&b, "- **%s**: %s.\n", r.Peer.Name, r.Peer.What)
	}
	b.WriteString(TableEnd + "\n")
	return b.String()
}

// WriteSection puts gen into path: between the table markers if the
// section has them, else as the whole section (appended at the end of the
// file when the section markers are missing).
func WriteSection(path, gen string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	var out []byte
	switch {
	case bytes.Contains(old, []byte(TableBegin)) && bytes.Contains(old, []byte(TableEnd)):
		i := bytes.Index(old, []byte(TableBegin))
		j := bytes.Index(old, []byte(TableEnd)) + len(TableEnd)
		if j < len(old) && old[j] == '\n' {
			j++
		}
		out = append(append(append([]byte{}, old[:i]...), gen...), old[j:]...)
	case bytes.Contains(old, []byte(SectionBegin)) && bytes.Contains(old, []byte(SectionEnd)):
		i := bytes.Index(old, []byte(SectionBegin)) + len(SectionBegin) + 1
		j := bytes.Index(old, []byte(SectionEnd))
		out = append(append(append([]byte{}, old[:i]...), gen...), old[j:]...)
	default:
		out = append(append([]byte{}, old...), []byte("\n"+SectionBegin+"\n"+gen+SectionEnd+"\n")...)
	}
	return os.WriteFile(path, out, 0o644)
}
