package envtest

import (
	"encoding/json"
	"fmt"

	"github.com/kapi-dev/kapi/schema"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// readCRDs reads opts.Paths as envtest does (ReadCRDFiles: YAML and JSON
// files, a missing path an error only with opts.ErrorIfPathMissing) and
// returns every CRD of opts.CRDs and the paths, and each as kapi's
// schema.CRD, which the API server registers before it serves.
//
// This is the one place that changes when kapi serves
// apiextensions.k8s.io CustomResourceDefinitions through the API: Start
// then calls InstallCRDs (create through the API, wait for discovery), as
// it does for an existing cluster, and this function goes.
func readCRDs(opts CRDInstallOptions) ([]*apiextensionsv1.CustomResourceDefinition, []schema.CRD, error) {
	opts.CRDs = append([]*apiextensionsv1.CustomResourceDefinition(nil), opts.CRDs...)
	if err := ReadCRDFiles(&opts); err != nil {
		return nil, nil, fmt.Errorf("unable to read CRD files: %w", err)
	}
	out := make([]schema.CRD, 0, len(opts.CRDs))
	for _, c := range opts.CRDs {
		c = c.DeepCopy()
		c.APIVersion, c.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
		b, err := json.Marshal(c)
		if err != nil {
			return nil, nil, err
		}
		crds, err := schema.ParseCRDs(b)
		if err != nil {
			return nil, nil, fmt.Errorf("CRD %s: %w", c.Name, err)
		}
		out = append(out, crds...)
	}
	return opts.CRDs, out, nil
}
