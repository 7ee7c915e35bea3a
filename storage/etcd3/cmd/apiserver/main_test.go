package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRun starts the command with an embedded etcd, creates a configmap
// and reads it back, then stops it.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	dir := t.TempDir()
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"--embedded-etcd", dir, "--embedded-etcd-addr", "127.0.0.1:0", "--addr", "127.0.0.1:0"}, pw)
		pw.Close()
		errc <- err
	}()
	urls := make(chan string, 1)
	scanned := make(chan struct{})
	defer func() { cancel(); <-scanned }() // no t.Log after the test
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
	var base string
	select {
	case base = <-urls:
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("not serving within 30s")
	}

	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"hello"},"data":{"a":"b"}}`
	resp, err := http.Post(base+"/api/v1/namespaces/default/configmaps", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: got %d; want 201", resp.StatusCode)
	}
	resp, err = http.Get(base + "/api/v1/namespaces/default/configmaps/hello")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
		Data     map[string]string                `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || got.Data["a"] != "b" || got.Metadata.ResourceVersion == "" {
		t.Fatalf("get: got %d %+v (%v); want 200 with data a=b and a resourceVersion", resp.StatusCode, got, err)
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return within 20s of cancel")
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
