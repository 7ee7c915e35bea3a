package server_test

import (
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/examples/aggregated/server"
)

// TestDelegateFromKubeconfig reads the current context's server, CA and
// token; the client it makes trusts the CA and sends the token.
func TestDelegateFromKubeconfig(t *testing.T) {
	var gotAuth string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { gotAuth = req.Header.Get("Authorization") }))
	srv.StartTLS()
	defer srv.Close()
	caPEM := pemOf(t, srv.Certificate().Raw)
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o600)
		return p
	}
	good := write("good", `apiVersion: v1
kind: Config
current-context: main
contexts:
- name: other
  context: {cluster: nowhere, user: nobody}
- name: main
  context: {cluster: main, user: delegator}
clusters:
- name: main
  cluster:
    server: `+srv.URL+`
    certificate-authority-data: `+base64.StdEncoding.EncodeToString(caPEM)+`
users:
- name: delegator
  user: {token: sekret}
`)
	tests := []struct {
		name, path, wantErr string
	}{
		{"token and CA data", good, ""},
		{"no such context's cluster", write("bad", "current-context: none\n"), `names no cluster with a server`},
		{"not YAML", write("junk", "{{{"), "junk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := server.DelegateFromKubeconfig(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("got %v; want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp, err := d.Client.Get(d.URL + "/x")
			if err != nil {
				t.Fatalf("the delegate's client: %v", err)
			}
			resp.Body.Close()
			if d.URL != srv.URL || gotAuth != "Bearer sekret" {
				t.Errorf("URL %s, Authorization %q; want %s, Bearer sekret", d.URL, gotAuth, srv.URL)
			}
		})
	}
}

func pemOf(t *testing.T, der []byte) []byte {
	t.Helper()
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
