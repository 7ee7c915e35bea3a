package registry_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

func gizmos(version string) *registry.Resource {
	return &registry.Resource{Group: "gadgets.example.org", Version: version, Kind: "Gadget", Plural: "gadgets", Namespaced: true,
		ShortNames: []string{"gd"}, Categories: []string{"all"}}
}

// discoveredKinds are the plural/kind pairs of a group version's
// APIResourceList, or nil on 404.
func (s *server) discoveredKinds(gv string) []string {
	s.t.Helper()
	resp := s.do("GET", "/apis/"+gv, nil)
	if resp.code == http.StatusNotFound {
		return nil
	}
	var out []string
	for _, r := range resp.obj(s.t)["resources"].([]any) {
		m := r.(map[string]any)
		out = append(out, m["name"].(string)+"="+m["kind"].(string))
	}
	return out
}

// aggregatedGroups are the group/version names of the aggregated /apis.
func (s *server) aggregatedGroups() []string {
	s.t.Helper()
	m := s.must(200, "GET", "/apis", nil, "Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	var out []string
	for _, it := range m["items"].([]any) {
		g := it.(map[string]any)
		for _, v := range g["versions"].([]any) {
			out = append(out, str(g, "metadata.name")+"/"+v.(map[string]any)["version"].(string))
		}
	}
	return out
}

func (s *server) openAPIPaths() []string {
	s.t.Helper()
	var out []string
	for p := range s.must(200, "GET", "/openapi/v3", nil)["paths"].(map[string]any) {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func TestTableChangesWhileServing(t *testing.T) {
	s := newServer(t)
	gd := "/apis/gadgets.example.org/v1/namespaces/default/gadgets"
	steps := []struct {
		name   string
		change func() error
		// want: the discovery of gadgets.example.org/v1 and
		// v2 (nil: 404), whether a create of a v1 gadget is served, and
		// the preferred version of the group ("" when not served).
		v1, v2    []string
		create    int
		preferred string
	}{
		{"before", func() error { return nil }, nil, nil, http.StatusNotFound, ""},
		{"register v1", func() error { return s.reg.Register(gizmos("v1")) }, []string{"gadgets=Gadget"}, nil, http.StatusCreated, "v1"},
		{"register v2beta1 and v2 at once", func() error { return s.reg.Register(gizmos("v2beta1"), gizmos("v2")) },
			[]string{"gadgets=Gadget"}, []string{"gadgets=Gadget"}, http.StatusConflict, "v2"},
		{"replace v1 (kind renamed)", func() error {
			g := gizmos("v1")
			g.Kind = "Gizmo"
			return s.reg.Replace(g)
		}, []string{"gadgets=Gizmo"}, []string{"gadgets=Gadget"}, http.StatusConflict, "v2"},
		{"unregister v2", func() error { return s.reg.Unregister("gadgets.example.org", "v2", "gadgets") },
			[]string{"gadgets=Gizmo"}, nil, http.StatusConflict, "v1"},
		{"unregister v1 and v2beta1", func() error {
			if err := s.reg.Unregister("gadgets.example.org", "v1", "gadgets"); err != nil {
				return err
			}
			return s.reg.Unregister("gadgets.example.org", "v2beta1", "gadgets")
		}, nil, nil, http.StatusNotFound, ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			s.t = t
			if err := st.change(); err != nil {
				t.Fatal(err)
			}
			if got := s.discoveredKinds("gadgets.example.org/v1"); !slices.Equal(got, st.v1) {
				t.Errorf("/apis/gadgets.example.org/v1: got %v; want %v", got, st.v1)
			}
			if got := s.discoveredKinds("gadgets.example.org/v2"); !slices.Equal(got, st.v2) {
				t.Errorf("/apis/gadgets.example.org/v2: got %v; want %v", got, st.v2)
			}
			if got := s.do("POST", gd, map[string]any{"apiVersion": "gadgets.example.org/v1", "kind": kindOf(st.v1), "metadata": map[string]any{"name": "g1"}}); got.code != st.create {
				t.Errorf("create a v1 gadget: got %d; want %d: %s", got.code, st.create, got.body)
			}
			group := s.do("GET", "/apis/gadgets.example.org", nil)
			switch {
			case st.preferred == "" && group.code != http.StatusNotFound:
				t.Errorf("/apis/gadgets.example.org: got %d; want 404", group.code)
			case st.preferred != "" && str(group.obj(t), "preferredVersion.version") != st.preferred:
				t.Errorf("/apis/gadgets.example.org preferred version: got %s; want %s", group.body, st.preferred)
			}
			var wantAgg, wantOpenAPI []string
			for _, v := range []string{"v2", "v1", "v2beta1"} {
				if s.discoveredKinds("gadgets.example.org/"+v) != nil {
					wantAgg = append(wantAgg, "gadgets.example.org/"+v)
					wantOpenAPI = append(wantOpenAPI, "apis/gadgets.example.org/"+v)
				}
			}
			var gotAgg []string
			for _, g := range s.aggregatedGroups() {
				if strings.HasPrefix(g, "gadgets.") {
					gotAgg = append(gotAgg, g)
				}
			}
			if !slices.Equal(gotAgg, wantAgg) {
				t.Errorf("aggregated discovery: got %v; want %v (the preferred first)", gotAgg, wantAgg)
			}
			var gotOpenAPI []string
			for _, p := range s.openAPIPaths() {
				if strings.Contains(p, "gadgets.") {
					gotOpenAPI = append(gotOpenAPI, p)
				}
			}
			slices.Sort(wantOpenAPI)
			if !slices.Equal(gotOpenAPI, wantOpenAPI) {
				t.Errorf("/openapi/v3 paths: got %v; want %v", gotOpenAPI, wantOpenAPI)
			}
			v2 := s.must(200, "GET", "/openapi/v2", nil)
			_, hasV1 := v2["definitions"].(map[string]any)["org.example.gadgets.v1."+kindOf(st.v1)]
			if hasV1 != (st.v1 != nil) {
				t.Errorf("/openapi/v2 defines the v1 kind: got %v; want %v", hasV1, st.v1 != nil)
			}
		})
	}
}

func kindOf(discovered []string) string {
	if len(discovered) == 0 {
		return "Gadget"
	}
	_, k, _ := strings.Cut(discovered[0], "=")
	return k
}

func TestTableChangeErrors(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name   string
		change func() error
		want   string
	}{
		{"register a taken resource", func() error { return s.reg.Register(widgets()) }, "registered twice"},
		{"register two, one taken: neither", func() error { return s.reg.Register(gizmos("v1"), widgets()) }, "registered twice"},
		{"replace a resource not served", func() error { return s.reg.Replace(gizmos("v9")) }, "not registered"},
		{"unregister a resource not served", func() error { return s.reg.Unregister("example.com", "v9", "widgets") }, "not registered"},
		{"register a *Resource twice", func() error {
			g := gizmos("v3")
			if err := s.reg.Register(g); err != nil {
				return err
			}
			if err := s.reg.Unregister(g.Group, g.Version, g.Plural); err != nil {
				return err
			}
			return s.reg.Register(g)
		}, "registered once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.change()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v; want an error with %q", err, tt.want)
			}
		})
	}
	if got := s.discoveredKinds("gadgets.example.org/v1"); got != nil {
		t.Errorf("a failed Register served gadgets.example.org/v1: %v", got)
	}
}

