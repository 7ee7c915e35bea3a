package registry_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec/cbor"
	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry"
)

const (
	acceptProtobuf = "application/vnd.kubernetes.protobuf"
	acceptTable    = "application/json;as=Table;v=v1;g=meta.k8s.io"
)

// protoConfigMaps is configmaps with the core/v1 protobuf message.
func protoConfigMaps() *registry.Resource {
	res := configMaps()
	res.Plural, res.Kind, res.Group = "pconfigmaps", "ConfigMap", "proto.example.com"
	res.Protobuf = protobuf.ConfigMap
	return res
}

func TestProtobufObjects(t *testing.T) {
	s := newServer(t, protoConfigMaps())
	base := "/apis/proto.example.com/v1/namespaces/default/pconfigmaps"
	cm := map[string]any{"apiVersion": "proto.example.com/v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}},
		"data":     map[string]any{"k": "v"}}
	raw, err := protobuf.Marshal(protobuf.ConfigMap, cm)
	if err != nil {
		t.Fatal(err)
	}
	body := protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "proto.example.com/v1", Kind: "ConfigMap"}, raw)

	created := s.do("POST", base, body, "Content-Type", acceptProtobuf, "Accept", acceptProtobuf)
	if created.code != 201 {
		t.Fatalf("create with a protobuf body: %d %s", created.code, created.body)
	}
	if ct := created.header.Get("Content-Type"); ct != acceptProtobuf {
		t.Errorf("Content-Type = %q; want %q", ct, acceptProtobuf)
	}
	got := decodeProtobuf(t, protobuf.ConfigMap, created.body, "ConfigMap")
	if str(got, "metadata.name") != "a" || str(got, "data.k") != "v" || str(got, "metadata.uid") == "" || str(got, "metadata.resourceVersion") == "" {
		t.Errorf("created object = %v; want name a, data.k v, server fields set", got)
	}

	t.Run("list", func(t *testing.T) {
		r := s.do("GET", base, nil, "Accept", acceptProtobuf)
		tm, raw, err := protobuf.DecodeEnvelope(r.body)
		if err != nil || tm.Kind != "ConfigMapList" || tm.APIVersion != "proto.example.com/v1" {
			t.Fatalf("list envelope = %+v, %v; want ConfigMapList", tm, err)
		}
		if len(raw) == 0 {
			t.Error("empty list message")
		}
	})
	t.Run("falls back to JSON for resources without a message", func(t *testing.T) {
		r := s.do("GET", "/apis/example.com/v1/namespaces/default/widgets", nil, "Accept", acceptProtobuf+", application/json")
		if r.code != 200 || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("got %d %q; want 200 application/json", r.code, r.header.Get("Content-Type"))
		}
		r = s.do("GET", "/apis/example.com/v1/namespaces/default/widgets", nil, "Accept", acceptProtobuf)
		if r.code != 406 {
			t.Errorf("protobuf-only Accept on widgets: %d; want 406", r.code)
		}
		r = s.do("POST", "/apis/example.com/v1/namespaces/default/widgets", body, "Content-Type", acceptProtobuf)
		if r.code != 415 {
			t.Errorf("protobuf body to widgets: %d; want 415", r.code)
		}
	})
	t.Run("errors answer in protobuf", func(t *testing.T) {
		r := s.do("GET", base+"/missing", nil, "Accept", acceptProtobuf+", application/json")
		if r.code != 404 || r.header.Get("Content-Type") != acceptProtobuf {
			t.Fatalf("got %d %q; want 404 in protobuf", r.code, r.header.Get("Content-Type"))
		}
		st := decodeProtobuf(t, protobuf.Status, r.body, "Status")
		if st["reason"] != "NotFound" || fmt.Sprint(st["code"]) != "404" {
			t.Errorf("status = %v; want NotFound 404", st)
		}
	})
	t.Run("a value the message cannot carry is 400", func(t *testing.T) {
		bad := `{"apiVersion":"proto.example.com/v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"k":1}}`
		if r := s.do("POST", base, bad); r.code != 400 {
			t.Errorf("got %d %s; want 400", r.code, r.body)
		}
	})
	t.Run("bad envelope is 400", func(t *testing.T) {
		for _, b := range [][]byte{[]byte("k8s"), []byte("{}"), append([]byte("k8s\x00"), 0xff, 0xff)} {
			if r := s.do("POST", base, b, "Content-Type", acceptProtobuf); r.code != 400 {
				t.Errorf("body %q: %d %s; want 400", b, r.code, r.body)
			}
		}
	})
	t.Run("delete with protobuf DeleteOptions", func(t *testing.T) {
		do, err := protobuf.Marshal(protobuf.DeleteOptions, map[string]any{"dryRun": []any{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		env := protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "DeleteOptions"}, do)
		if r := s.do("DELETE", base+"/a", env, "Content-Type", acceptProtobuf); r.code != 200 {
			t.Fatalf("dry-run delete: %d %s", r.code, r.body)
		}
		if r := s.do("GET", base+"/a", nil); r.code != 200 {
			t.Errorf("object gone after a dry-run delete: %d", r.code)
		}
	})
}

