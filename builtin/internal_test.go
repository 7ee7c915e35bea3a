package builtin

import (
	"bytes"
	"compress/gzip"
	"testing"
)

func TestPullPolicy(t *testing.T) {
	for _, tt := range []struct{ image, want string }{
		{"nginx", "Always"},
		{"nginx:latest", "Always"},
		{"nginx:1.27", "IfNotPresent"},
		{"registry:5000/team/app", "Always"},
		{"registry:5000/team/app:v2", "IfNotPresent"},
		{"busybox@sha256:abcd", "IfNotPresent"},
	} {
		if got := pullPolicy(tt.image); got != tt.want {
			t.Errorf("pullPolicy(%q) = %q; want %q", tt.image, got, tt.want)
		}
	}
}

func TestQOSClass(t *testing.T) {
	res := func(req, lim map[string]any) map[string]any {
		return map[string]any{"name": "c", "resources": map[string]any{"requests": req, "limits": lim}}
	}
	both := map[string]any{"cpu": "1", "memory": "1Gi"}
	for _, tt := range []struct {
		name       string
		containers []any
		want       string
	}{
		{"nothing", []any{map[string]any{"name": "c"}}, "BestEffort"},
		{"limits equal requests", []any{res(both, both)}, "Guaranteed"},
		{"requests only", []any{res(both, nil)}, "Burstable"},
		{"one of two guaranteed", []any{res(both, both), map[string]any{"name": "d"}}, "Burstable"},
	} {
		if got := qosClass(map[string]any{"containers": tt.containers}); got != tt.want {
			t.Errorf("%s: qosClass = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func TestSelects(t *testing.T) {
	labels := map[string]string{"app": "web", "tier": "a"}
	for _, tt := range []struct {
		name string
		sel  map[string]any
		want bool
	}{
		{"matchLabels", map[string]any{"matchLabels": map[string]any{"app": "web"}}, true},
		{"matchLabels other", map[string]any{"matchLabels": map[string]any{"app": "db"}}, false},
		{"In", map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In", "values": []any{"a", "b"}}}}, true},
		{"NotIn", map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "NotIn", "values": []any{"a"}}}}, false},
		{"Exists", map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "Exists"}}}, true},
		{"DoesNotExist", map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "DoesNotExist"}}}, false},
	} {
		if got := selects(tt.sel, labels); got != tt.want {
			t.Errorf("%s: selects = %v; want %v", tt.name, got, tt.want)
		}
	}
}

func TestServiceAllocation(t *testing.T) {
	s, err := newServices("10.0.0.0/29") // 8 addresses: .2 to .6 allocatable
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 5 {
		off, ok := s.ips.allocate()
		if !ok {
			t.Fatalf("allocate: range full after %d", len(seen))
		}
		ip := s.addr(off)
		if seen[ip] || ip == "10.0.0.0" || ip == "10.0.0.1" || ip == "10.0.0.7" {
			t.Fatalf("allocated %s (seen before: %v)", ip, seen[ip])
		}
		seen[ip] = true
	}
	if _, ok := s.ips.allocate(); ok {
		t.Errorf("allocate: got an address from a full range")
	}
	off, _ := s.offset("10.0.0.3")
	s.ips.release(off)
	if got, ok := s.ips.allocate(); !ok || s.addr(got) != "10.0.0.3" {
		t.Errorf("allocate after release: got %s, %v; want 10.0.0.3", s.addr(got), ok)
	}
	for _, bad := range []string{"", "10.0.0.0/30", "fd00::/64", "nope"} {
		if _, err := newServices(bad); bad != "" && err == nil {
			t.Errorf("newServices(%q): no error", bad)
		}
	}
}

