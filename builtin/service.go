package builtin

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"sync"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
)

// Services: SetDefaults_Service (type ClusterIP, sessionAffinity None,
// ports' protocol TCP and targetPort = port), and the allocation kube's
// service REST does: a clusterIP from Options.ServiceCIDR for every type
// but ExternalName (and headless "None"), with clusterIPs, ipFamilies
// [IPv4] and ipFamilyPolicy SingleStack; nodePorts from 30000-32767 for
// NodePort and LoadBalancer. An update keeps the allocated values when it
// leaves them out and refuses to change them (field is immutable).
//
// The allocators are in memory: a registry over a store that outlives the
// process starts with none marked used, and reuses an address only by
// chance (one in the range's size), as a fresh kube-apiserver rebuilds
// its bitmap from the stored services.

// allocator hands out the numbers of a range, each once until released.
type allocator struct {
	mu    sync.Mutex
	first uint32 // the first number allocated
	size  uint32
	// static is how many numbers from first are kept for the values
	// users ask for: dynamic allocation takes them last (kube's
	// ipallocator reserves the low band of a service CIDR so).
	static uint32
	used   map[uint32]bool
}

func (a *allocator) allocate() (uint32, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if uint32(len(a.used)) >= a.size {
		return 0, false
	}
	if n, ok := a.pick(a.static, a.size); ok {
		return n, true
	}
	return a.pick(0, a.static)
}

// pick marks and returns a free number of [first+from, first+to), from
// a random start.
func (a *allocator) pick(from, to uint32) (uint32, bool) {
	if to <= from {
		return 0, false
	}
	size := to - from
	start := rand.Uint32N(size)
	for i := range size {
		n := a.first + from + (start+i)%size
		if !a.used[n] {
			a.used[n] = true
			return n, true
		}
	}
	return 0, false
}

// staticBand is kube's calculateRangeOffset: 1/16 of a range of size
// addresses, at least 16 and at most 256 (none below 16 addresses).
func staticBand(size uint32) uint32 {
	switch {
	case size < 16:
		return 0
	case size/16 < 16:
		return 16
	case size/16 > 256:
		return 256
	}
	return size / 16
}

func (a *allocator) mark(n uint32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n < a.first || n >= a.first+a.size || a.used[n] {
		return false
	}
	a.used[n] = true
	return true
}

func (a *allocator) release(n uint32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.used, n)
}

// services allocates clusterIPs and nodePorts.
type services struct {
	prefix netip.Prefix
	ips    allocator // offsets in prefix
	ports  allocator
}

func newServices(cidr string) (*services, error) {
	if cidr == "" {
		cidr = "10.96.0.0/12"
	}
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() || p.Bits() > 29 {
		return nil, fmt.Errorf("builtin: ServiceCIDR %q: want an IPv4 range of at least 8 addresses", cidr)
	}
	p = p.Masked()
	size := uint32(1) << (32 - p.Bits())
	// The network address and the first one (the kubernetes service's)
	// are kept, as kube keeps them; so is the broadcast address.
	return &services{prefix: p,
		ips:   allocator{first: 2, size: size - 3, static: min(staticBand(size), size-3), used: map[uint32]bool{}},
		ports: allocator{first: 30000, size: 2768, used: map[uint32]bool{}},
	}, nil
}

func (s *services) addr(off uint32) string {
	b := s.prefix.Addr().As4()
	return netip.AddrFrom4([4]byte(binary.BigEndian.AppendUint32(nil, binary.BigEndian.Uint32(b[:])+off))).String()
}

func (s *services) offset(ip string) (uint32, bool) {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() || !s.prefix.Contains(a) {
		return 0, false
	}
	b, base := a.As4(), s.prefix.Addr().As4()
	return binary.BigEndian.Uint32(b[:]) - binary.BigEndian.Uint32(base[:]), true
}

func defaultService(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	// Go's omitempty, as kube decodes them: "" and [] are unset.
	if spec["clusterIP"] == "" {
		delete(spec, "clusterIP")
	}
	if l, ok := spec["clusterIPs"].([]any); ok && len(l) == 0 {
		delete(spec, "clusterIPs")
	}
	def(spec, "type", "ClusterIP")
	def(spec, "sessionAffinity", "None")
	if spec["sessionAffinity"] == "ClientIP" {
		def(ensureMap(spec, "sessionAffinityConfig", "clientIP"), "timeoutSeconds", num(10800))
	}
	for _, p := range maps(spec, "ports") {
		def(p, "protocol", "TCP")
		if tp, ok := p["targetPort"]; !ok || tp == nil || tp == "" || tp == num(0) {
			p["targetPort"] = p["port"]
		}
	}
	if t := spec["type"]; t == "NodePort" || t == "LoadBalancer" {
		def(spec, "externalTrafficPolicy", "Cluster")
	}
	if spec["type"] != "ExternalName" {
		def(spec, "internalTrafficPolicy", "Cluster")
	}
	if spec["type"] == "LoadBalancer" {
		def(spec, "allocateLoadBalancerNodePorts", true)
	}
	def(obj(o), "status", map[string]any{})
	def(getMap(obj(o), "status"), "loadBalancer", map[string]any{})
	for _, in := range maps(obj(o), "status", "loadBalancer", "ingress") {
		if getString(in, "ip") != "" {
			def(in, "ipMode", "VIP") // SetDefaults_LoadBalancerIngress
		}
	}
	return nil
}