func decodeProtobuf(t *testing.T, md protoreflect.MessageDescriptor, b []byte, kind string) map[string]any {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("k8s\x00")) {
		t.Fatalf("body does not start with the protobuf magic: %q", b)
	}
	tm, raw, err := protobuf.DecodeEnvelope(b)
	if err != nil {
		t.Fatalf("envelope: %v", err)
	}
	if tm.Kind != kind {
		t.Errorf("envelope kind = %q; want %q", tm.Kind, kind)
	}
	m, err := protobuf.Unmarshal(md, raw)
	if err != nil {
		t.Fatalf("message: %v", err)
	}
	return m
}

func TestYAML(t *testing.T) {
	s := newServer(t)
	base := "/api/v1/namespaces/default/configmaps"
	body := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yml\ndata:\n  k: v\n"
	r := s.do("POST", base, body, "Content-Type", "application/yaml", "Accept", "application/yaml")
	if r.code != 201 || r.header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("create from YAML: %d %q %s", r.code, r.header.Get("Content-Type"), r.body)
	}
	if !bytes.Contains(r.body, []byte("name: yml")) || !bytes.Contains(r.body, []byte("resourceVersion:")) {
		t.Errorf("YAML response lacks the object: %s", r.body)
	}
	if r := s.do("GET", base, nil, "Accept", "application/yaml"); !bytes.HasPrefix(r.body, []byte("apiVersion: v1\nitems:\n")) {
		t.Errorf("YAML list = %s", r.body)
	}
	if r := s.do("GET", base+"?watch=true", nil, "Accept", "application/yaml"); r.code != 406 {
		t.Errorf("YAML watch: %d; want 406 as kube", r.code)
	}
	bomb := "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	for name, b := range map[string]string{"alias bomb": bomb, "deep": deep, "not a map": "- a\n- b\n", "syntax": "a: [b\n", "empty document": "---\n"} {
		if r := s.do("POST", base, b, "Content-Type", "application/yaml"); r.code != 400 {
			t.Errorf("%s: %d %s; want 400", name, r.code, r.body)
		}
	}
}

func TestCBOR(t *testing.T) {
	s := newServer(t)
	base := "/apis/example.com/v1/namespaces/default/widgets"
	b, err := cbor.Marshal(widget("c", nil, map[string]any{"replicas": int64(2), "ratio": 0.5}))
	if err != nil {
		t.Fatal(err)
	}
	r := s.do("POST", base, b, "Content-Type", "application/cbor", "Accept", "application/cbor")
	if r.code != 201 || r.header.Get("Content-Type") != "application/cbor" {
		t.Fatalf("create from CBOR: %d %q %s", r.code, r.header.Get("Content-Type"), r.body)
	}
	if !bytes.HasPrefix(r.body, []byte(cbor.SelfDescribed)) {
		t.Errorf("CBOR body lacks the self-described tag: % x", r.body[:min(8, len(r.body))])
	}
	got, err := cbor.Unmarshal(r.body)
	if err != nil {
		t.Fatal(err)
	}
	if str(got, "metadata.name") != "c" || fmt.Sprint(path(got, "spec.replicas")) != "2" || fmt.Sprint(path(got, "spec.ratio")) != "0.5" {
		t.Errorf("CBOR object = %v", got)
	}
	l, err := cbor.Unmarshal(s.do("GET", base, nil, "Accept", "application/cbor").body)
	if err != nil || l["kind"] != "WidgetList" || len(l["items"].([]any)) != 1 {
		t.Errorf("CBOR list = %v, %v", l, err)
	}
	w := s.do("GET", base+"?watch=true&timeoutSeconds=1", nil, "Accept", "application/cbor")
	if w.header.Get("Content-Type") != "application/cbor-seq" || !bytes.HasPrefix(w.body, []byte(cbor.SelfDescribed)) {
		t.Errorf("CBOR watch: %q % x", w.header.Get("Content-Type"), w.body[:min(8, len(w.body))])
	}
	if r := s.do("POST", base, []byte{0xd9, 0xd9, 0xf7, 0xbf}, "Content-Type", "application/cbor"); r.code != 400 {
		t.Errorf("malformed CBOR: %d; want 400", r.code)
	}
}

