package codec

import (
	"errors"
	"maps"
	"strconv"
	"strings"
	"testing"
)

func TestParseMediaType(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		typ    string
		params map[string]string
		err    bool
	}{
		{name: "plain", in: "application/json", typ: "application/json"},
		{name: "charset", in: "application/json; charset=utf-8", typ: "application/json", params: map[string]string{"charset": "utf-8"}},
		{name: "case folded type and key", in: "Application/JSON;Charset=UTF-8", typ: "application/json", params: map[string]string{"charset": "UTF-8"}},
		{name: "patch type", in: "application/merge-patch+json", typ: "application/merge-patch+json"},
		{name: "quoted value", in: `text/plain; x="a;b\"c"`, typ: "text/plain", params: map[string]string{"x": `a;b"c`}},
		{name: "q is a plain parameter", in: "application/json;q=0.5", typ: "application/json", params: map[string]string{"q": "0.5"}},
		{name: "several params", in: "application/json;as=Table;g=meta.k8s.io;v=v1", typ: "application/json", params: map[string]string{"as": "Table", "g": "meta.k8s.io", "v": "v1"}},
		{name: "stream", in: "application/vnd.kubernetes.protobuf;stream=watch", typ: "application/vnd.kubernetes.protobuf", params: map[string]string{"stream": "watch"}},
		{name: "trailing semicolon", in: "application/json;", typ: "application/json"},
		{name: "empty", in: "", err: true},
		{name: "no subtype", in: "application", err: true},
		{name: "empty subtype", in: "application/", err: true},
		{name: "wildcard", in: "*/*", err: true},
		{name: "subtype wildcard", in: "application/*", err: true},
		{name: "space in type", in: "application/ json", err: true},
		{name: "two slashes", in: "a/b/c", err: true},
		{name: "param without value", in: "application/json;charset", err: true},
		{name: "param empty value", in: "application/json;charset=", err: true},
		{name: "duplicate param", in: "application/json;a=1;a=2", err: true},
		{name: "unterminated quote", in: `application/json;a="x`, err: true},
		{name: "junk after value", in: "application/json;a=b c", err: true},
		{name: "semicolons only", in: ";;;", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMediaType(tt.in)
			if tt.err {
				if !errors.Is(err, ErrInvalidMediaType) {
					t.Fatalf("ParseMediaType(%q) error = %v; want ErrInvalidMediaType", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseMediaType(%q) error = %v; want nil", tt.in, err)
			}
			if got.Type != tt.typ || !maps.Equal(got.Params, tt.params) || got.Q != 1 {
				t.Errorf("ParseMediaType(%q) = %+v; want Type %q Params %v Q 1", tt.in, got, tt.typ, tt.params)
			}
		})
	}
}

func TestMediaTypeString(t *testing.T) {
	tests := []struct {
		name string
		in   MediaType
		want string
	}{
		{name: "plain", in: MediaType{Type: "application/json"}, want: "application/json"},
		{name: "sorted params", in: MediaType{Type: "application/json", Params: map[string]string{"v": "v1", "as": "Table", "g": "meta.k8s.io"}}, want: "application/json;as=Table;g=meta.k8s.io;v=v1"},
		{name: "quoted", in: MediaType{Type: "text/plain", Params: map[string]string{"x": `a b"`, "e": ""}}, want: `text/plain;e="";x="a b\""`},
		{name: "q not written", in: MediaType{Type: "application/yaml", Q: 0.5}, want: "application/yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.String()
			if got != tt.want {
				t.Fatalf("String() = %q; want %q", got, tt.want)
			}
			back, err := ParseMediaType(got)
			if err != nil {
				t.Fatalf("ParseMediaType(%q) error = %v; want nil", got, err)
			}
			if back.String() != got {
				t.Errorf("round trip = %q; want %q", back.String(), got)
			}
		})
	}
}

// rangesOf renders parsed ranges compactly: "type;params q, ...".
func rangesOf(ms []MediaType) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, m.String()+" "+strconv.FormatFloat(m.Q, 'f', -1, 64))
	}
	return strings.Join(parts, ", ")
}

