package builtin_test

import (
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage/memory"
)

func newRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	r, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := builtin.Register(r, builtin.Options{}); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRegisterEveryKind(t *testing.T) {
	newRegistry(t)
}

// Registries built at the same time share no state of the kinds' (run
// with -race).
func TestRegisterConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			newRegistry(t)
		}()
	}
	wg.Wait()
}
