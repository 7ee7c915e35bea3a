package builtin

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry"
)

// kind is one built-in kind as kube's discovery describes it, with the
// names of its schema and protobuf messages (zz_generated_kinds.go).
type kind struct {
	Group, Version, Kind, Plural, Singular string
	Namespaced                             bool
	ShortNames, Categories, Verbs          []string
	Subresources                           []subresource
	Schema, Message, ListMessage           string
}

// subresource is one subresource kube serves; its response kind is the
// resource's when Kind is "".
type subresource struct {
	Name, Group, Version, Kind string
	Verbs                      []string
}

func (k *kind) has(sub string) bool {
	return slices.ContainsFunc(k.Subresources, func(s subresource) bool { return s.Name == sub })
}

// Options configure the built-in kinds.
type Options struct {
	// ServiceCIDR is the range Services' clusterIPs are allocated from
	// (default "10.96.0.0/12", kubeadm's default for clusters).
	ServiceCIDR string
	// Tokens issues the tokens of serviceaccounts/NAME/token; nil serves
	// no token subresource. Give the same Tokens to the registry's
	// authenticator so that it accepts them.
	Tokens *Tokens
}

// Resources returns a new definition of every built-in kind, ready to
// Register: schema, protobuf message, discovery names, subresources,
// columns and strategy. Each call returns fresh definitions (and, for
// Services, a fresh clusterIP allocator).
func Resources(opts Options) ([]*registry.Resource, error) {
	b, err := newBehaviours(opts)
	if err != nil {
		return nil, err
	}
	return b.resources()
}

func (b *behaviours) resources() ([]*registry.Resource, error) {
	defs, err := definitions()
	if err != nil {
		return nil, err
	}
	out := make([]*registry.Resource, 0, len(kinds))
	for i := range kinds {
		k := &kinds[i]
		s, ok := defs[k.Schema]
		if !ok {
			return nil, fmt.Errorf("builtin: %s: no schema %s", k.Plural, k.Schema)
		}
		md, err := message(k.Message)
		if err != nil {
			return nil, err
		}
		res := &registry.Resource{
			Group: k.Group, Version: k.Version, Kind: k.Kind, Plural: k.Plural, Singular: k.Singular,
			ShortNames: slices.Clone(k.ShortNames), Categories: slices.Clone(k.Categories), Namespaced: k.Namespaced,
			Status: k.has("status"), Schema: s, Protobuf: md, OpenAPI: OpenAPI(k.Schema),
		}
		if k.has("scale") {
			// kube's Scale of a workload says its spec.selector (a
			// ReplicationController's is a map of labels).
			res.Scale = &registry.Scale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".spec.selector"}
		}
		b.apply(k, res)
		out = append(out, res)
	}
	return out, nil
}

// Register registers every built-in kind on r, with the subresources
// that write through r (pods/binding, pods/eviction).
func Register(r *registry.Registry, opts Options) error {
	b, err := newBehaviours(opts)
	if err != nil {
		return err
	}
	b.reg = r
	resources, err := b.resources()
	if err != nil {
		return err
	}
	for _, res := range resources {
		if err := r.Register(res); err != nil {
			return err
		}
	}
	return nil
}

func message(name string) (protoreflect.MessageDescriptor, error) {
	d, err := protobuf.Files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("builtin: protobuf message %s: %w", name, err)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("builtin: %s is not a message", name)
	}
	return md, nil
}
