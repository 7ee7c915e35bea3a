package storage

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func req(key string, op Operator, vals ...string) Requirement {
	return Requirement{Key: key, Op: op, Values: vals}
}

func TestParseLabelSelector(t *testing.T) {
	long := strings.Repeat("x", 64)
	tests := []struct {
		in   string
		want Selector
		str  string // canonical form; "" means same as in
	}{
		{in: "", want: nil},
		{in: "  ", want: nil, str: ""},
		{in: "a=b", want: Selector{req("a", Equals, "b")}},
		{in: "a==b", want: Selector{req("a", Equals, "b")}, str: "a=b"},
		{in: "a!=b", want: Selector{req("a", NotEquals, "b")}},
		{in: "a=", want: Selector{req("a", Equals, "")}},
		{in: "a!=,b", want: Selector{req("a", NotEquals, ""), req("b", Exists)}},
		{in: "a", want: Selector{req("a", Exists)}},
		{in: "!a", want: Selector{req("a", DoesNotExist)}},
		{in: "a in (x,y)", want: Selector{req("a", In, "x", "y")}},
		{in: "a notin (y,x,x)", want: Selector{req("a", NotIn, "x", "y")}, str: "a notin (x,y)"},
		{in: "a in ()", want: Selector{req("a", In, "")}},
		{in: "a in (,x)", want: Selector{req("a", In, "", "x")}},
		{in: "a in (x,)", want: Selector{req("a", In, "", "x")}, str: "a in (,x)"},
		{in: "a in (x,,y)", want: Selector{req("a", In, "", "x", "y")}, str: "a in (,x,y)"},
		{in: "in in (in,notin)", want: Selector{req("in", In, "in", "notin")}},
		{in: "notin=in", want: Selector{req("notin", Equals, "in")}},
		{in: "b=1,a=2", want: Selector{req("a", Equals, "2"), req("b", Equals, "1")}, str: "a=2,b=1"},
		{in: "b,a!=1,a=1", want: Selector{req("a", NotEquals, "1"), req("a", Equals, "1"), req("b", Exists)}, str: "a!=1,a=1,b"},
		{in: " a = b , c in ( x , y ) ,\t!d\n", want: Selector{req("a", Equals, "b"), req("c", In, "x", "y"), req("d", DoesNotExist)}, str: "a=b,c in (x,y),!d"},
		{in: "a>1", want: Selector{req("a", GreaterThan, "1")}},
		{in: "b < 2,a>1", want: Selector{req("a", GreaterThan, "1"), req("b", LessThan, "2")}, str: "a>1,b<2"},
		{in: "example.com/app=web-1", want: Selector{req("example.com/app", Equals, "web-1")}},
		{in: "app.kubernetes.io/name=My_App.v2", want: Selector{req("app.kubernetes.io/name", Equals, "My_App.v2")}},
		{in: "A-b_c.D", want: Selector{req("A-b_c.D", Exists)}},
		{in: "a=" + long[:63], want: Selector{req("a", Equals, long[:63])}},
		{in: long[:63], want: Selector{req(long[:63], Exists)}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLabelSelector(tt.in)
			if err != nil {
				t.Fatalf("ParseLabelSelector(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseLabelSelector(%q) = %#v; want %#v", tt.in, got, tt.want)
			}
			str := tt.str
			if str == "" && tt.want != nil {
				str = tt.in
			}
			if s := got.String(); s != str {
				t.Errorf("String() = %q; want %q", s, str)
			}
		})
	}
}

