package kubeapiserver

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options say how to run kube-apiserver. EtcdServers is required.
type Options struct {
	// Binary is the kube-apiserver to run; when empty Start builds one
	// with Build into BinDir.
	Binary string
	// BinDir is Build's directory when Binary is empty (DefaultBinDir
	// when empty too).
	BinDir string
	// EtcdServers is --etcd-servers.
	EtcdServers []string
	// EtcdPrefix is --etcd-prefix; when empty Start picks one of its own,
	// so that several servers can share one etcd.
	EtcdPrefix string
	// TokenAuthFile holds lines of a --token-auth-file
	// ("token,user,uid,\"group1,group2\""); Start adds a line of its own
	// for the admin (AdminToken).
	TokenAuthFile string
	// AuthorizationMode is --authorization-mode; RBAC when empty, as
	// envtest runs it.
	AuthorizationMode string
	// Args are more flags, appended after Start's own ("--name=value"; a
	// flag given twice takes its last value).
	Args []string
	// StartTimeout bounds the wait for /readyz and the OpenAPI v3
	// documents (60 s when zero).
	StartTimeout time.Duration
	// FrontProxy sets kube-aggregator up to proxy aggregated APIs: a
	// request-header CA, a proxy client certificate it signs
	// (FrontProxyClientName) and the --requestheader-* and
	// --proxy-client-* flags; Server.FrontProxyCA is the CA.
	FrontProxy bool
}

// ErrNoEtcd is returned by Start when Options.EtcdServers is empty.
var ErrNoEtcd = errors.New("kubeapiserver: Options.EtcdServers is empty")

// ErrNotReady is returned by Start when kube-apiserver did not become
// ready in time, or ended before it did.
var ErrNotReady = errors.New("kubeapiserver: not ready")

// Server is a running kube-apiserver. Its fields are read-only.
type Server struct {
	// URL is https://127.0.0.1:PORT.
	URL string
	// CA is the PEM of the CA that signed the serving certificate.
	CA []byte
	// AdminToken is a bearer token of user kapi-reference-admin in group
	// system:masters.
	AdminToken string
	// Dir holds its credentials and its log (Log), removed by Stop.
	Dir string
	// Args are the flags it runs with.
	Args []string
	// FrontProxyCA is the PEM of the CA of kube-aggregator's proxy client
	// certificate, with Options.FrontProxy: what an aggregated server's
	// --requestheader-client-ca-file holds.
	FrontProxyCA []byte

	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{} // closed once the process has been waited for
	err    error         // the process's exit, set before exited closes
	once   sync.Once
}

// Log is the path of the file kube-apiserver writes its output to.
func (s *Server) Log() string { return filepath.Join(s.Dir, "kube-apiserver.log") }

// Start builds kube-apiserver unless opts.Binary names one, starts it and
// waits until /readyz answers ok and every OpenAPI v3 document is served. ctx bounds the build and the wait; the
// server then runs until Stop. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if len(opts.EtcdServers) == 0 {
		return nil, ErrNoEtcd
	}
	bin := opts.Binary
	if bin == "" {
		var err error
		if bin, err = Build(ctx, opts.BinDir); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "kapi-kube-apiserver-")
	if err != nil {
		return nil, err
	}
	s, err := start(ctx, bin, dir, opts)
	if err != nil {
		if s != nil {
			s.Stop()
		} else {
			_ = os.RemoveAll(dir)
		}
		return nil, err
	}
	return s, nil
}

