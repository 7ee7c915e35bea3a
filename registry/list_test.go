package registry_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func createWidgets(s *server, n int, spec func(i int) (map[string]string, map[string]any)) {
	s.t.Helper()
	for i := 0; i < n; i++ {
		labels, sp := spec(i)
		s.must(201, "POST", widgetsPath, widget(fmt.Sprintf("w%02d", i), labels, sp))
	}
}

func names(list map[string]any) []string {
	items, _ := list["items"].([]any)
	out := []string{}
	for _, it := range items {
		out = append(out, str(it.(map[string]any), "metadata.name"))
	}
	return out
}

func TestListShapeAndOrder(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "other"}})
	s.must(201, "POST", "/apis/example.com/v1/namespaces/other/widgets", widget("b", nil, nil))
	s.must(201, "POST", widgetsPath, widget("c", nil, nil))
	s.must(201, "POST", widgetsPath, widget("a", nil, nil))
	l := s.must(200, "GET", widgetsPath, nil)
	if l["kind"] != "WidgetList" || l["apiVersion"] != "example.com/v1" || str(l, "metadata.resourceVersion") == "" {
		t.Fatalf("list: got kind %v apiVersion %v metadata %v", l["kind"], l["apiVersion"], l["metadata"])
	}
	if got := strings.Join(names(l), ","); got != "a,c" {
		t.Errorf("namespace list: got %s; want a,c", got)
	}
	all := s.must(200, "GET", "/apis/example.com/v1/widgets", nil)
	var got []string
	for _, it := range all["items"].([]any) {
		m := it.(map[string]any)
		got = append(got, str(m, "metadata.namespace")+"/"+str(m, "metadata.name"))
		if str(m, "metadata.resourceVersion") == "" {
			t.Errorf("item %v has no resourceVersion", m["metadata"])
		}
	}
	if strings.Join(got, ",") != "default/a,default/c,other/b" {
		t.Errorf("all namespaces: got %v; want namespace then name order", got)
	}
	empty := s.must(200, "GET", "/api/v1/namespaces/default/configmaps", nil)
	if items, ok := empty["items"].([]any); !ok || len(items) != 0 {
		t.Errorf("empty list: got items %v; want []", empty["items"])
	}
}

func TestPagination(t *testing.T) {
	s := newServer(t)
	createWidgets(s, 7, func(int) (map[string]string, map[string]any) { return nil, nil })
	first := s.must(200, "GET", widgetsPath+"?limit=3", nil)
	rv := str(first, "metadata.resourceVersion")
	if path(first, "metadata.remainingItemCount") != float64(4) || str(first, "metadata.continue") == "" {
		t.Fatalf("first page: got metadata %v; want remainingItemCount 4 and a continue token", first["metadata"])
	}
	// Writes between pages are invisible to the rest of the list.
	s.must(201, "POST", widgetsPath, widget("w03a", nil, nil))
	s.must(200, "DELETE", widgetsPath+"/w05", nil)
	var all []string
	all = append(all, names(first)...)
	page := first
	for str(page, "metadata.continue") != "" {
		page = s.must(200, "GET", widgetsPath+"?limit=3&continue="+url.QueryEscape(str(page, "metadata.continue")), nil)
		if got := str(page, "metadata.resourceVersion"); got != rv {
			t.Errorf("page resourceVersion: got %s; want the first page's %s", got, rv)
		}
		all = append(all, names(page)...)
	}
	if got := strings.Join(all, ","); got != "w00,w01,w02,w03,w04,w05,w06" {
		t.Errorf("pages: got %s; want the snapshot of the first page", got)
	}
	if page["metadata"].(map[string]any)["remainingItemCount"] != nil {
		t.Errorf("last page: got remainingItemCount %v; want none", path(page, "metadata.remainingItemCount"))
	}
	tests := []struct {
		name, query string
		code        int
		reason      string
	}{
		{"forged token", "limit=2&continue=AAAA", 400, "BadRequest"},
		{"continue with resourceVersion", "limit=2&resourceVersion=5&continue=" + url.QueryEscape(str(first, "metadata.continue")), 400, "BadRequest"},
		{"bad limit", "limit=abc", 400, "BadRequest"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do("GET", widgetsPath+"?"+tc.query, nil)
			if r.code != tc.code || r.obj(t)["reason"] != tc.reason {
				t.Fatalf("got %d %s; want %d %s", r.code, r.body, tc.code, tc.reason)
			}
		})
	}
	// A token is bound to its collection.
	cm := s.do("GET", "/api/v1/namespaces/default/configmaps?limit=2&continue="+url.QueryEscape(str(first, "metadata.continue")), nil)
	if cm.code != 400 {
		t.Errorf("token of another collection: got %d; want 400", cm.code)
	}
}

