package envtest_test

import (
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UseExistingCluster starts no server: the Environment talks to the
// cluster its Config names (here another Environment), and its Stop
// leaves that cluster running.
func TestUseExistingCluster(t *testing.T) {
	t.Parallel()
	cluster := &envtest.Environment{}
	cfg := start(t, cluster)
	existing := true
	e := &envtest.Environment{UseExistingCluster: &existing, Config: cfg}
	got, err := e.Start()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got != cfg || e.ControlPlane.APIServer != nil {
		t.Fatalf("Start returned %p (want the given config %p) and started a server: %v", got, cfg, e.ControlPlane.APIServer != nil)
	}
	if len(e.KubeConfig) == 0 {
		t.Fatalf("KubeConfig not set")
	}
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	c := newClient(t, cfg)
	if err := c.Create(ctxFor(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "still-there"}}); err != nil {
		t.Fatalf("the existing cluster after Stop: %v", err)
	}
	if err := c.Get(ctxFor(t), client.ObjectKey{Namespace: "default", Name: "still-there"}, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
}

// The start and stop timeouts come from the fields, else from envtest's
// environment variables, else 20s; a malformed variable is an error.
// Not parallel: it sets environment variables.
func TestTimeouts(t *testing.T) {
	tests := []struct {
		name              string
		env               map[string]string
		start, stop       time.Duration // the fields before Start
		wantStart, wantSt time.Duration
		wantErr           bool
	}{
		{name: "defaults", wantStart: 20 * time.Second, wantSt: 20 * time.Second},
		{name: "fields", start: time.Second, stop: 2 * time.Second, wantStart: time.Second, wantSt: 2 * time.Second},
		{name: "variables", env: map[string]string{"KUBEBUILDER_CONTROLPLANE_START_TIMEOUT": "3s", "KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT": "4s"}, wantStart: 3 * time.Second, wantSt: 4 * time.Second},
		{name: "fields win", env: map[string]string{"KUBEBUILDER_CONTROLPLANE_START_TIMEOUT": "3s"}, start: time.Second, wantStart: time.Second, wantSt: 20 * time.Second},
		{name: "malformed", env: map[string]string{"KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT": "soon"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"KUBEBUILDER_CONTROLPLANE_START_TIMEOUT", "KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT"} {
				t.Setenv(k, tt.env[k])
			}
			e := &envtest.Environment{ControlPlaneStartTimeout: tt.start, ControlPlaneStopTimeout: tt.stop}
			_, err := e.Start()
			t.Cleanup(func() { _ = e.Stop() })
			if (err != nil) != tt.wantErr {
				t.Fatalf("Start: %v; want error: %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			api := e.ControlPlane.APIServer
			if e.ControlPlaneStartTimeout != tt.wantStart || e.ControlPlaneStopTimeout != tt.wantSt || api.StartTimeout != tt.wantStart || api.StopTimeout != tt.wantSt {
				t.Fatalf("timeouts: env %s/%s, APIServer %s/%s; want %s/%s", e.ControlPlaneStartTimeout, e.ControlPlaneStopTimeout, api.StartTimeout, api.StopTimeout, tt.wantStart, tt.wantSt)
			}
		})
	}
}
