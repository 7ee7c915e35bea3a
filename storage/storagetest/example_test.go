package storagetest_test

import (
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

// conformance is what a backend's test looks like: it hands Run a
// constructor for fresh stores that wait only briefly for future revisions.
// (A backend names it TestConformance; an example file cannot hold tests.)
func conformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		s := memory.New(memory.Options{Wait: 100 * time.Millisecond})
		t.Cleanup(s.Close)
		return s
	})
}

// The suite runs from a backend's own tests; see conformance above.
func Example() {
	_ = conformance
}