func TestTable(t *testing.T) {
	res := widgets()
	res.Columns = []registry.Column{
		{Name: "Color", Type: "string", JSONPath: ".spec.color"},
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
		{Name: "Ready", Type: "string", JSONPath: `.spec.conditions[?(@.type=="Ready")].status`, Priority: 1},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	}
	res.Plural, res.Group = "colored", "table.example.com"
	s := newServer(t, res)
	base := "/apis/table.example.com/v1/namespaces/default/colored"
	w := widget("t", nil, map[string]any{"color": "red", "replicas": 3})
	w["apiVersion"] = "table.example.com/v1"
	w["spec"].(map[string]any)["conditions"] = ([]any{map[string]any{"type": "Other", "status": "False"}, map[string]any{"type": "Ready", "status": "True"}})
	s.must(201, "POST", base, w)

	tb := s.must(200, "GET", base, nil, "Accept", acceptTable+", application/json")
	if tb["kind"] != "Table" || tb["apiVersion"] != "meta.k8s.io/v1" {
		t.Fatalf("got %v %v; want a meta.k8s.io/v1 Table", tb["kind"], tb["apiVersion"])
	}
	var names []string
	for _, c := range tb["columnDefinitions"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	if got := strings.Join(names, ","); got != "Name,Color,Replicas,Ready,Age" {
		t.Errorf("columns = %s", got)
	}
	row := tb["rows"].([]any)[0].(map[string]any)
	cells := row["cells"].([]any)
	if fmt.Sprint(cells[:4]) != "[t red 3 True]" || !strings.HasSuffix(cells[4].(string), "s") {
		t.Errorf("cells = %v; want [t red 3 True <age>]", cells)
	}
	if obj := row["object"].(map[string]any); obj["kind"] != "PartialObjectMetadata" {
		t.Errorf("default includeObject: row object kind %v; want PartialObjectMetadata", obj["kind"])
	}
	if str(tb, "metadata.resourceVersion") == "" {
		t.Error("table list lacks metadata.resourceVersion")
	}

	full := s.must(200, "GET", base+"/t?includeObject=Object", nil, "Accept", acceptTable)
	if obj := full["rows"].([]any)[0].(map[string]any)["object"].(map[string]any); obj["kind"] != "Widget" {
		t.Errorf("includeObject=Object: %v", obj["kind"])
	}
	none := s.must(200, "GET", base+"/t?includeObject=None", nil, "Accept", acceptTable)
	if obj, ok := none["rows"].([]any)[0].(map[string]any)["object"]; !ok || obj != nil {
		t.Errorf("includeObject=None: row object %v (present %v); want null, as kube writes it", obj, ok)
	}
	if r := s.do("GET", base+"?includeObject=All", nil, "Accept", acceptTable); r.code != 400 {
		t.Errorf("bad includeObject: %d; want 400", r.code)
	}

	t.Run("default columns", func(t *testing.T) {
		s.must(201, "POST", "/api/v1/namespaces/default/configmaps", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "d"}})
		tb := s.must(200, "GET", "/api/v1/namespaces/default/configmaps/d", nil, "Accept", acceptTable)
		defs := tb["columnDefinitions"].([]any)
		if len(defs) != 2 || defs[1].(map[string]any)["name"] != "Created At" {
			t.Errorf("default columns = %v; want Name, Created At", defs)
		}
	})
	t.Run("a column of format name: no leading Name", func(t *testing.T) {
		res := widgets()
		res.Plural, res.Group = "named", "named.example.com"
		res.Columns = []registry.Column{
			{Name: "Color", Type: "string", JSONPath: ".spec.color"},
			{Name: "Name", Type: "string", Format: "name", Priority: 1, JSONPath: ".metadata.name"},
		}
		s := newServer(t, res)
		base := "/apis/named.example.com/v1/namespaces/default/named"
		w := widget("n", nil, map[string]any{"color": "green"})
		w["apiVersion"] = "named.example.com/v1"
		s.must(201, "POST", base, w)
		tb := s.must(200, "GET", base, nil, "Accept", acceptTable)
		var names []string
		for _, c := range tb["columnDefinitions"].([]any) {
			names = append(names, fmt.Sprint(c.(map[string]any)["name"], "/", c.(map[string]any)["format"]))
		}
		if got, want := strings.Join(names, ","), "Color/,Name/name"; got != want {
			t.Errorf("columns %s; want %s", got, want)
		}
		if cells := tb["rows"].([]any)[0].(map[string]any)["cells"].([]any); fmt.Sprint(cells) != "[green n]" {
			t.Errorf("cells %v; want [green n]", cells)
		}
	})
	t.Run("watch: headers on the first event only", func(t *testing.T) {
		ws := s.watch(base+"?watch=true&timeoutSeconds=5", "Accept", acceptTable)
		first := evObj(ws.next())
		if first["kind"] != "Table" || first["columnDefinitions"] == nil || len(first["rows"].([]any)) != 1 {
			t.Fatalf("first event = %v; want a Table with columns and one row", first)
		}
		w2 := widget("t2", nil, map[string]any{"color": "blue"})
		w2["apiVersion"] = "table.example.com/v1"
		s.must(201, "POST", base, w2)
		second := evObj(ws.next())
		if second["columnDefinitions"] != nil {
			t.Errorf("second event carries column definitions: %v", second["columnDefinitions"])
		}
		if cells := second["rows"].([]any)[0].(map[string]any)["cells"].([]any); cells[0] != "t2" || cells[1] != "blue" {
			t.Errorf("second event cells = %v", cells)
		}
	})
}