func TestParseAccept(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   string
		err    bool
	}{
		{name: "empty", header: "", want: "*/* 1"},
		{name: "blank", header: " , ", want: "*/* 1"},
		{name: "json", header: "application/json", want: "application/json 1"},
		{name: "json and any", header: "application/json, */*", want: "application/json 1, */* 1"},
		{name: "specific before wildcard at equal q", header: "*/*, application/*, application/yaml", want: "application/yaml 1, application/* 1, */* 1"},
		{name: "protobuf first", header: "application/vnd.kubernetes.protobuf, */*", want: "application/vnd.kubernetes.protobuf 1, */* 1"},
		{name: "q order", header: "application/yaml;q=0.5, application/json;q=0.9", want: "application/json 0.9, application/yaml 0.5"},
		{name: "stable for equal q", header: "application/yaml, application/json", want: "application/yaml 1, application/json 1"},
		{name: "java", header: "text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2", want: "text/html 1, image/gif 1, image/jpeg 1, */* 0.2, */* 0.2"},
		{name: "dot only q", header: "a/b;q=.", err: true},
		{name: "empty quoted q", header: `a/b;q=""`, err: true},
		{name: "java star", header: "text/html, *;q=0.2", want: "text/html 1, */* 0.2"},
		{name: "table", header: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
			want: "application/json;as=Table;g=meta.k8s.io;v=v1 1, application/json 1"},
		{name: "comma in quotes", header: `text/plain;x="a,b", application/json`, want: `text/plain;x="a,b" 1, application/json 1`},
		{name: "q zero", header: "application/json;q=0", want: "application/json 0"},
		{name: "q one point zero", header: "application/json;q=1.000", want: "application/json 1"},
		{name: "bad q", header: "application/json;q=abc", err: true},
		{name: "q above one", header: "application/json;q=1.5", err: true},
		{name: "negative q", header: "application/json;q=-0.5", err: true},
		{name: "exponent q", header: "application/json;q=1e-1", err: true},
		{name: "nan q", header: "application/json;q=NaN", err: true},
		{name: "semicolons", header: ";;;", err: true},
		{name: "one bad range", header: "application/json, nonsense", err: true},
		{name: "star subtype only", header: "*/json", err: true},
		{name: "partial wildcard", header: "application/js*", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAccept(tt.header)
			if tt.err {
				if !errors.Is(err, ErrInvalidMediaType) {
					t.Fatalf("ParseAccept(%q) = %v, %v; want ErrInvalidMediaType", tt.header, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAccept(%q) error = %v; want nil", tt.header, err)
			}
			if s := rangesOf(got); s != tt.want {
				t.Errorf("ParseAccept(%q) = %s; want %s", tt.header, s, tt.want)
			}
		})
	}
}