// A watch on a resource that is replaced or unregistered ends cleanly
// (no ERROR event), as apiextensions-apiserver ends it when it tears the
// CRD's old storage down; a watch on another resource goes on.
func TestTableChangeEndsWatches(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *registry.Registry) error
	}{
		{"unregister", func(r *registry.Registry) error { return r.Unregister("gadgets.example.org", "v1", "gadgets") }},
		{"replace", func(r *registry.Registry) error { return r.Replace(gizmos("v1")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, gizmos("v1"))
			gw := s.watch("/apis/gadgets.example.org/v1/gadgets?watch=true")
			ww := s.watch("/apis/example.com/v1/widgets?watch=true")
			c, err := registry.NewClient[map[string]any](s.reg, "gadgets.example.org/v1", "gadgets")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cw, err := c.Watch(ctx, "", registry.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.change(s.reg); err != nil {
				t.Fatal(err)
			}
			if !gw.ended() {
				t.Error("the HTTP watch on the changed resource goes on; want it ended")
			}
			for ev := range cw {
				t.Errorf("the Client watch on the changed resource sent %v; want it closed", ev.Type)
			}
			s.must(201, "POST", "/apis/example.com/v1/namespaces/default/widgets", widget("w1", nil, nil))
			if ev := ww.next(); evType(ev) != "ADDED" {
				t.Errorf("the watch on widgets: got %v; want ADDED", ev)
			}
		})
	}
}

// Kinds come and go while other resources are written and watched: no
// request fails, and every watcher of widgets sees every write (run with
// -race).
func TestTableChangesUnderLoad(t *testing.T) {
	s := newServer(t)
	const writes, kinds = 200, 40
	ws := s.watch("/apis/example.com/v1/namespaces/default/widgets?watch=true")
	var wg sync.WaitGroup
	errs := make(chan error, 4*writes)
	wg.Add(3)
	go func() { // the kinds come and go
		defer wg.Done()
		for i := range kinds {
			g := gizmos(fmt.Sprintf("v%d", i+1))
			if err := s.reg.Register(g); err != nil {
				errs <- err
				return
			}
			if i%2 == 1 {
				if err := s.reg.Unregister(g.Group, g.Version, g.Plural); err != nil {
					errs <- err
				}
			}
		}
	}()
	go func() { // discovery and OpenAPI are read as they change
		defer wg.Done()
		for range kinds {
			for _, p := range []string{"/apis", "/openapi/v3", "/openapi/v2", "/apis/gadgets.example.org"} {
				resp, err := http.Get(s.url + p)
				if err != nil {
					errs <- err
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != 200 && resp.StatusCode != 404 {
					errs <- fmt.Errorf("GET %s: %d", p, resp.StatusCode)
				}
			}
		}
	}()
	go func() { // widgets are written
		defer wg.Done()
		for i := range writes {
			resp := s.do("POST", "/apis/example.com/v1/namespaces/default/widgets", widget(fmt.Sprintf("w%d", i), nil, nil))
			if resp.code != http.StatusCreated {
				errs <- fmt.Errorf("create w%d: %d %s", i, resp.code, resp.body)
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range writes {
		if ev := ws.next(); evType(ev) != "ADDED" || str(evObj(ev), "metadata.name") != fmt.Sprintf("w%d", i) {
			t.Fatalf("watch event %d: got %v %v; want ADDED w%d", i, evType(ev), str(evObj(ev), "metadata.name"), i)
		}
	}
	var served []string
	for _, g := range s.aggregatedGroups() {
		if strings.HasPrefix(g, "gadgets.") {
			served = append(served, g)
		}
	}
	if len(served) != kinds/2 {
		t.Errorf("gadget versions served after the loop: got %d (%v); want %d", len(served), served, kinds/2)
	}
}
