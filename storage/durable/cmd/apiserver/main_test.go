package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage/durable"
)

// serve runs the command in-process until the returned stop is called
// and returns the URL it serves at.
func serve(t *testing.T, args ...string) (base string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw)
		pw.CloseWithError(io.EOF)
		errc <- err
	}()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "serving the kapi example API at "); ok {
				urls <- rest
			}
		}
	}()
	select {
	case base = <-urls:
	case err := <-errc:
		cancel()
		t.Fatalf("run: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("not serving within 30s")
	}
	return base, func() {
		t.Helper()
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("run: %v", err)
		}
	}
}

func request(t *testing.T, method, url, body string) (int, cmJSON) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var obj cmJSON
	json.NewDecoder(resp.Body).Decode(&obj)
	return resp.StatusCode, obj
}

// TestRestartKeepsObjects: objects written before a stop are served
// after the start, at their resourceVersions, and a watch from a
// resourceVersion written before the restart replays what followed it.
func TestRestartKeepsObjects(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--listen", "127.0.0.1:0"}
	base, stop := serve(t, args...)
	code, a := request(t, "POST", base+cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"v":"1"}}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	code, b := request(t, "POST", base+cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"v":"1"}}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	stop()

	base, stop = serve(t, args...)
	defer stop()
	code, got := request(t, "GET", base+cmPath+"/a", "")
	if code != http.StatusOK || got.Data["v"] != "1" || got.Metadata.ResourceVersion != a.Metadata.ResourceVersion {
		t.Fatalf("after restart: %d %+v; want a=1 at %s", code, got, a.Metadata.ResourceVersion)
	}
	resp, err := http.Get(base + cmPath + "?watch=1&resourceVersion=" + a.Metadata.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ev struct {
		Type   string `json:"type"`
		Object cmJSON `json:"object"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "ADDED" || ev.Object.Metadata.Name != "b" || ev.Object.Metadata.ResourceVersion != b.Metadata.ResourceVersion {
		t.Fatalf("watch from %s after restart: %s %s@%s; want ADDED b@%s", a.Metadata.ResourceVersion, ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion, b.Metadata.ResourceVersion)
	}
}

// TestAdopt: a data directory whose revision marker is lost is refused
// (TestStartErrors); --adopt serves it as it is, and its objects.
func TestAdopt(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--listen", "127.0.0.1:0"}
	base, stop := serve(t, args...)
	code, a := request(t, "POST", base+cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"v":"1"}}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	stop()
	if err := os.Remove(filepath.Join(dir, durable.MarkerName)); err != nil {
		t.Fatal(err)
	}
	base, stop = serve(t, append(args, "--adopt")...)
	defer stop()
	code, got := request(t, "GET", base+cmPath+"/a", "")
	if code != http.StatusOK || got.Data["v"] != "1" || got.Metadata.ResourceVersion != a.Metadata.ResourceVersion {
		t.Fatalf("after --adopt: %d %+v; want a=1 at %s", code, got, a.Metadata.ResourceVersion)
	}
}

// TestStartErrors: the command ends at start with an error naming the
// problem, never serving an empty or partial store.
func TestStartErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) []string
		want  error
		msg   string
	}{
		{"no data directory", func(t *testing.T) []string { return nil }, nil, "--data-dir is required"},
		{"truncated file", func(t *testing.T) []string {
			dir := t.TempDir()
			s, err := durable.Open(dir, durable.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			paths, _ := filepath.Glob(filepath.Join(dir, durable.DirName, "MANIFEST-*"))
			if len(paths) == 0 {
				t.Fatal("no MANIFEST")
			}
			for _, path := range paths {
				fi, _ := os.Stat(path)
				os.Truncate(path, fi.Size()/3)
			}
			return []string{"--data-dir", dir}
		}, durable.ErrCorrupt, "data file damaged"},
		{"marker lost", func(t *testing.T) []string {
			dir := t.TempDir()
			s, err := durable.Open(dir, durable.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			os.Remove(filepath.Join(dir, durable.MarkerName))
			return []string{"--data-dir", dir}
		}, durable.ErrCorrupt, "marker is missing"},
		{"--adopt with the marker in place", func(t *testing.T) []string {
			dir := t.TempDir()
			s, err := durable.Open(dir, durable.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			return []string{"--data-dir", dir, "--adopt"}
		}, durable.ErrDataExists, "marker is in place"},
		{"not a directory", func(t *testing.T) []string {
			f := filepath.Join(t.TempDir(), "file")
			os.WriteFile(f, nil, 0o600)
			return []string{"--data-dir", f}
		}, durable.ErrNotWritable, "not writable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(tt.setup(t), "--listen", "127.0.0.1:0")
			err := run(t.Context(), args, io.Discard)
			if err == nil || tt.want != nil && !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("run: %v; want an error saying %q", err, tt.msg)
			}
		})
	}
}

// TestStartReadOnly: the command on a data directory it cannot write
// exits at once with an error saying so. Root writes anywhere, so as
// root the command runs as nobody.
func TestStartReadOnly(t *testing.T) {
	bin := buildCommand(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	for _, p := range []string{dir, bin} { // let nobody reach both
		for d := filepath.Dir(p); strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil {
				os.Chmod(d, fi.Mode().Perm()|0o005)
			}
		}
	}
	cmd := exec.Command(bin, "--data-dir", dir, "--listen", "127.0.0.1:0")
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "data directory not writable") {
		t.Fatalf("command on a read-only directory: %v\n%s\nwant exit status 1 and %q", err, out, "data directory not writable")
	}
}

// TestBackupAndRestore: SIGUSR1 writes a backup while the server serves;
// --restore starts a new server from it, with the objects and their
// resourceVersions.
func TestBackupAndRestore(t *testing.T) {
	bin := buildCommand(t)
	backup := filepath.Join(t.TempDir(), "kapi.backup")
	p := startProcess(t, bin, "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--backup", backup)
	code, a := request(t, "POST", p.url+cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"v":"1"}}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	p.cmd.Process.Signal(syscall.SIGUSR1)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.stderr.String(), "wrote a backup") {
		if time.Now().After(deadline) {
			t.Fatalf("no backup within 30s: %s", p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.stop(t)

	r := startProcess(t, bin, "--restore", backup, "--data-dir", filepath.Join(t.TempDir(), "restored"), "--listen", "127.0.0.1:0")
	defer r.stop(t)
	code, got := request(t, "GET", r.url+cmPath+"/a", "")
	if code != http.StatusOK || got.Data["v"] != "1" || got.Metadata.ResourceVersion != a.Metadata.ResourceVersion {
		t.Fatalf("restored: %d %+v; want a=1 at %s", code, got, a.Metadata.ResourceVersion)
	}
}
