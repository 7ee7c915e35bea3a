//go:build tools

package kuberaytest

// The modules the KubeRay suite needs, kept in go.mod (go mod tidy does
// not see the package the test copies and builds).
import (
	_ "github.com/jarcoal/httpmock"
	_ "github.com/kapi-dev/kapi/envtest"
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/gomega"
	_ "github.com/ray-project/kuberay/ray-operator/controllers/ray"
)