func TestDefinitionsLoad(t *testing.T) {
	defs, err := definitions()
	if err != nil {
		t.Fatal(err)
	}
	c := defs["io.k8s.api.core.v1.PodSpec"].Properties["containers"]
	if c == nil || c.PatchMergeKey != "name" || c.ListType != "map" || c.Description == "" {
		t.Fatalf("PodSpec.containers: %+v; want a list-map keyed by name with a description", c)
	}
	// Shared definitions: every pod template holds the same PodSpec.
	dep := defs["io.k8s.api.apps.v1.DeploymentSpec"].Properties["template"].Properties["spec"]
	if dep.Properties["containers"] != c {
		t.Errorf("DeploymentSpec's PodSpec is not the shared definition")
	}
}

// FuzzLoadDefinitions: the embedded schemas' reader never panics on any
// input, and reads what it is given or fails.
func FuzzLoadDefinitions(f *testing.F) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	f.Add(gz(`{"definitions":{"A":{"type":"object","properties":{"b":{"$ref":"B","description":"x"}}},"B":{"type":"string"}}}`))
	f.Add(gz(`{"definitions":{"A":{"$ref":"A"}}}`))
	f.Add(gz(`{"definitions":{"A":{"items":{"$ref":"missing"}}}}`))
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, b []byte) {
		defs, err := loadDefinitions(b)
		if err == nil && defs == nil {
			t.Fatal("no error and no definitions")
		}
	})
}

func TestCanonicalQuantity(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"0.5", "500m"}, {"1000m", "1"}, {"2000", "2k"}, {"1024Mi", "1Gi"}, {"1.5Gi", "1536Mi"},
		{"100m", "100m"}, {"1e3", "1e3"}, {"512Mi", "512Mi"}, {"1Ki", "1Ki"}, {"0.1", "100m"},
		{"1.5", "1500m"}, {"128974848", "128974848"}, {"129e6", "129e6"}, {"129M", "129M"},
		{"0", "0"}, {"0Gi", "0"}, {"10Gi", "10Gi"}, {"1G", "1G"}, {"512", "512"}, {"0.5Ki", "512"},
		{"0.0000000001", "1n"}, {"-1", "-1"}, {"+5", "5"}, {"1500Mi", "1500Mi"},
	} {
		got, ok := canonicalQuantity(tt.in)
		if !ok || got != tt.want {
			t.Errorf("canonicalQuantity(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	for _, bad := range []string{"", "abc", "1.2.3", "1Xi", "1e", "--1"} {
		if got, ok := canonicalQuantity(bad); ok {
			t.Errorf("canonicalQuantity(%q) = %q; want refused", bad, got)
		}
	}
}

// FuzzCanonicalQuantity: the quantity parser never panics, and its
// canonical form is a fixed point.
func FuzzCanonicalQuantity(f *testing.F) {
	for _, s := range []string{"0.5", "1Gi", "1e3", "1.5Gi", "100m", "-0.1n", "9999999999999E"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := canonicalQuantity(s)
		if !ok {
			return
		}
		if again, ok := canonicalQuantity(c); !ok || again != c {
			t.Fatalf("canonicalQuantity(%q) = %q, but canonicalQuantity(%q) = %q, %v", s, c, c, again, ok)
		}
	})
}

// TestValidatePullPolicy checks kube's validatePullPolicy: a container's
// imagePullPolicy is one of Always, IfNotPresent and Never.
func TestValidatePullPolicy(t *testing.T) {
	for _, tt := range []struct {
		policy    string
		wantField string
	}{
		{"Always", ""}, {"IfNotPresent", ""}, {"Never", ""},
		{"!invalid!", "spec.containers[0].imagePullPolicy"},
		{"always", "spec.containers[0].imagePullPolicy"},
	} {
		spec := map[string]any{"restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "containers": []any{
			map[string]any{"name": "c", "image": "nginx", "imagePullPolicy": tt.policy, "terminationMessagePolicy": "File"},
		}}
		var got string
		for _, e := range validatePodSpec(spec, "spec") {
			got = e.Field
			if e.Detail != `supported values: "Always", "IfNotPresent", "Never"` {
				t.Errorf("%q: detail %q", tt.policy, e.Detail)
			}
		}
		if got != tt.wantField {
			t.Errorf("imagePullPolicy %q: error on %q; want %q", tt.policy, got, tt.wantField)
		}
	}
}
