package validation

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

const (
	subdomainMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	labelMsg     = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	namePartMsg  = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
	valueMsg     = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`
)

func TestStringRules(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name  string
		check func(string) []string
		in    string
		want  []string
	}{
		{name: "subdomain ok", check: IsDNS1123Subdomain, in: "example.com"},
		{name: "subdomain digits", check: IsDNS1123Subdomain, in: "0-a.1"},
		{name: "subdomain max", check: IsDNS1123Subdomain, in: long(253)},
		{name: "subdomain too long", check: IsDNS1123Subdomain, in: long(254), want: []string{"must be no more than 253 characters"}},
		{name: "subdomain upper", check: IsDNS1123Subdomain, in: "Foo", want: []string{subdomainMsg}},
		{name: "subdomain empty", check: IsDNS1123Subdomain, in: "", want: []string{subdomainMsg}},
		{name: "subdomain empty label", check: IsDNS1123Subdomain, in: "a..b", want: []string{subdomainMsg}},
		{name: "subdomain trailing dash", check: IsDNS1123Subdomain, in: "a-", want: []string{subdomainMsg}},
		{name: "subdomain too long and bad", check: IsDNS1123Subdomain, in: long(254) + "_", want: []string{"must be no more than 253 characters", subdomainMsg}},
		{name: "label ok", check: IsDNS1123Label, in: "my-name"},
		{name: "label dots", check: IsDNS1123Label, in: "a.b", want: []string{"must not contain dots"}},
		{name: "label too long", check: IsDNS1123Label, in: long(64), want: []string{"must be no more than 63 characters"}},
		{name: "label bad", check: IsDNS1123Label, in: "-a", want: []string{labelMsg}},
		{name: "key ok", check: IsQualifiedName, in: "MyName"},
		{name: "key prefixed", check: IsQualifiedName, in: "example.com/My_name.x-1"},
		{name: "key name too long", check: IsQualifiedName, in: long(64), want: []string{"name part must be no more than 63 bytes"}},
		{name: "key empty", check: IsQualifiedName, in: "", want: []string{"name part must be non-empty", namePartMsg}},
		{name: "key empty name", check: IsQualifiedName, in: "example.com/", want: []string{"name part must be non-empty", namePartMsg}},
		{name: "key empty prefix", check: IsQualifiedName, in: "/a", want: []string{"prefix part must be non-empty"}},
		{name: "key bad prefix", check: IsQualifiedName, in: "Example.com/a", want: []string{"prefix part " + subdomainMsg}},
		{name: "key long prefix", check: IsQualifiedName, in: long(254) + "/a", want: []string{"prefix part must be no more than 253 bytes"}},
		{name: "key bad name", check: IsQualifiedName, in: "a/-b", want: []string{namePartMsg}},
		{name: "key two slashes", check: IsQualifiedName, in: "a/b/c", want: []string{`a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`}},
		{name: "value empty", check: IsValidLabelValue, in: ""},
		{name: "value ok", check: IsValidLabelValue, in: "My_value.1"},
		{name: "value too long", check: IsValidLabelValue, in: long(64), want: []string{"must be no more than 63 bytes"}},
		{name: "value bad", check: IsValidLabelValue, in: "a b", want: []string{valueMsg}},
		{name: "segment ok", check: IsPathSegmentName, in: "a.b"},
		{name: "segment dot", check: IsPathSegmentName, in: ".", want: []string{"may not be '.'"}},
		{name: "segment dotdot", check: IsPathSegmentName, in: "..", want: []string{"may not be '..'"}},
		{name: "segment slash percent", check: IsPathSegmentName, in: "a/%", want: []string{"may not contain '/'", "may not contain '%'"}},
		{name: "prefix dotdot allowed", check: IsPathSegmentPrefix, in: ".."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.check(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("check(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		name string
		err  Error
		want string
	}{
		{name: "invalid", err: Error{Type: TypeInvalid, Field: "metadata.name", Value: "Foo", Detail: subdomainMsg},
			want: `metadata.name: Invalid value: "Foo": ` + subdomainMsg},
		{name: "required", err: Error{Type: TypeRequired, Field: "metadata.name", Detail: "name or generateName is required"},
			want: "metadata.name: Required value: name or generateName is required"},
		{name: "required no detail", err: Error{Type: TypeRequired, Field: "metadata.namespace"}, want: "metadata.namespace: Required value"},
		{name: "forbidden", err: Error{Type: TypeForbidden, Field: "metadata.namespace", Detail: "not allowed on this type"},
			want: "metadata.namespace: Forbidden: not allowed on this type"},
		{name: "too long hides value", err: Error{Type: TypeTooLong, Field: "metadata.annotations", Value: "x", Detail: "may not be more than 262144 bytes"},
			want: "metadata.annotations: Too long: may not be more than 262144 bytes"},
		{name: "not supported", err: Error{Type: TypeNotSupported, Field: "dryRun", Value: "x", Detail: `supported values: "All"`},
			want: `dryRun: Unsupported value: "x": supported values: "All"`},
		{name: "duplicate", err: Error{Type: TypeDuplicate, Field: "spec.ports[1]", Value: map[string]any{"port": 80}},
			want: `spec.ports[1]: Duplicate value: {"port":80}`},
		{name: "integer", err: Error{Type: TypeInvalid, Field: "metadata.generation", Value: int64(-1), Detail: "must be greater than or equal to 0"},
			want: "metadata.generation: Invalid value: -1: must be greater than or equal to 0"},
		{name: "list", err: Error{Type: TypeInvalid, Field: "metadata.finalizers", Value: []string{"a", "b"}},
			want: `metadata.finalizers: Invalid value: ["a","b"]`},
		{name: "unknown type", err: Error{Type: "Bogus", Field: "x"},
			want: "x: Internal error: unhandled error code: Bogus: please report this"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q; want %q", got, tt.want)
			}
			if got, want := tt.err.ErrorBody(), strings.TrimPrefix(tt.want, tt.err.Field+": "); got != want {
				t.Errorf("ErrorBody() = %q; want %q", got, want)
			}
		})
	}
}

func TestGenerateName(t *testing.T) {
	tests := []struct {
		name, prefix, wantPrefix string
	}{
		{name: "short", prefix: "web-", wantPrefix: "web-"},
		{name: "empty", prefix: "", wantPrefix: ""},
		{name: "at limit", prefix: strings.Repeat("a", 58), wantPrefix: strings.Repeat("a", 58)},
		{name: "truncated", prefix: strings.Repeat("b", 80), wantPrefix: strings.Repeat("b", 58)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string]bool{}
			for range 20 {
				got := GenerateName(tt.prefix)
				if !strings.HasPrefix(got, tt.wantPrefix) || len(got) != len(tt.wantPrefix)+5 {
					t.Fatalf("GenerateName(%q) = %q; want %q + 5 characters", tt.prefix, got, tt.wantPrefix)
				}
				if strings.Trim(got[len(tt.wantPrefix):], alphabet) != "" {
					t.Fatalf("GenerateName(%q) = %q; suffix has characters outside %q", tt.prefix, got, alphabet)
				}
				if len(got) > 63 {
					t.Fatalf("len(GenerateName(%q)) = %d; want <= 63", tt.prefix, len(got))
				}
				seen[got] = true
			}
			// 27^5 possibilities: 20 draws colliding down to 1 would mean no randomness.
			if len(seen) < 2 {
				t.Errorf("GenerateName(%q) produced %d distinct names in 20 calls; want several", tt.prefix, len(seen))
			}
		})
	}
}

// The kube regular expressions the hand-written checks stand for.
var (
	reLabel     = regexp.MustCompile("^" + dns1123LabelFmt + "$")
	reSubdomain = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
	reName      = regexp.MustCompile("^" + qualifiedNameFmt + "$")
	reValue     = regexp.MustCompile("^" + labelValueFmt + "$")
)

func checkMatchers(t *testing.T, s string) {
	t.Helper()
	for _, c := range []struct {
		name string
		got  bool
		re   *regexp.Regexp
	}{
		{"label", isDNSLabel(s), reLabel},
		{"subdomain", isDNSSubdomain(s), reSubdomain},
		{"qualified name", isQualifiedNamePart(s), reName},
		{"label value", s == "" || isQualifiedNamePart(s), reValue},
	} {
		if want := c.re.MatchString(s); c.got != want {
			t.Errorf("%s(%q) = %v; want %v (regex %s)", c.name, s, c.got, want, c.re)
		}
	}
}

func TestMatchersAgreeWithRegex(t *testing.T) {
	for _, s := range []string{"", "a", "-", ".", "a.b", "a..b", ".a", "a.", "A", "a_b", "_a", "a-b", "a-", "0", "a/b", "é"} {
		t.Run(s, func(t *testing.T) { checkMatchers(t, s) })
	}
}

func FuzzMatchers(f *testing.F) {
	for _, s := range []string{"", "a", "a.b", "a..b", "-a", "A_b.c", "example.com", "x\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkMatchers(t, s)
		_ = IsQualifiedName(s)
		_ = IsDNS1123Label(s)
	})
}
