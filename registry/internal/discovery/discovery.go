package discovery

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
)

// Resource is what discovery says of one served resource.
type Resource struct {
	Group, Version, Kind, Plural, Singular string
	ShortNames, Categories                 []string
	Namespaced                             bool
	// Subresources are its subresources' names: status, scale, then the
	// custom ones in name order.
	Subresources []string
	// Verbs are the verbs it serves; nil means every verb of a stored
	// resource.
	Verbs []string
	// SubresourceKinds are, by name, the kinds and verbs of subresources
	// that answer with a kind of their own (pods/eviction: policy/v1
	// Eviction, create); the others answer with the resource's kind
	// (scale: autoscaling/v1 Scale) and serve get, patch and update.
	SubresourceKinds map[string]Subresource
	// StorageVersionHash names the kind its objects are stored as (see
	// StorageVersionHash); empty for a resource that stores nothing (a
	// review).
	StorageVersionHash string
	// Custom is a custom resource's, which apiextensions-apiserver
	// describes: its aggregated entry names its own group and version in
	// responseKind, where kube's built-in kinds leave them empty.
	Custom bool
}

// StorageVersionHash is kube's storageVersionHash of a stored kind: the
// first 8 bytes of the SHA-256 of "group/version/kind", in base64
// (k8s.io/apiserver's discovery.StorageVersionHash). Empty without a
// version.
//
// Example: rbac.authorization.k8s.io/v1 Role is "7FuwZcIIItM=".
func StorageVersionHash(group, version, kind string) string {
	if version == "" || kind == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// Subresource is what discovery says of one subresource: its response
// kind ("" group and version: the resource's) and verbs.
type Subresource struct {
	Group, Version, Kind string
	Verbs                []string
}

// subresource is the response kind and verbs of res's subresource sub.
func (r Resource) subresource(sub string) Subresource {
	if s, ok := r.SubresourceKinds[sub]; ok {
		return s
	}
	if sub == "scale" {
		return Subresource{Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: subresourceVerbs}
	}
	return Subresource{Kind: r.Kind, Verbs: subresourceVerbs}
}

func (r Resource) verbs() []string {
	if r.Verbs != nil {
		return r.Verbs
	}
	return objectVerbs
}

// Version is one version of a group and its resources.
type Version struct {
	Version   string
	Resources []Resource
}

// Group is a group ("" for the core group) and its versions, the
// preferred first.
type Group struct {
	Name     string
	Versions []Version
}

type groupVersionForDiscovery struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

// APIGroup is the APIGroup document of a group.
type APIGroup struct {
	Kind             string                     `json:"kind,omitempty"`
	APIVersion       string                     `json:"apiVersion,omitempty"`
	Name             string                     `json:"name"`
	Versions         []groupVersionForDiscovery `json:"versions"`
	PreferredVersion groupVersionForDiscovery   `json:"preferredVersion"`
}

type apiResource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Namespaced   bool     `json:"namespaced"`
	Group        string   `json:"group,omitempty"`
	Version      string   `json:"version,omitempty"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames,omitempty"`
	Categories   []string `json:"categories,omitempty"`
	// StorageVersionHash is set for stored resources, not subresources.
	StorageVersionHash string `json:"storageVersionHash,omitempty"`
}

var (
	objectVerbs      = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	subresourceVerbs = []string{"get", "patch", "update"}
)

// NewAPIGroup is g's entry in the APIGroupList of /apis; set Kind and
// APIVersion for /apis/{group}.
func NewAPIGroup(g Group) APIGroup {
	out := APIGroup{Name: g.Name}
	for _, v := range g.Versions {
		gv := v.Version
		if g.Name != "" {
			gv = g.Name + "/" + v.Version
		}
		out.Versions = append(out.Versions, groupVersionForDiscovery{GroupVersion: gv, Version: v.Version})
	}
	if len(out.Versions) > 0 {
		out.PreferredVersion = out.Versions[0]
	}
	return out
}

