package durable_test

import (
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/durable"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

// TestConformance runs the shared storage suite, linearizability check
// included, against a durable store in a fresh directory per subtest.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		s, err := durable.Open(t.TempDir(), durable.Options{Wait: 100 * time.Millisecond})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	})
}