// prepareCreate allocates a new service's clusterIP and nodePorts.
func (s *services) prepareCreate(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	if spec["type"] == "ExternalName" {
		return nil
	}
	ip := getString(spec, "clusterIP")
	switch {
	case ip == "None":
	case ip == "":
		off, ok := s.ips.allocate()
		if !ok {
			return statusError(500, "InternalError", "Internal error occurred: failed to allocate a serviceIP: range is full")
		}
		spec["clusterIP"] = s.addr(off)
	default:
		if err := s.take(o, ip); err != nil {
			return err
		}
	}
	spec["clusterIPs"] = []any{spec["clusterIP"]}
	def(spec, "ipFamilies", []any{"IPv4"})
	def(spec, "ipFamilyPolicy", "SingleStack")
	if t := spec["type"]; t == "NodePort" || t == "LoadBalancer" {
		for _, p := range maps(spec, "ports") {
			if n, ok := p["nodePort"]; ok && n != nil {
				continue
			}
			port, ok := s.ports.allocate()
			if !ok {
				return statusError(500, "InternalError", "Internal error occurred: failed to allocate a nodePort: range is full")
			}
			p["nodePort"] = num(int64(port))
		}
	}
	return nil
}

// prepareUpdate keeps what was allocated when the update leaves it out,
// and allocates what a new type needs: a clusterIP when the service stops
// being ExternalName, nodePorts when it becomes NodePort or LoadBalancer
// (a port keeps the nodePort it had).
func (s *services) prepareUpdate(_ context.Context, o, old registry.Object) error {
	spec, oldSpec := ensureMap(obj(o), "spec"), getMap(obj(old), "spec")
	dropTypeDependentFields(spec, oldSpec)
	if spec["type"] != "LoadBalancer" {
		ensureMap(obj(o), "status")["loadBalancer"] = map[string]any{}
	}
	if spec["type"] == "ExternalName" {
		// kube's defaultOnReadInternalTrafficPolicy: an ExternalName
		// service shows none (its managedFields may still name it).
		delete(spec, "internalTrafficPolicy")
		return nil
	}
	for _, f := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} {
		if v, ok := spec[f]; (!ok || v == nil || v == "") && oldSpec[f] != nil {
			spec[f] = clone(oldSpec[f])
		}
	}
	if getString(spec, "clusterIP") == "" {
		off, ok := s.ips.allocate()
		if !ok {
			return statusError(500, "InternalError", "Internal error occurred: failed to allocate a serviceIP: range is full")
		}
		spec["clusterIP"] = s.addr(off)
		spec["clusterIPs"] = []any{spec["clusterIP"]}
		def(spec, "ipFamilies", []any{"IPv4"})
		def(spec, "ipFamilyPolicy", "SingleStack")
	}
	if t := spec["type"]; t != "NodePort" && t != "LoadBalancer" {
		return nil
	}
	for _, p := range maps(spec, "ports") {
		if n, ok := p["nodePort"]; ok && n != nil {
			continue
		}
		for _, op := range maps(oldSpec, "ports") {
			if equal(op["port"], p["port"]) && equal(op["protocol"], p["protocol"]) && op["nodePort"] != nil {
				p["nodePort"] = op["nodePort"]
			}
		}
		if p["nodePort"] != nil {
			continue
		}
		port, ok := s.ports.allocate()
		if !ok {
			return statusError(500, "InternalError", "Internal error occurred: failed to allocate a nodePort: range is full")
		}
		p["nodePort"] = num(int64(port))
	}
	return nil
}