// ResourceList is the APIResourceList of /api/v1 or
// /apis/{group}/{version}.
func ResourceList(group string, v Version) map[string]any {
	gvs := v.Version
	if group != "" {
		gvs = group + "/" + v.Version
	}
	resources := []apiResource{}
	for _, res := range v.Resources {
		resources = append(resources, apiResource{
			Name: res.Plural, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs: res.verbs(), ShortNames: res.ShortNames, Categories: res.Categories,
			StorageVersionHash: res.StorageVersionHash,
		})
		for _, sub := range res.Subresources {
			s := res.subresource(sub)
			resources = append(resources, apiResource{Name: res.Plural + "/" + sub, Namespaced: res.Namespaced,
				Group: s.Group, Version: s.Version, Kind: s.Kind, Verbs: s.Verbs})
		}
	}
	if group == "" {
		// kube's /api/v1 names no apiVersion, as /api (its encoder is
		// given no group version).
		return map[string]any{"kind": "APIResourceList", "groupVersion": gvs, "resources": resources}
	}
	return map[string]any{
		"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gvs, "resources": resources,
	}
}

// The apidiscovery.k8s.io/v2 types.
type (
	// List is the apidiscovery.k8s.io/v2 APIGroupDiscoveryList.
	List struct {
		Kind       string           `json:"kind"`
		APIVersion string           `json:"apiVersion"`
		Metadata   struct{}         `json:"metadata"`
		Items      []discoveryGroup `json:"items"`
	}
	discoveryGroup struct {
		Metadata discoveryMeta      `json:"metadata"`
		Versions []discoveryVersion `json:"versions"`
	}
	// discoveryMeta is a group's metadata: its name alone (kube 1.37
	// writes no creationTimestamp).
	discoveryMeta struct {
		Name string `json:"name,omitempty"`
	}
	discoveryVersion struct {
		Version   string              `json:"version"`
		Resources []discoveryResource `json:"resources"`
		Freshness string              `json:"freshness"`
	}
	groupVersionKind struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	}
	discoveryResource struct {
		Resource         string                 `json:"resource"`
		ResponseKind     groupVersionKind       `json:"responseKind"`
		Scope            string                 `json:"scope"`
		SingularResource string                 `json:"singularResource"`
		Verbs            []string               `json:"verbs"`
		ShortNames       []string               `json:"shortNames,omitempty"`
		Categories       []string               `json:"categories,omitempty"`
		Subresources     []discoverySubresource `json:"subresources,omitempty"`
	}
	discoverySubresource struct {
		Subresource  string           `json:"subresource"`
		ResponseKind groupVersionKind `json:"responseKind"`
		Verbs        []string         `json:"verbs"`
	}
)

