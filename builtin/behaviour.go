package builtin

import "github.com/kapi-dev/kapi/registry"

// behaviours holds what the kinds' strategies share (the clusterIP
// allocator) and sets each kind's strategy, columns and generation.
type behaviours struct {
	opts Options
}

func newBehaviours(opts Options) (*behaviours, error) {
	return &behaviours{opts: opts}, nil
}

// generation lists the kinds whose writes keep metadata.generation, as
// kube's strategies do (pkg/registry/*/strategy.go).
var generation = map[string]bool{
	"pods": true, "podtemplates": true, "replicationcontrollers": true,
	"deployments": true, "statefulsets": true, "replicasets": true, "daemonsets": true,
	"jobs": true, "cronjobs": true, "horizontalpodautoscalers": true,
	"ingresses": true, "ingressclasses": true, "networkpolicies": true, "endpointslices": true,
	"poddisruptionbudgets": true, "priorityclasses": true,
}

func (b *behaviours) apply(k *kind, res *registry.Resource) {
	res.Generation = generation[k.Plural]
}