// dropTypeDependentFields is kube's: a service whose new type no longer
// uses an allocated or defaulted field loses it when the update left it
// as it was (a changed one is the user's, for validation to judge).
//
//	ClusterIP {clusterIP: 10.0.0.5, ipFamilies: [IPv4]} PATCH {type: ExternalName}
//	  → ExternalName {} (clusterIP, clusterIPs, ipFamilies, ipFamilyPolicy dropped)
func dropTypeDependentFields(spec, oldSpec map[string]any) {
	t, oldT := getString(spec, "type"), getString(oldSpec, "type")
	same := func(f string) bool { return equal(spec[f], oldSpec[f]) }
	if oldT != "ExternalName" && t == "ExternalName" {
		if same("clusterIP") && same("clusterIPs") {
			delete(spec, "clusterIP")
			delete(spec, "clusterIPs")
		}
		for _, f := range []string{"ipFamilies", "ipFamilyPolicy"} {
			if same(f) {
				delete(spec, f)
			}
		}
	}
	nodePorts := func(t string) bool { return t == "NodePort" || t == "LoadBalancer" }
	if nodePorts(oldT) && !nodePorts(t) && sameNodePorts(spec, oldSpec) {
		for _, p := range maps(spec, "ports") {
			delete(p, "nodePort")
		}
	}
	if oldT == "LoadBalancer" && t != "LoadBalancer" {
		if spec["allocateLoadBalancerNodePorts"] != nil && same("allocateLoadBalancerNodePorts") {
			delete(spec, "allocateLoadBalancerNodePorts")
		}
		if same("loadBalancerClass") {
			delete(spec, "loadBalancerClass")
		}
	}
	external := func(s map[string]any) bool {
		t := getString(s, "type")
		return t == "LoadBalancer" || t == "NodePort" || (t == "ClusterIP" && len(getList(s, "externalIPs")) > 0)
	}
	if external(oldSpec) && !external(spec) && same("externalTrafficPolicy") {
		delete(spec, "externalTrafficPolicy")
	}
}

// sameNodePorts reports whether two specs' ports have the same set of
// nodePorts.
func sameNodePorts(spec, oldSpec map[string]any) bool {
	set := func(s map[string]any) map[string]bool {
		m := map[string]bool{}
		for _, p := range maps(s, "ports") {
			if n := p["nodePort"]; n != nil {
				m[fmt.Sprint(n)] = true
			}
		}
		return m
	}
	return equal(set(spec), set(oldSpec))
}

func (s *services) validateUpdate(_ context.Context, o, old registry.Object) []registry.FieldError {
	ip, oldIP := getString(obj(o), "spec", "clusterIP"), getString(obj(old), "spec", "clusterIP")
	if oldIP != "" && ip != oldIP && getString(obj(o), "spec", "type") != "ExternalName" {
		return []registry.FieldError{{Type: validation.TypeInvalid, Field: "spec.clusterIPs[0]", Value: []any{ip}, Detail: "may not change once set"}}
	}
	return nil
}

// release frees a deleted service's clusterIP and nodePorts.
func (s *services) release(_ context.Context, o registry.Object, gone bool) {
	if !gone {
		return
	}
	if off, ok := s.offset(getString(obj(o), "spec", "clusterIP")); ok {
		s.ips.release(off)
	}
	for _, p := range maps(obj(o), "spec", "ports") {
		if n, err := strconv.Atoi(fmt.Sprint(p["nodePort"])); err == nil {
			s.ports.release(uint32(n))
		}
	}
}

// take marks the clusterIP a new service asks for as used: in the range
// and free, or a 422 as kube's allocator answers.
func (s *services) take(o registry.Object, ip string) error {
	if _, err := netip.ParseAddr(ip); err != nil {
		return invalidError("Service", o.Name(), registry.FieldError{Type: validation.TypeInvalid, Field: "spec.clusterIPs[0]",
			Value: ip, Detail: "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"})
	}
	off, ok := s.offset(ip)
	detail := "provided IP is already allocated"
	if !ok {
		detail = "the provided network does not match the current range"
	} else if s.ips.mark(off) {
		return nil
	}
	return invalidError("Service", o.Name(), registry.FieldError{Type: validation.TypeInvalid, Field: "spec.clusterIPs",
		Value: []string{ip}, Detail: "failed to allocate IP " + ip + ": " + detail})
}

// invalidError is kube's 422 for one field error of a kind's object.
func invalidError(kind, name string, e registry.FieldError) *registry.StatusError {
	se := statusError(422, "Invalid", fmt.Sprintf("%s %q is invalid: %s", kind, name, e.Error()))
	se.Status.Details = &registry.StatusDetails{Name: name, Kind: kind, Causes: []registry.StatusCause{{Type: e.Type, Message: e.ErrorBody(), Field: e.Field}}}
	return se
}

// statusError is an error answer of a hook.
func statusError(code int, reason, msg string) *registry.StatusError {
	return &registry.StatusError{Status: registry.Status{Kind: "Status", APIVersion: "v1", Status: "Failure", Code: code, Reason: reason, Message: msg}}
}