func TestSelectors(t *testing.T) {
	s := newServer(t)
	colors := []string{"red", "blue", "red", "green"}
	createWidgets(s, 4, func(i int) (map[string]string, map[string]any) {
		l := map[string]string{"tier": fmt.Sprint(i % 2)}
		if i == 3 {
			l["canary"] = "yes"
		}
		return l, map[string]any{"color": colors[i]}
	})
	tests := []struct{ query, want string }{
		{"labelSelector=tier%3D0", "w00,w02"},
		{"labelSelector=tier%3D%3D1", "w01,w03"},
		{"labelSelector=tier!%3D0", "w01,w03"},
		{"labelSelector=tier+in+(0,1),canary", "w03"},
		{"labelSelector=!canary", "w00,w01,w02"},
		{"labelSelector=tier+notin+(0)", "w01,w03"},
		{"fieldSelector=spec.color%3Dred", "w00,w02"},
		{"fieldSelector=spec.color!%3Dred", "w01,w03"},
		{"fieldSelector=metadata.name%3Dw01", "w01"},
		{"fieldSelector=metadata.namespace%3Ddefault,spec.color%3Dgreen", "w03"},
		{"labelSelector=tier%3D0&fieldSelector=spec.color%3Dred&limit=1", "w00"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			l := s.must(200, "GET", widgetsPath+"?"+tc.query, nil)
			if got := strings.Join(names(l), ","); got != tc.want {
				t.Errorf("got %s; want %s", got, tc.want)
			}
		})
	}
	l := s.must(200, "GET", widgetsPath+"?labelSelector=tier%3D0&limit=1", nil)
	if path(l, "metadata.remainingItemCount") != nil || str(l, "metadata.continue") == "" {
		t.Errorf("selector page: got metadata %v; want a continue token and no remainingItemCount", l["metadata"])
	}
	for _, q := range []string{"labelSelector=a+in+(", "labelSelector=%3D%3Dx", "fieldSelector=spec.size%3D1", "fieldSelector=metadata.name"} {
		t.Run("bad "+q, func(t *testing.T) {
			r := s.do("GET", widgetsPath+"?"+q, nil)
			if r.code != 400 || r.obj(t)["reason"] != "BadRequest" {
				t.Fatalf("got %d %s; want 400 BadRequest", r.code, r.body)
			}
		})
	}
	// deletecollection honours the selectors.
	d := s.must(200, "DELETE", widgetsPath+"?labelSelector=tier%3D0", nil)
	if got := strings.Join(names(d), ","); got != "w00,w02" {
		t.Errorf("deletecollection answered %s; want the deleted w00,w02", got)
	}
	if got := strings.Join(names(s.must(200, "GET", widgetsPath, nil)), ","); got != "w01,w03" {
		t.Errorf("after deletecollection: got %s; want w01,w03", got)
	}
}

func TestResourceVersionMatrix(t *testing.T) {
	s := newServer(t)
	a := s.must(201, "POST", widgetsPath, widget("a", nil, nil))
	rvA := str(a, "metadata.resourceVersion")
	s.must(201, "POST", widgetsPath, widget("b", nil, nil))
	cur := str(s.must(200, "GET", widgetsPath, nil), "metadata.resourceVersion")
	tests := []struct {
		name, query string
		code        int
		reason      string
		items       string // for 200s
		listRV      string // for 200s, "" = don't check
	}{
		{"unset", "", 200, "", "a,b", cur},
		{"any", "resourceVersion=0", 200, "", "a,b", ""},
		{"not older than", "resourceVersion=" + rvA, 200, "", "a,b", ""},
		{"exact", "resourceVersion=" + rvA + "&resourceVersionMatch=Exact", 200, "", "a", rvA},
		{"legacy limit means exact", "resourceVersion=" + rvA + "&limit=5", 200, "", "a", rvA},
		{"NotOlderThan 0 is any", "resourceVersion=0&resourceVersionMatch=NotOlderThan", 200, "", "a,b", ""},
		{"match without rv", "resourceVersionMatch=Exact", 422, "Invalid", "", ""},
		{"exact with 0", "resourceVersion=0&resourceVersionMatch=Exact", 422, "Invalid", "", ""},
		{"unknown match", "resourceVersion=1&resourceVersionMatch=Newest", 422, "Invalid", "", ""},
		{"sendInitialEvents on list", "sendInitialEvents=true", 422, "Invalid", "", ""},
		{"garbage rv", "resourceVersion=abc", 400, "BadRequest", "", ""},
		{"too large", "resourceVersion=999999&resourceVersionMatch=NotOlderThan", 504, "Timeout", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do("GET", widgetsPath+"?"+tc.query, nil)
			if r.code != tc.code {
				t.Fatalf("got %d; want %d: %s", r.code, tc.code, r.body)
			}
			m := r.obj(t)
			if tc.code != 200 {
				if m["reason"] != tc.reason {
					t.Errorf("reason: got %v; want %s", m["reason"], tc.reason)
				}
				return
			}
			if got := strings.Join(names(m), ","); got != tc.items {
				t.Errorf("items: got %s; want %s", got, tc.items)
			}
			if tc.listRV != "" && str(m, "metadata.resourceVersion") != tc.listRV {
				t.Errorf("list resourceVersion: got %s; want %s", str(m, "metadata.resourceVersion"), tc.listRV)
			}
		})
	}
	r := s.do("GET", widgetsPath+"?resourceVersion=999999&resourceVersionMatch=NotOlderThan", nil)
	if r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "ResourceVersionTooLarge") {
		t.Errorf("too large: got header %v body %s; want Retry-After and cause ResourceVersionTooLarge", r.header, r.body)
	}
	if g := s.do("GET", widgetsPath+"/a?resourceVersion=999999", nil); g.code != 504 {
		t.Errorf("get with a too large rv: got %d; want 504", g.code)
	}
}
