package envtest_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// serverFrames mark a goroutine of the API server: the registry and its
// stages, the store, the watch fan-out, the HTTP server's connections.
var serverFrames = []string{
	"github.com/kapi-dev/kapi/registry",
	"github.com/kapi-dev/kapi/storage",
	"github.com/kapi-dev/kapi/watch",
	"net/http.(*conn).serve",
	"net/http.(*Server).Serve",
	"kapi/envtest.(*inProcess)",
}

// serverGoroutines returns the stacks of the goroutines of API servers.
func serverGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, f := range serverFrames {
			if strings.Contains(g, f) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// Stop leaves no goroutine of the server behind, even with a watch open,
// over TLS and in-process (the transport's handlers end too).
// Not parallel: it looks at every goroutine of the process.
func TestStopLeavesNoGoroutine(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		t.Run(map[bool]string{false: "tls", true: "in-process"}[inProcess], func(t *testing.T) {
			stopLeavesNoGoroutine(t, inProcess)
		})
	}
}

func stopLeavesNoGoroutine(t *testing.T, inProcess bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if g := waitNoServerGoroutine(ctx); len(g) > 0 {
		t.Fatalf("server goroutines of the tests before this one:\n%s", strings.Join(g, "\n\n"))
	}
	e := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}, InProcess: inProcess}
	cfg, err := e.Start()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if len(serverGoroutines()) == 0 {
		t.Fatal("no server goroutine found while serving: the check would see nothing")
	}
	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := waitNoServerGoroutine(ctx); len(left) > 0 {
		t.Fatalf("%d server goroutines left after Stop:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// waitNoServerGoroutine waits up to 10s for the server goroutines to end
// (a closed connection's goroutine ends once it sees the close) and
// returns those left.
func waitNoServerGoroutine(ctx context.Context) []string {
	var left []string
	_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		left = serverGoroutines()
		return len(left) == 0, nil
	})
	return left
}
