package envtest_test

import (
	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func init() {
	// The managers' logs are not the tests' subject; without a logger,
	// controller-runtime prints a warning with a stack after 30 s.
	ctrllog.SetLogger(logr.Discard())
}