// Aggregated is the apidiscovery.k8s.io/v2 document of groups.
func Aggregated(groups []Group) List {
	out := List{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2", Items: []discoveryGroup{}}
	for _, g := range groups {
		dg := discoveryGroup{Metadata: discoveryMeta{Name: g.Name}}
		for _, v := range g.Versions {
			dv := discoveryVersion{Version: v.Version, Freshness: "Current", Resources: []discoveryResource{}}
			for _, res := range v.Resources {
				scope := "Cluster"
				if res.Namespaced {
					scope = "Namespaced"
				}
				// A kind's own group and version: named by a custom
				// resource's entries, empty in a built-in kind's (kube
				// converts its APIResourceList, where they are empty).
				own := groupVersionKind{Kind: res.Kind}
				if res.Custom {
					own.Group, own.Version = res.Group, res.Version
				}
				dr := discoveryResource{
					Resource: res.Plural, Scope: scope, SingularResource: res.Singular,
					ResponseKind: own, Verbs: res.verbs(), ShortNames: res.ShortNames, Categories: res.Categories,
				}
				for _, sub := range res.Subresources {
					s := res.subresource(sub)
					ds := discoverySubresource{Subresource: sub, Verbs: s.Verbs,
						ResponseKind: groupVersionKind{Group: own.Group, Version: own.Version, Kind: s.Kind}}
					if s.Group != "" || s.Version != "" {
						ds.ResponseKind.Group, ds.ResponseKind.Version = s.Group, s.Version
					}
					dr.Subresources = append(dr.Subresources, ds)
				}
				dv.Resources = append(dv.Resources, dr)
			}
			dg.Versions = append(dg.Versions, dv)
		}
		out.Items = append(out.Items, dg)
	}
	return out
}

// AggregatedVersion is v's entry in an apidiscovery.k8s.io/v2 group, in
// JSON: a group version's fragment, cached with it and assembled into a
// list by AssembleAggregated.
func AggregatedVersion(v Version) []byte {
	l := Aggregated([]Group{{Versions: []Version{v}}})
	b, err := json.Marshal(l.Items[0].Versions[0])
	if err != nil {
		panic(err) // plain strings and slices always marshal
	}
	return b
}

// AggregatedGroup is a group and its versions' AggregatedVersion
// fragments, the preferred first.
type AggregatedGroup struct {
	Name     string
	Versions [][]byte
}

// AssembleAggregated is the apidiscovery.k8s.io/v2 APIGroupDiscoveryList
// of groups, in JSON, made of their versions' cached fragments: the same
// bytes json.Marshal(Aggregated(…)) gives.
func AssembleAggregated(groups []AggregatedGroup) []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[`)
	for i, g := range groups {
		if i > 0 {
			b.WriteByte(',')
		}
		meta, _ := json.Marshal(discoveryMeta{Name: g.Name})
		b.WriteString(`{"metadata":`)
		b.Write(meta)
		b.WriteString(`,"versions":`)
		if g.Versions == nil {
			b.WriteString("null")
		} else {
			b.WriteByte('[')
			b.Write(bytes.Join(g.Versions, []byte{','}))
			b.WriteByte(']')
		}
		b.WriteByte('}')
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// groupPriorities are kube-apiserver's group priorities (its
// APIServices' groupPriorityMinimum, cmd/kube-apiserver's
// apiVersionPriorities): discovery lists groups by them, highest first,
// which is the order of `kubectl api-resources`. A group not among them
// (a CRD's, a Go user's) has kube's priority for a CRD's group, 1000.
var groupPriorities = map[string]int{
	"apiregistration.k8s.io": 18000, "apps": 17800, "events.k8s.io": 17750, "authentication.k8s.io": 17700,
	"authorization.k8s.io": 17600, "autoscaling": 17500, "batch": 17400, "certificates.k8s.io": 17300,
	"networking.k8s.io": 17200, "policy": 17100, "rbac.authorization.k8s.io": 17000, "storage.k8s.io": 16800,
	"admissionregistration.k8s.io": 16700, "apiextensions.k8s.io": 16700, "scheduling.k8s.io": 16600,
	"coordination.k8s.io": 16500, "node.k8s.io": 16300, "discovery.k8s.io": 16200, "resource.k8s.io": 16200,
	"flowcontrol.apiserver.k8s.io": 16100, "internal.apiserver.k8s.io": 16000, "storagemigration.k8s.io": 15800,
	"lifecycle.k8s.io": 15700,
}

// CompareGroups orders groups as kube's discovery lists them: by group
// priority, highest first, then by name (kube-aggregator's order).
// Negative when a comes first.
//
// Example: apps (17800) before events.k8s.io (17750) before batch (17400);
// admissionregistration.k8s.io before apiextensions.k8s.io (both 16700);
// every built-in group before example.com (1000).
func CompareGroups(a, b string) int {
	pa, pb := groupPriority(a), groupPriority(b)
	return cmp.Or(cmp.Compare(pb, pa), cmp.Compare(a, b))
}

func groupPriority(g string) int {
	if p, ok := groupPriorities[g]; ok {
		return p
	}
	return 1000
}

// CompareVersions orders versions as kube's discovery lists them (its
// version priority): GA versions before beta before alpha, higher
// numbers first within each; versions of another shape after them, in
// name order. Negative when a comes first.
func CompareVersions(a, b string) int {
	pa, oka := parseVersion(a)
	pb, okb := parseVersion(b)
	switch {
	case oka && okb:
		return cmp.Or(cmp.Compare(pb.stage, pa.stage), cmp.Compare(pb.major, pa.major), cmp.Compare(pb.minor, pa.minor))
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

type versionParts struct {
	major, minor int
	stage        int // 2 GA, 1 beta, 0 alpha
}

// parseVersion reads v1, v2beta3, v1alpha1 (kube's "kube-like" versions).
func parseVersion(v string) (versionParts, bool) {
	rest, ok := strings.CutPrefix(v, "v")
	if !ok {
		return versionParts{}, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	major, err := strconv.Atoi(rest[:i])
	if err != nil || major == 0 || rest[0] == '0' {
		return versionParts{}, false
	}
	p := versionParts{major: major, stage: 2}
	rest = rest[i:]
	if rest == "" {
		return p, true
	}
	switch {
	case strings.HasPrefix(rest, "beta"):
		p.stage, rest = 1, rest[len("beta"):]
	case strings.HasPrefix(rest, "alpha"):
		p.stage, rest = 0, rest[len("alpha"):]
	default:
		return versionParts{}, false
	}
	minor, err := strconv.Atoi(rest)
	if err != nil || minor == 0 || rest[0] == '0' {
		return versionParts{}, false
	}
	p.minor = minor
	return p, true
}
