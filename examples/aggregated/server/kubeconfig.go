package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// kubeconfig is the part of a kubeconfig file Delegate reads: the
// current context's cluster and user.
type kubeconfig struct {
	CurrentContext string `json:"current-context"`
	Contexts       []struct {
		Name    string
		Context struct{ Cluster, User string }
	}
	Clusters []struct {
		Name    string
		Cluster struct {
			Server                   string
			CertificateAuthority     string `json:"certificate-authority"`
			CertificateAuthorityData string `json:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
		}
	}
	Users []struct {
		Name string
		User struct {
			Token                 string
			TokenFile             string `json:"tokenFile"`
			ClientCertificate     string `json:"client-certificate"`
			ClientCertificateData string `json:"client-certificate-data"`
			ClientKey             string `json:"client-key"`
			ClientKeyData         string `json:"client-key-data"`
		}
	}
}

// DelegateFromKubeconfig reads --authentication-kubeconfig: the main API
// server of the current context, trusted as its cluster says, with its
// user's token or client certificate. An empty path is the in-cluster
// configuration (the pod's service account), as kube's delegation
// defaults to.
func DelegateFromKubeconfig(path string) (Delegate, error) {
	if path == "" {
		return inCluster()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Delegate{}, err
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return Delegate{}, fmt.Errorf("%s: %w", path, err)
	}
	var clusterName, userName string
	for _, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			clusterName, userName = c.Context.Cluster, c.Context.User
		}
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	d := Delegate{}
	for _, c := range kc.Clusters {
		if c.Name != clusterName {
			continue
		}
		d.URL = c.Cluster.Server
		tc.InsecureSkipVerify = c.Cluster.InsecureSkipTLSVerify
		ca, err := dataOrFile(c.Cluster.CertificateAuthorityData, c.Cluster.CertificateAuthority)
		if err != nil {
			return Delegate{}, err
		}
		if ca != nil {
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(ca) {
				return Delegate{}, fmt.Errorf("%s: cluster %s: no PEM certificate in its certificate authority", path, clusterName)
			}
		}
	}
	if d.URL == "" {
		return Delegate{}, fmt.Errorf("%s: the current context %q names no cluster with a server", path, kc.CurrentContext)
	}
	token := ""
	for _, u := range kc.Users {
		if u.Name != userName {
			continue
		}
		token = u.User.Token
		if u.User.TokenFile != "" {
			t, err := os.ReadFile(u.User.TokenFile)
			if err != nil {
				return Delegate{}, err
			}
			token = strings.TrimSpace(string(t))
		}
		cert, err := dataOrFile(u.User.ClientCertificateData, u.User.ClientCertificate)
		if err != nil {
			return Delegate{}, err
		}
		key, err := dataOrFile(u.User.ClientKeyData, u.User.ClientKey)
		if err != nil {
			return Delegate{}, err
		}
		if cert != nil {
			pair, err := tls.X509KeyPair(cert, key)
			if err != nil {
				return Delegate{}, fmt.Errorf("%s: user %s: %w", path, userName, err)
			}
			tc.Certificates = []tls.Certificate{pair}
		}
	}
	d.Client = client(tc, token)
	return d, nil
}

func inCluster() (Delegate, error) {
	const dir = "/var/run/secrets/kubernetes.io/serviceaccount/"
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return Delegate{}, errors.New("no --authentication-kubeconfig and not in a cluster (KUBERNETES_SERVICE_HOST unset)")
	}
	token, err := os.ReadFile(dir + "token")
	if err != nil {
		return Delegate{}, err
	}
	ca, err := os.ReadFile(dir + "ca.crt")
	if err != nil {
		return Delegate{}, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return Delegate{URL: "https://" + net.JoinHostPort(host, port), Client: client(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, strings.TrimSpace(string(token)))}, nil
}

func dataOrFile(data, file string) ([]byte, error) {
	if data != "" {
		return base64.StdEncoding.DecodeString(data)
	}
	if file != "" {
		return os.ReadFile(file)
	}
	return nil, nil
}

// client is an HTTP client with tc that sends token as a bearer token
// (when set).
func client(tc *tls.Config, token string) *http.Client {
	var rt http.RoundTripper = &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true, Proxy: http.ProxyFromEnvironment}
	if token != "" {
		rt = bearer{token: token, rt: rt}
	}
	return &http.Client{Transport: rt}
}

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(req)
}

// BearerClient is an HTTP client trusting the CAs of caPEM that presents
// token: the main server's client when a program has a token at hand.
func BearerClient(caPEM []byte, token string) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return client(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, token)
}