func TestPartialObjectMetadata(t *testing.T) {
	s := newServer(t)
	base := "/apis/example.com/v1/namespaces/default/widgets"
	s.must(201, "POST", base, widget("p", map[string]string{"a": "b"}, map[string]any{"color": "red"}))
	pom := "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	got := s.must(200, "GET", base+"/p", nil, "Accept", pom)
	if got["kind"] != "PartialObjectMetadata" || got["apiVersion"] != "meta.k8s.io/v1" || got["spec"] != nil || str(got, "metadata.labels.a") != "b" {
		t.Errorf("got %v", got)
	}
	l := s.must(200, "GET", base, nil, "Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	if l["kind"] != "PartialObjectMetadataList" || l["items"].([]any)[0].(map[string]any)["kind"] != "PartialObjectMetadata" {
		t.Errorf("list = %v", l)
	}
	if r := s.do("GET", base, nil, "Accept", pom); r.code != 406 {
		t.Errorf("as=PartialObjectMetadata on a list: %d; want 406", r.code)
	}
	pb := s.do("GET", base+"/p", nil, "Accept", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	if m := decodeProtobuf(t, protobuf.PartialObjectMetadata, pb.body, "PartialObjectMetadata"); str(m, "metadata.name") != "p" {
		t.Errorf("protobuf PartialObjectMetadata = %v", m)
	}
}

func TestGzipAndPretty(t *testing.T) {
	s := newServer(t)
	base := "/api/v1/namespaces/default/configmaps"
	big := strings.Repeat("x", 100<<10)
	for i := range 3 {
		s.must(201, "POST", base, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprint("c", i)}, "data": map[string]any{"k": big}})
	}
	req, _ := http.NewRequest("GET", s.url+base, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("a 300 KiB list with Accept-Encoding: gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var l map[string]any
	if err := json.NewDecoder(zr).Decode(&l); err != nil || len(l["items"].([]any)) != 3 {
		t.Errorf("gunzipped list: %v", err)
	}
	small := s.do("GET", base+"/c0", nil, "Accept-Encoding", "gzip")
	if small.header.Get("Content-Encoding") != "" {
		t.Error("a 100 KiB object was compressed; kube compresses above 128 KiB")
	}
	if r := s.do("GET", base+"/c0?pretty=true", nil); !bytes.Contains(r.body, []byte("\n  \"kind\"")) && !bytes.Contains(r.body, []byte("\n  \"apiVersion\"")) {
		t.Errorf("pretty=true is not indented: %.80s", r.body)
	}
}
