package envtest

import (
	"fmt"
	"os"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The environment variables controller-runtime's envtest reads, read here
// with the same meaning.
const (
	envUseExistingCluster = "USE_EXISTING_CLUSTER"
	envStartTimeout       = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT"
	envStopTimeout        = "KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT"
	envAttachOutput       = "KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT"

	// envNoGarbageCollector is kapi's: Environment.NoGarbageCollector for
	// a suite run unchanged.
	envNoGarbageCollector = "KAPI_ENVTEST_NO_GARBAGE_COLLECTOR"

	// StartTimeout and StopTimeout are envtest's, in seconds.
	StartTimeout = 60
	StopTimeout  = 60

	defaultStartTimeout = 20 * time.Second
	defaultStopTimeout  = 20 * time.Second
)

// The types controller-runtime's envtest exports that carry over as they
// are: options, users, arguments and listen addresses.
type (
	// CRDInstallOptions are the options for installing CRDs.
	CRDInstallOptions = crenvtest.CRDInstallOptions
	// WebhookInstallOptions are the options for installing webhooks.
	WebhookInstallOptions = crenvtest.WebhookInstallOptions
	// User is a user to provision: a name and groups.
	User = crenvtest.User
	// ListenAddr is a host and port to listen on.
	ListenAddr = crenvtest.ListenAddr
	// Arguments are an API server's flags (see APIServer.Configure).
	Arguments = crenvtest.Arguments
	// Arg is one flag with one or more values.
	Arg = crenvtest.Arg
)

// Functions of controller-runtime's envtest that work against any API
// server's rest.Config, this one's included.
var (
	// EmptyArguments makes an empty set of flags.
	EmptyArguments = crenvtest.EmptyArguments
	// InstallCRDs creates CRDs through the API and waits for discovery.
	InstallCRDs = crenvtest.InstallCRDs
	// ReadCRDFiles reads options.Paths into options.CRDs.
	ReadCRDFiles = crenvtest.ReadCRDFiles
	// CreateCRDs creates CRDs through the API.
	CreateCRDs = crenvtest.CreateCRDs
	// WaitForCRDs waits for CRDs to be served.
	WaitForCRDs = crenvtest.WaitForCRDs
	// UninstallCRDs deletes CRDs through the API.
	UninstallCRDs = crenvtest.UninstallCRDs
	// WaitForWebhooks waits for webhook configurations to be served.
	WaitForWebhooks = crenvtest.WaitForWebhooks
	// SetupEnvtestDefaultBinaryAssetsDirectory is setup-envtest's binary
	// directory (kapi needs no binaries; it is here for suites that set
	// BinaryAssetsDirectory with it).
	SetupEnvtestDefaultBinaryAssetsDirectory = crenvtest.SetupEnvtestDefaultBinaryAssetsDirectory
)

// Environment is a test API server and the CRDs and webhooks installed
// into it: controller-runtime's
// envtest.Environment, field for field.
type Environment struct {
	// ControlPlane is the API server (and an Etcd kept for its fields:
	// kapi stores in memory).
	ControlPlane ControlPlane

	// Scheme is used to tell whether conversion webhooks apply to a CRD;
	// nil is client-go's scheme.Scheme.
	Scheme *runtime.Scheme

	// Config talks to the API server as the admin (system:masters); set
	// by Start unless UseExistingCluster and already set.
	Config *rest.Config

	// KubeConfig is a kubeconfig equivalent to Config; set by Start when
	// empty.
	KubeConfig []byte

	// CRDInstallOptions are the options for installing CRDs.
	CRDInstallOptions CRDInstallOptions

	// WebhookInstallOptions are the options for installing webhooks: as
	// envtest, Start creates the configurations through the API pointing
	// at LocalServingHost:LocalServingPort with the generated CA, and kapi
	// calls the test's webhook server there over TLS.
	WebhookInstallOptions WebhookInstallOptions

	// ErrorIfCRDPathMissing makes a CRD path that does not exist an
	// error of Start instead of being skipped.
	ErrorIfCRDPathMissing bool

	// CRDs are installed, merged with CRDInstallOptions.CRDs by name;
	// after Start, every CRD installed.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	// CRDDirectoryPaths are files and directories of CRD manifests (YAML
	// or JSON), merged with CRDInstallOptions.Paths.
	CRDDirectoryPaths []string

	// DownloadBinaryAssets, DownloadBinaryAssetsVersion,
	// DownloadBinaryAssetsIndexURL and BinaryAssetsDirectory are accepted
	// and unused: kapi runs in-process, there is nothing to download or
	// find.
	DownloadBinaryAssets         bool
	DownloadBinaryAssetsVersion  string
	DownloadBinaryAssetsIndexURL string
	BinaryAssetsDirectory        string

	// UseExistingCluster, as in envtest (or USE_EXISTING_CLUSTER=true),
	// starts no server: Config is loaded with controller-runtime's config
	// loading and CRDs are installed through that cluster's API.
	UseExistingCluster *bool

	// ControlPlaneStartTimeout and ControlPlaneStopTimeout bound starting
	// and stopping (defaults: KUBEBUILDER_CONTROLPLANE_START_TIMEOUT and
	// _STOP_TIMEOUT, else 20s). Start takes milliseconds; Stop bounds how
	// long it waits for requests in flight.
	ControlPlaneStartTimeout time.Duration
	ControlPlaneStopTimeout  time.Duration

	// AttachControlPlaneOutput (or
	// KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT=true) sends the server's
	// logs to APIServer.Err (default os.Stderr).
	AttachControlPlaneOutput bool

	// InProcess sets ControlPlane.APIServer.InProcess: clients reach the
	// server without a socket. Not in envtest.
	InProcess bool

	// NoGarbageCollector (or KAPI_ENVTEST_NO_GARBAGE_COLLECTOR=true) sets
	// ControlPlane.APIServer.NoGarbageCollector: deleting an owner leaves
	// its dependents, as on controller-runtime's envtest, which runs no
	// kube-controller-manager. Not in envtest.
	NoGarbageCollector bool
}

// Start starts the API server (unless UseExistingCluster), installs the
// CRDs and returns the admin's rest.Config, also in te.Config.
func (te *Environment) Start() (*rest.Config, error) {
	if te.Scheme == nil {
		te.Scheme = scheme.Scheme
	}
	if te.CRDInstallOptions.Scheme == nil {
		te.CRDInstallOptions.Scheme = te.Scheme
	}
	te.CRDInstallOptions.CRDs = mergeCRDs(te.CRDInstallOptions.CRDs, te.CRDs)
	te.CRDInstallOptions.Paths = mergePaths(te.CRDInstallOptions.Paths, te.CRDDirectoryPaths)
	te.CRDInstallOptions.ErrorIfPathMissing = te.ErrorIfCRDPathMissing

	existing := te.useExistingCluster()
	if existing {
		if te.Config == nil {
			cfg, err := config.GetConfig()
			if err != nil {
				return nil, fmt.Errorf("unable to get configuration for existing cluster: %w", err)
			}
			te.Config = cfg
		}
	} else {
		if err := te.defaultTimeouts(); err != nil {
			return nil, fmt.Errorf("failed to default controlplane timeouts: %w", err)
		}
		api := te.ControlPlane.GetAPIServer()
		api.StartTimeout, api.StopTimeout = te.ControlPlaneStartTimeout, te.ControlPlaneStopTimeout
		if te.InProcess {
			api.InProcess = true
		}
		if te.NoGarbageCollector || strings.ToLower(os.Getenv(envNoGarbageCollector)) == "true" {
			api.NoGarbageCollector = true
		}
		if os.Getenv(envAttachOutput) == "true" {
			te.AttachControlPlaneOutput = true
		}
		if te.AttachControlPlaneOutput && api.Err == nil {
			api.Err = os.Stderr
		}
		if err := te.ControlPlane.Start(); err != nil {
			return nil, fmt.Errorf("unable to start control plane itself: %w", err)
		}
		admin, err := te.ControlPlane.AddUser(User{Name: "admin", Groups: []string{"system:masters"}},
			&rest.Config{QPS: 1000, Burst: 2000})
		if err != nil {
			return nil, fmt.Errorf("unable to provision admin user: %w", err)
		}
		te.Config = admin.Config()
	}
	if len(te.KubeConfig) == 0 {
		kc, err := KubeConfigFromREST(te.Config)
		if err != nil {
			return nil, fmt.Errorf("unable to set KubeConfig field: %w", err)
		}
		te.KubeConfig = kc
	}

	if err := te.WebhookInstallOptions.PrepWithoutInstalling(); err != nil {
		return nil, err
	}
	te.CRDInstallOptions.WebhookOptions = te.WebhookInstallOptions
	// As envtest, on kapi as on an existing cluster: the CRDs are read,
	// multi-version CRDs whose kinds are convertible in Scheme get a
	// conversion webhook at LocalServingHost:Port, and they are created
	// through the API and waited for in discovery.
	// With no CRD to read or create, InstallCRDs does nothing but walk
	// every type of Scheme for convertibles (a third of Start's CPU time
	// for the default scheme): it is skipped.
	if len(te.CRDInstallOptions.Paths) > 0 || len(te.CRDInstallOptions.CRDs) > 0 {
		crds, err := InstallCRDs(te.Config, te.CRDInstallOptions)
		if err != nil {
			return te.Config, fmt.Errorf("unable to install CRDs onto control plane: %w", err)
		}
		te.CRDs = crds
	}

	// As envtest: the configurations get the serving CA as caBundle and
	// LocalServingHost:Port as URL, are created through the API, and are
	// waited for. kapi then calls the test's webhook server over TLS.
	if err := te.WebhookInstallOptions.Install(te.Config); err != nil {
		return nil, fmt.Errorf("unable to install webhooks onto control plane: %w", err)
	}
	return te.Config, nil
}

// Stop stops the API server and frees what Start made: the listener and
// every connection, the registry's and store's goroutines, the webhook
// certificate directory. With CRDInstallOptions.CleanUpAfterUse on an
// existing cluster, the CRDs are deleted first.
func (te *Environment) Stop() error {
	if te.CRDInstallOptions.CleanUpAfterUse && te.useExistingCluster() {
		if err := UninstallCRDs(te.Config, te.CRDInstallOptions); err != nil {
			return err
		}
	}
	if err := te.WebhookInstallOptions.Cleanup(); err != nil {
		return err
	}
	if te.useExistingCluster() {
		return nil
	}
	return te.ControlPlane.Stop()
}

// AddUser provisions a user with the groups given; its Config
// authenticates as it (baseConfig's other settings kept). It is
// ControlPlane.AddUser.
func (te *Environment) AddUser(user User, baseConfig *rest.Config) (*AuthenticatedUser, error) {
	return te.ControlPlane.AddUser(user, baseConfig)
}

// InjectFault puts a fault in force on the API server (see Fault); not
// in envtest. It is ControlPlane.APIServer.InjectFault.
func (te *Environment) InjectFault(f Fault) (*Injection, error) {
	return te.ControlPlane.GetAPIServer().InjectFault(f)
}

// Requests is the API server's request log: every request served since
// Start (or ResetRequests), in arrival order. Not in envtest.
func (te *Environment) Requests() []Request { return te.ControlPlane.GetAPIServer().Requests() }

// ResetRequests empties the request log.
func (te *Environment) ResetRequests() { te.ControlPlane.GetAPIServer().ResetRequests() }

// LogRequestsOnFailure prints the request log with t.Logf when t has
// failed by its end (t.Cleanup), one request a line. Not in envtest.
func (te *Environment) LogRequestsOnFailure(t TB) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		reqs := te.Requests()
		var b strings.Builder
		for _, r := range reqs {
			b.WriteString("\n  " + r.String())
		}
		t.Logf("kapi/envtest: the API server served %d requests:%s", len(reqs), b.String())
	})
}

