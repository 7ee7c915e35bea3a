package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestRun starts the command with an embedded etcd, creates a configmap
// and reads it back, then stops it.
func TestRun(t *testing.T) {
	base, stop := start(t, "--embedded-etcd", t.TempDir(), "--embedded-etcd-addr", "127.0.0.1:0", "--addr", "127.0.0.1:0")
	defer stop()
	createAndGet(t, base)
}

// start runs the command with args until the returned stop is called;
// it returns the URL the command serves at. stop fails the test if run
// fails or does not return within 20s.
func start(t *testing.T, args ...string) (base string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw)
		pw.Close()
		errc <- err
	}()
	urls := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			t.Log(sc.Text())
			if rest, ok := strings.CutPrefix(sc.Text(), "serving the kapi example API at "); ok {
				urls <- strings.Fields(rest)[0]
			}
		}
	}()
	select {
	case base = <-urls:
	case err := <-errc:
		cancel()
		<-scanned
		t.Fatalf("run: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		<-scanned // no t.Log after the test
		t.Fatal("not serving within 30s")
	}
	return base, func() {
		t.Helper()
		cancel()
		defer func() { <-scanned }()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("run after cancel: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("run did not return within 20s of cancel")
		}
	}
}

// TestParse checks the flag rules.
func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"etcd servers", []string{"--etcd-servers", "http://127.0.0.1:2379,http://127.0.0.1:22379"}, ""},
		{"embedded", []string{"--embedded-etcd", "/tmp/x"}, ""},
		{"no etcd", nil, "one of --etcd-servers and --embedded-etcd is required"},
		{"cert without key", []string{"--etcd-servers", "https://e:2379", "--etcd-certfile", "c.pem"}, "go together"},
		{"stray argument", []string{"--etcd-servers", "http://e:2379", "extra"}, "unexpected arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(tc.args, io.Discard)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("got %v; want no error", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("got %v; want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
