package controller_test

import (
	"io"
	"net/url"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// envtest's API as suites reach into it — Environment's fields with their
// types, the methods with their signatures, the ControlPlane's parts —
// written once and compiled against both envtests (`go vet -tags
// crenvtest`): a field or method kapi/envtest lacked, or typed
// differently, would fail the build. (envtest's deprecated members —
// APIServer.URL, SecurePort, InsecureServing, Args, Etcd.Args,
// ControlPlane.APIURL, RESTClientConfig — exist in both too, and are
// left out here as staticcheck would flag them.)
var (
	_ func(*Environment) (*rest.Config, error)                            = (*Environment).Start
	_ func(*Environment) error                                            = (*Environment).Stop
	_ func(*Environment, User, *rest.Config) (*AuthenticatedUser, error)  = (*Environment).AddUser
	_ func(*AuthenticatedUser) *rest.Config                               = (*AuthenticatedUser).Config
	_ func(*AuthenticatedUser) ([]byte, error)                            = (*AuthenticatedUser).KubeConfig
	_ func(*ControlPlane) error                                           = (*ControlPlane).Start
	_ func(*ControlPlane) error                                           = (*ControlPlane).Stop
	_ func(*ControlPlane) *APIServer                                      = (*ControlPlane).GetAPIServer
	_ func(*ControlPlane, User, *rest.Config) (*AuthenticatedUser, error) = (*ControlPlane).AddUser
	_ func(*APIServer) *Arguments                                         = (*APIServer).Configure
	_ func(*APIServer) error                                              = (*APIServer).Start
	_ func(*APIServer) error                                              = (*APIServer).Stop
	_ func(*Etcd) *Arguments                                              = (*Etcd).Configure
	_                                                                     = environmentFields
)

// environmentFields sets every field of Environment and of the parts of
// its ControlPlane suites configure, with envtest's types.
func environmentFields(e *Environment) {
	existing := false
	e.ControlPlane = ControlPlane{APIServer: &APIServer{}, Etcd: &Etcd{}, KubectlPath: ""}
	api := e.ControlPlane.APIServer
	api.SecureServing = SecureServing{ListenAddr: ListenAddr{Address: "127.0.0.1", Port: "0"}, CA: []byte(nil), Authn: nil}
	api.Configure().Set("authorization-mode", "RBAC")
	api.Path, api.CertDir, api.EtcdURL = "", "", (*url.URL)(nil)
	api.StartTimeout, api.StopTimeout = time.Second, time.Second
	api.Out, api.Err = io.Writer(nil), io.Writer(nil)
	_ = api.SecureServing.HostPort()
	etcd := e.ControlPlane.Etcd
	etcd.URL, etcd.Path, etcd.DataDir = (*url.URL)(nil), "", ""
	etcd.StartTimeout, etcd.StopTimeout, etcd.Out, etcd.Err = time.Second, time.Second, io.Writer(nil), io.Writer(nil)

	e.Scheme = (*runtime.Scheme)(nil)
	e.Config = (*rest.Config)(nil)
	e.KubeConfig = []byte(nil)
	e.CRDInstallOptions = CRDInstallOptions{Paths: []string{}, ErrorIfPathMissing: true, MaxTime: time.Second, PollInterval: time.Second, CleanUpAfterUse: true}
	e.WebhookInstallOptions.LocalServingHost = ""
	e.WebhookInstallOptions.LocalServingPort = 0
	e.WebhookInstallOptions.LocalServingCertDir = ""
	e.ErrorIfCRDPathMissing = true
	e.CRDs = []*apiextensionsv1.CustomResourceDefinition(nil)
	e.CRDDirectoryPaths = []string(nil)
	e.DownloadBinaryAssets = false
	e.DownloadBinaryAssetsVersion = ""
	e.DownloadBinaryAssetsIndexURL = ""
	e.BinaryAssetsDirectory = ""
	e.UseExistingCluster = &existing
	e.ControlPlaneStartTimeout = time.Second
	e.ControlPlaneStopTimeout = time.Second
	e.AttachControlPlaneOutput = false
}
