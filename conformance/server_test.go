package conformance

import (
	"net/http"
	"testing"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
)

// newServerHandler builds the example server on a fresh, empty store of
// the backend KAPI_CONFORMANCE_STORAGE selects (see withStorage).
func newServerHandler(t *testing.T) http.Handler {
	t.Helper()
	reg, err := server.New(withStorage(t, server.Options{}))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	return reg
}