func TestParseLabelSelectorErrors(t *testing.T) {
	long := strings.Repeat("x", 64)
	tests := []struct {
		in   string
		want string // a part of the message
	}{
		{"a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !="},
		{"a=b,", "found '', expected: identifier after ','"},
		{"a=b,,c", "found ',', expected: identifier after ','"},
		{",a", "found ',', expected: !, identifier, or 'end of string'"},
		{"=a", "found '=', expected: !, identifier, or 'end of string'"},
		{"(a)", "found '(', expected: !, identifier, or 'end of string'"},
		{"a in b", "found 'b' expected: '('"},
		{"a in", "found '' expected: '('"},
		{"a in (b", "found '', expected: ',' or ')'"},
		{"a in (b c)", "found 'c', expected: ',' or ')'"},
		{"a in (b=)", "found '=', expected: ',' or ')'"},
		{"a in (b,=)", "found '=', expected: ',', ')' or identifier"},
		{"a notin (b))", "found ')', expected: ',' or 'end of string'"},
		{"a=b=c", "found '=', expected: ',' or 'end of string'"},
		{"a=b c", "found 'c', expected: ',' or 'end of string'"},
		{"a==!b", "found '!', expected: identifier"},
		{"a=(b)", "found '(', expected: identifier"},
		{"!a=b", "found '=', expected: ',' or 'end of string'"},
		{"!", "unable to parse requirement: found '', expected: identifier"},
		{"!!a", "found '!', expected: identifier"},
		{"a!", "found '!', expected: in, notin, =, ==, !="},
		{"a>x", `values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`},
		{"a<", `values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`},
		{"a(1", "found '(', expected: in, notin, =, ==, !=, gt, lt"},
		{"a/b/c", `<nil>: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters`},
		{"/a", "prefix part must be non-empty"},
		{"a/", "name part must be non-empty"},
		{"Example.com/a", "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"},
		{"a..b.com/x", "prefix part a lowercase RFC 1123 subdomain"},
		{"-a", `<nil>: Invalid value: "-a": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`},
		{"a-", "name part must consist of alphanumeric characters"},
		{"a:b=c", "name part must consist of alphanumeric characters"},
		{long, "name part must be no more than 63 bytes"},
		{strings.Repeat("a", 254) + "/b", "prefix part must be no more than 253 bytes"},
		{"a=-b", `values[0][a]: Invalid value: "-b": a valid label must be an empty string or consist of alphanumeric characters`},
		{"a=" + long, "must be no more than 63 bytes"},
		{"a in (b,c-)", `values[1][a]: Invalid value: "c-"`},
		{"a=b/c", `Invalid value: "b/c"`},
		{"a=é", `Invalid value: "é"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLabelSelector(tt.in)
			if err == nil {
				t.Fatalf("ParseLabelSelector(%q) = %v; want an error", tt.in, got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q; want it to contain %q", err, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false; want true", err)
			}
			var se *SelectorError
			if !errors.As(err, &se) || se.Field != "labelSelector" {
				t.Errorf("error %#v; want a *SelectorError for labelSelector", err)
			}
		})
	}
}

func TestParseFieldSelector(t *testing.T) {
	tests := []struct {
		in   string
		want Selector
		str  string // canonical form; "" means same as in
	}{
		{in: "", want: nil},
		{in: ",", want: nil, str: ""},
		{in: "=", want: nil, str: ""},
		{in: "!=,a=b", want: Selector{req("a", Equals, "b")}, str: "a=b"},
		{in: "=x", want: Selector{req("", Equals, "x")}},
		{in: "metadata.name=foo", want: Selector{req("metadata.name", Equals, "foo")}},
		{in: "metadata.name==foo", want: Selector{req("metadata.name", Equals, "foo")}, str: "metadata.name=foo"},
		{in: "status.phase!=Running", want: Selector{req("status.phase", NotEquals, "Running")}},
		{in: "a=", want: Selector{req("a", Equals, "")}},
		{in: "b=1,a=2", want: Selector{req("a", Equals, "2"), req("b", Equals, "1")}, str: "a=2,b=1"},
		{in: "a=2,a!=1,a=1", want: Selector{req("a", NotEquals, "1"), req("a", Equals, "1"), req("a", Equals, "2")}, str: "a!=1,a=1,a=2"},
		{in: "a=b,,c=d,", want: Selector{req("a", Equals, "b"), req("c", Equals, "d")}, str: "a=b,c=d"},
		{in: `a=x\,y`, want: Selector{req("a", Equals, "x,y")}},
		{in: `a=x\=y`, want: Selector{req("a", Equals, "x=y")}},
		{in: `a=x\\y`, want: Selector{req("a", Equals, `x\y`)}},
		{in: `a==\=x`, want: Selector{req("a", Equals, "=x")}, str: `a=\=x`},
		{in: "a=b!c", want: Selector{req("a", Equals, "b!c")}},
		{in: "a= b c ", want: Selector{req("a", Equals, " b c ")}},
		{in: "a!b=c", want: Selector{req("a!b", Equals, "c")}},
		{in: "a!!=c", want: Selector{req("a!", NotEquals, "c")}},
		{in: "spec.nodeName=", want: Selector{req("spec.nodeName", Equals, "")}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFieldSelector(tt.in)
			if err != nil {
				t.Fatalf("ParseFieldSelector(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseFieldSelector(%q) = %#v; want %#v", tt.in, got, tt.want)
			}
			str := tt.str
			if str == "" && tt.want != nil {
				str = tt.in
			}
			if s := got.String(); s != str {
				t.Errorf("String() = %q; want %q", s, str)
			}
		})
	}
}

func TestParseFieldSelectorErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"a", "invalid selector: 'a'; can't understand 'a'"},
		{"a=b,c", "can't understand 'c'"},
		{"a<b", "can't understand 'a<b'"},
		{"a=b=c", `invalid field selector: unescaped character in value: '='`},
		{"a=b,c=d=e", `unescaped character in value: '='`},
		{`a=b\`, `invalid field selector: invalid escape sequence: \ at the end`},
		{`a=\x`, `invalid escape sequence: \x`},
		{`a=\é`, `invalid escape sequence: \é`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFieldSelector(tt.in)
			if err == nil {
				t.Fatalf("ParseFieldSelector(%q) = %v; want an error", tt.in, got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q; want it to contain %q", err, tt.want)
			}
			var se *SelectorError
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &se) || se.Field != "fieldSelector" {
				t.Errorf("error %#v; want a *SelectorError for fieldSelector wrapping ErrInvalid", err)
			}
		})
	}
}

func TestSelectorMatches(t *testing.T) {
	labels := map[string]string{"app": "web", "tier": "front", "empty": "", "size": "3"}
	tests := []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"app=web", true},
		{"app==web", true},
		{"app=db", false},
		{"app!=db", true},
		{"app!=web", false},
		{"missing!=x", true},
		{"missing=x", false},
		{"empty=", true},
		{"missing=", false},
		{"app in (db,web)", true},
		{"app in (db)", false},
		{"missing in (db)", false},
		{"app notin (db)", true},
		{"app notin (web,db)", false},
		{"missing notin (web)", true},
		{"app", true},
		{"missing", false},
		{"!missing", true},
		{"!app", false},
		{"app=web,tier=front", true},
		{"app=web,tier=back", false},
		{"app,!missing,tier in (front)", true},
		{"size>2", true},
		{"size>3", false},
		{"size<4", true},
		{"size<3", false},
		{"app>1", false},
		{"missing<9", false},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			s, err := ParseLabelSelector(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Matches(labels); got != tt.want {
				t.Errorf("%q.Matches(%v) = %v; want %v", tt.sel, labels, got, tt.want)
			}
		})
	}

	fields := map[string]string{"metadata.name": "a,b", "metadata.namespace": "ns1"}
	ftests := []struct {
		sel  string
		want bool
	}{
		{`metadata.name=a\,b`, true},
		{`metadata.name=a`, false},
		{`metadata.name!=a`, true},
		{`metadata.namespace=ns1,metadata.name!=a\,b`, false},
		{`spec.nodeName!=x`, true},
		{`spec.nodeName=`, false},
	}
	for _, tt := range ftests {
		t.Run("field "+tt.sel, func(t *testing.T) {
			s, err := ParseFieldSelector(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Matches(fields); got != tt.want {
				t.Errorf("%q.Matches(%v) = %v; want %v", tt.sel, fields, got, tt.want)
			}
		})
	}
}

func TestPredicate(t *testing.T) {
	l, _ := ParseLabelSelector("app=web")
	f, _ := ParseFieldSelector("metadata.name=a")
	obj := Object{Labels: map[string]string{"app": "web"}, Fields: map[string]string{"metadata.name": "a"}}
	tests := []struct {
		name  string
		p     Predicate
		empty bool
		match bool
	}{
		{"zero", Predicate{}, true, true},
		{"label", Predicate{Label: l}, false, true},
		{"field", Predicate{Field: f}, false, true},
		{"both", Predicate{Label: l, Field: f}, false, true},
		{"field mismatch", Predicate{Label: l, Field: Selector{req("metadata.name", Equals, "b")}}, false, false},
		{"label mismatch", Predicate{Label: Selector{req("app", Equals, "db")}, Field: f}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Empty(); got != tt.empty {
				t.Errorf("Empty() = %v; want %v", got, tt.empty)
			}
			if got := tt.p.Matches(obj); got != tt.match {
				t.Errorf("Matches() = %v; want %v", got, tt.match)
			}
		})
	}
}

var labelSeeds = []string{
	"", "a=b", "a==b", "a!=b", "a", "!a", "a in (x,y)", "a notin (,x)", "a in ()",
	" a = b , c in ( x , y ) ,\t!d", "example.com/app=web", "in in (in)", "a=b,", ",",
	"a in (b", "a>1", "a/b/c", "a=" + strings.Repeat("x", 64), "!!", "a=b=c", "é=ü",
	"a\x00=b", "(", ")", "a in (b,c))", "a in ((b))", "a notin",
}

var fieldSeeds = []string{
	"", "a=b", "a==b", "a!=b", `a=x\,y`, `a=x\=y`, `a=x\\y`, `a=b\`, `a=\x`, "a",
	"a=b=c", "a=b,,c=d,", "a!!=c", "a!b=c", `a\,b=c`, "=x", "!=x", "==", "a=é", `\=\=\=`,
}

func FuzzParseLabelSelector(f *testing.F) {
	for _, s := range labelSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		sel, err := ParseLabelSelector(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseLabelSelector(%q) error %v does not wrap ErrInvalid", in, err)
			}
			return
		}
		out := sel.String()
		again, err := ParseLabelSelector(out)
		if err != nil {
			t.Fatalf("ParseLabelSelector(%q) (String of %q): %v", out, in, err)
		}
		if !reflect.DeepEqual(again, sel) {
			t.Fatalf("round trip of %q via %q: got %#v; want %#v", in, out, again, sel)
		}
		if again.String() != out {
			t.Fatalf("String not canonical: got %q; want %q", again.String(), out)
		}
	})
}

func FuzzParseFieldSelector(f *testing.F) {
	for _, s := range fieldSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		sel, err := ParseFieldSelector(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseFieldSelector(%q) error %v does not wrap ErrInvalid", in, err)
			}
			return
		}
		out := sel.String()
		again, err := ParseFieldSelector(out)
		if err != nil {
			t.Fatalf("ParseFieldSelector(%q) (String of %q): %v", out, in, err)
		}
		if !reflect.DeepEqual(again, sel) {
			t.Fatalf("round trip of %q via %q: got %#v; want %#v", in, out, again, sel)
		}
	})
}

func TestPredicateFieldsOf(t *testing.T) {
	color := Predicate{Field: Selector{{Key: "spec.color", Op: Equals, Values: []string{"red"}}}}
	computed := 0
	withFieldsOf := color
	withFieldsOf.FieldsOf = func(o Object) map[string]string {
		computed++
		return map[string]string{"metadata.name": o.Key, "spec.color": string(o.Value)}
	}
	for _, tc := range []struct {
		name     string
		p        Predicate
		o        Object
		want     bool
		computed int
	}{
		{"stored field, no FieldsOf", color, Object{Fields: map[string]string{"spec.color": "red"}}, true, 0},
		{"missing field, no FieldsOf", color, Object{Value: []byte("red"), Fields: map[string]string{"metadata.name": "a"}}, false, 0},
		{"stored field wins over FieldsOf", withFieldsOf, Object{Value: []byte("red"), Fields: map[string]string{"spec.color": "blue"}}, false, 0},
		{"missing field computed", withFieldsOf, Object{Value: []byte("red"), Fields: map[string]string{"metadata.name": "a"}}, true, 1},
		{"missing field computed, no match", withFieldsOf, Object{Value: []byte("blue")}, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			computed = 0
			if got := tc.p.Matches(tc.o); got != tc.want || computed != tc.computed {
				t.Errorf("Matches = %v after %d FieldsOf calls; want %v after %d", got, computed, tc.want, tc.computed)
			}
		})
	}
}
