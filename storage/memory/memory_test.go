package memory_test

import (
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

// TestConformance runs the shared storage suite against the memory store.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		s := memory.New(memory.Options{Wait: 100 * time.Millisecond})
		t.Cleanup(s.Close)
		return s
	})
}