func (te *Environment) useExistingCluster() bool {
	if te.UseExistingCluster == nil {
		return strings.ToLower(os.Getenv(envUseExistingCluster)) == "true"
	}
	return *te.UseExistingCluster
}

func (te *Environment) defaultTimeouts() error {
	for _, d := range []struct {
		field *time.Duration
		env   string
		def   time.Duration
	}{
		{&te.ControlPlaneStartTimeout, envStartTimeout, defaultStartTimeout},
		{&te.ControlPlaneStopTimeout, envStopTimeout, defaultStopTimeout},
	} {
		if *d.field != 0 {
			continue
		}
		*d.field = d.def
		if v := os.Getenv(d.env); v != "" {
			t, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s=%q: %w", d.env, v, err)
			}
			*d.field = t
		}
	}
	return nil
}

// mergePaths merges two lists of paths, each path once, in order.
func mergePaths(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range append(append([]string(nil), a...), b...) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// mergeCRDs merges two lists of CRDs by name, b's winning; the CRDs are
// copies.
func mergeCRDs(a, b []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
	index := map[string]int{}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, c := range append(append([]*apiextensionsv1.CustomResourceDefinition(nil), a...), b...) {
		if i, ok := index[c.Name]; ok {
			out[i] = c.DeepCopy()
			continue
		}
		index[c.Name] = len(out)
		out = append(out, c.DeepCopy())
	}
	return out
}