func start(ctx context.Context, bin, dir string, opts Options) (*Server, error) {
	f, err := writeCredentials(dir)
	if err != nil {
		return nil, err
	}
	admin, err := randomToken()
	if err != nil {
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	lines := admin + `,kapi-reference-admin,kapi-reference-admin,"system:masters"` + "\n" + opts.TokenAuthFile
	if err := os.WriteFile(tokens, []byte(lines), 0o600); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	prefix := opts.EtcdPrefix
	if prefix == "" {
		prefix = "/kapi-reference/" + filepath.Base(dir)
	}
	mode := opts.AuthorizationMode
	if mode == "" {
		mode = "RBAC"
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	// envtest's defaults (controller-runtime's controlplane.APIServer),
	// with the serving certificate given rather than generated.
	args := []string{
		"--advertise-address=127.0.0.1",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + dir,
		"--tls-cert-file=" + f.servingCert,
		"--tls-private-key-file=" + f.servingKey,
		"--etcd-servers=" + strings.Join(opts.EtcdServers, ","),
		"--etcd-prefix=" + prefix,
		"--service-cluster-ip-range=10.0.0.0/24",
		// kube-apiserver refuses to publish a loopback address in the
		// kubernetes Service's endpoints; there are no Services' clients.
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		// No controller manager makes the default service accounts the
		// ServiceAccount admission plugin would wait for.
		"--disable-admission-plugins=ServiceAccount",
		"--authorization-mode=" + mode,
		"--token-auth-file=" + tokens,
		"--service-account-issuer=" + url + "/",
		"--service-account-key-file=" + f.saPub,
		"--service-account-signing-key-file=" + f.saKey,
	}
	var frontProxyCA []byte
	if opts.FrontProxy {
		fp, ca, err := frontProxyArgs(dir)
		if err != nil {
			return nil, err
		}
		args, frontProxyCA = append(args, fp...), ca
	}
	args = append(args, opts.Args...)
	log, err := os.Create(filepath.Join(dir, "kube-apiserver.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, err
	}
	s := &Server{URL: url, CA: f.caPEM, AdminToken: admin, Dir: dir, Args: args, FrontProxyCA: frontProxyCA, cmd: cmd, log: log, exited: make(chan struct{})}
	// Owned by s: ends when the process does; Stop waits for it.
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	if err := s.waitReady(ctx, timeout); err != nil {
		return s, err
	}
	return s, nil
}

// waitReady polls /readyz as the admin until it answers 200, then
// /openapi/v3 and every group-version document it lists: kube-apiserver
// reports ready while its OpenAPI v3 documents still answer 503 for a
// while, and a reference that answers 503 is no reference to compare with.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CA)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	index, err := s.poll(ctx, client, "/readyz", timeout)
	if err == nil {
		index, err = s.poll(ctx, client, "/openapi/v3", timeout)
	}
	if err != nil {
		return err
	}
	var doc struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(index, &doc); err != nil {
		return fmt.Errorf("%w: /openapi/v3: %v", ErrNotReady, err)
	}
	for _, p := range doc.Paths {
		if _, err := s.poll(ctx, client, p.ServerRelativeURL, timeout); err != nil {
			return err
		}
	}
	return nil
}

// poll GETs path as the admin every 100 ms until it answers 200, and
// returns the body.
func (s *Server) poll(ctx context.Context, client *http.Client, path string, timeout time.Duration) ([]byte, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := "no answer"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+s.AdminToken)
		if resp, err := client.Do(req); err != nil {
			last = err.Error()
		} else {
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && err == nil {
				return body, nil
			}
			last = resp.Status
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("%w: kube-apiserver exited (%v); the end of %s:\n%s", ErrNotReady, s.err, s.Log(), s.tail())
		case <-ctx.Done():
			return nil, fmt.Errorf("%w after %s (%s %s): %v; the end of %s:\n%s", ErrNotReady, timeout, path, last, ctx.Err(), s.Log(), s.tail())
		case <-tick.C:
		}
	}
}

// tail is the end of the server's log.
func (s *Server) tail() string {
	b, _ := os.ReadFile(s.Log())
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// Stop ends kube-apiserver (SIGTERM, then SIGKILL after 20 s), waits for
// it and removes Dir. It may be called more than once.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		_ = s.log.Close()
		_ = os.RemoveAll(s.Dir)
	})
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// freePort asks the kernel for a free port of 127.0.0.1 (as envtest does:
// another process may take it before kube-apiserver binds it, rarely).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