var (
	jsonOffer      = MustParseMediaType("application/json")
	yamlOffer      = MustParseMediaType("application/yaml")
	protobufOffer  = MustParseMediaType("application/vnd.kubernetes.protobuf")
	tableOffer     = MustParseMediaType("application/json;as=Table;g=meta.k8s.io;v=v1")
	discoveryV2    = MustParseMediaType("application/json;as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2")
	jsonWatchOffer = MustParseMediaType("application/json;stream=watch")
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name   string
		accept string
		offers []MediaType
		want   string // "" when nothing is acceptable
	}{
		{name: "json", accept: "application/json", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/json"},
		{name: "json then any", accept: "application/json, */*", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/json"},
		{name: "any", accept: "*/*", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/json"},
		{name: "empty", accept: "", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/json"},
		{name: "yaml", accept: "application/yaml", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/yaml"},
		{name: "protobuf falls back", accept: "application/vnd.kubernetes.protobuf, */*", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/json"},
		{name: "protobuf offered", accept: "application/vnd.kubernetes.protobuf, */*", offers: []MediaType{jsonOffer, protobufOffer}, want: "application/vnd.kubernetes.protobuf"},
		{name: "protobuf only", accept: "application/vnd.kubernetes.protobuf", offers: []MediaType{jsonOffer, yamlOffer}},
		{name: "kubectl table falls back to json",
			accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
			offers: []MediaType{jsonOffer, yamlOffer}, want: "application/json"},
		{name: "kubectl table served",
			accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
			offers: []MediaType{jsonOffer, tableOffer}, want: "application/json;as=Table;g=meta.k8s.io;v=v1"},
		{name: "plain json never gets a table", accept: "application/json", offers: []MediaType{tableOffer}},
		{name: "any never gets a table", accept: "*/*", offers: []MediaType{tableOffer, jsonOffer}, want: "application/json"},
		{name: "aggregated discovery",
			accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
			offers: []MediaType{jsonOffer, discoveryV2}, want: "application/json;as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2"},
		{name: "aggregated discovery no peer falls to v2",
			accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
			offers: []MediaType{jsonOffer, discoveryV2}, want: "application/json;as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2"},
		{name: "legacy discovery", accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
			offers: []MediaType{jsonOffer}, want: "application/json"},
		{name: "param values case-insensitive", accept: "application/json;as=table;g=META.k8s.io;v=V1", offers: []MediaType{tableOffer}, want: "application/json;as=Table;g=meta.k8s.io;v=v1"},
		{name: "stream param", accept: "application/json;stream=watch", offers: []MediaType{jsonOffer, jsonWatchOffer}, want: "application/json;stream=watch"},
		{name: "stream param not offered", accept: "application/json;stream=watch", offers: []MediaType{jsonOffer}},
		{name: "charset and pretty ignored", accept: "application/json;charset=utf-8;pretty=1", offers: []MediaType{jsonOffer}, want: "application/json"},
		{name: "q values", accept: "application/yaml;q=0.5, application/json;q=0.9", offers: []MediaType{yamlOffer, jsonOffer}, want: "application/json"},
		{name: "q values lower first", accept: "application/yaml;q=0.9, application/json;q=0.5", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/yaml"},
		{name: "subtype wildcard", accept: "application/*", offers: []MediaType{yamlOffer, jsonOffer}, want: "application/yaml"},
		{name: "other type wildcard", accept: "text/*", offers: []MediaType{jsonOffer}},
		{name: "q zero excludes", accept: "application/json;q=0, */*", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/yaml"},
		{name: "q zero only", accept: "application/json;q=0", offers: []MediaType{jsonOffer}},
		{name: "q zero any but specific", accept: "*/*;q=0, application/yaml", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/yaml"},
		{name: "q zero wildcard loses to specific", accept: "application/*;q=0, application/json;q=0.1", offers: []MediaType{yamlOffer, jsonOffer}, want: "application/json"},
		{name: "specific range first at equal q", accept: "*/*, application/yaml", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/yaml"},
		{name: "browser", accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", offers: []MediaType{jsonOffer, yamlOffer}, want: "application/json"},
		{name: "no offers", accept: "*/*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			accept, err := ParseAccept(tt.accept)
			if err != nil {
				t.Fatalf("ParseAccept(%q) error = %v; want nil", tt.accept, err)
			}
			got, ok := Negotiate(accept, tt.offers)
			switch {
			case tt.want == "" && ok:
				t.Errorf("Negotiate(%q) = %q, true; want no match", tt.accept, got)
			case tt.want != "" && (!ok || got.String() != tt.want):
				t.Errorf("Negotiate(%q) = %q, %v; want %q, true", tt.accept, got, ok, tt.want)
			}
		})
	}
}

func TestNegotiateNoRanges(t *testing.T) {
	got, ok := Negotiate(nil, []MediaType{yamlOffer, jsonOffer})
	if !ok || got.Type != "application/yaml" {
		t.Errorf("Negotiate(nil) = %q, %v; want application/yaml, true", got, ok)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		name       string
		rng, offer string
		want       bool
	}{
		{name: "equal", rng: "application/json", offer: "application/json", want: true},
		{name: "different", rng: "application/yaml", offer: "application/json"},
		{name: "subtype prefix is not a wildcard", rng: "application/js", offer: "application/json"},
		{name: "range param missing in offer", rng: "application/json;as=Table", offer: "application/json"},
		{name: "offer param missing in range", rng: "application/json", offer: "application/json;as=Table"},
		{name: "offer charset ignored", rng: "application/json", offer: "application/json;charset=utf-8", want: true},
		{name: "different values", rng: "application/json;v=v1", offer: "application/json;v=v2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Match(MustParseMediaType(tt.rng), MustParseMediaType(tt.offer)); got != tt.want {
				t.Errorf("Match(%q, %q) = %v; want %v", tt.rng, tt.offer, got, tt.want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	offers := []MediaType{jsonOffer, yamlOffer, jsonOffer, protobufOffer}
	tests := []struct {
		name string
		err  error
		kind error
		msg  string
	}{
		{name: "not acceptable", err: NotAcceptable(offers), kind: ErrNotAcceptable,
			msg: "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"},
		{name: "unsupported", err: UnsupportedMediaType(offers[:2]), kind: ErrUnsupportedMediaType,
			msg: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, tt.kind) {
				t.Errorf("errors.Is(%v, %v) = false; want true", tt.err, tt.kind)
			}
			var e *Error
			if !errors.As(tt.err, &e) || e.Msg != tt.msg || tt.err.Error() != tt.msg {
				t.Errorf("message = %q; want %q", tt.err.Error(), tt.msg)
			}
		})
	}
}

func TestMustParseMediaTypePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("MustParseMediaType(%q) did not panic; want panic", "bad")
		}
	}()
	MustParseMediaType("bad")
}

func FuzzParseAccept(f *testing.F) {
	for _, s := range []string{
		"", "*/*", "application/json", "application/json, */*",
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
		"application/yaml;q=0.5, application/json;q=0.9", "application/json;q=abc", ";;;",
		`text/plain;x="a,\"b"`, "*;q=.2", "a/b;c=d;;e=f", `a/b;c="`,
	} {
		f.Add(s)
	}
	offers := []MediaType{jsonOffer, yamlOffer, tableOffer, jsonWatchOffer}
	f.Fuzz(func(t *testing.T, header string) {
		accept, err := ParseAccept(header)
		if err != nil {
			if !errors.Is(err, ErrInvalidMediaType) {
				t.Fatalf("ParseAccept(%q) error %v does not wrap ErrInvalidMediaType", header, err)
			}
			return
		}
		if len(accept) == 0 {
			t.Fatalf("ParseAccept(%q) returned no ranges", header)
		}
		for i, m := range accept {
			if m.Q < 0 || m.Q > 1 {
				t.Fatalf("range %d has q %v; want 0..1", i, m.Q)
			}
			if i > 0 && accept[i-1].Q < m.Q {
				t.Fatalf("ranges not sorted by q: %v", accept)
			}
		}
		if got, ok := Negotiate(accept, offers); ok {
			var matched bool
			for _, r := range accept {
				matched = matched || (r.Q > 0 && Match(r, got))
			}
			if !matched {
				t.Fatalf("Negotiate chose %q, which no positive range matches", got)
			}
		}
	})
}

func FuzzParseMediaType(f *testing.F) {
	for _, s := range []string{
		"application/json", "application/json; charset=utf-8", `text/plain; x="a;b\"c"`,
		"*/*", "", ";;;", "a/b;c", "a/b;c=", "A/B;C=D",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMediaType(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidMediaType) {
				t.Fatalf("ParseMediaType(%q) error %v does not wrap ErrInvalidMediaType", s, err)
			}
			return
		}
		back, err := ParseMediaType(m.String())
		if err != nil {
			t.Fatalf("ParseMediaType(%q) error = %v after String() of %q", m.String(), err, s)
		}
		if back.Type != m.Type || !maps.Equal(back.Params, m.Params) {
			t.Fatalf("round trip of %q: got %+v; want %+v", s, back, m)
		}
	})
}
