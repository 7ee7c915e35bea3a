package rv

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func ptr(b bool) *bool { return &b }

const (
	unsetOnly = `resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`
	withCont  = `resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided`
	exactZero = `resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`
	listSIE   = `sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`
	needNOT   = `resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`
	watchOnly = `resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`
	prefix    = `ListOptions.meta.k8s.io "" is invalid: `
	contRV    = "specifying resource version is not allowed when using continue"
)

func notSup(v, allowed string) string {
	return fmt.Sprintf(`resourceVersionMatch: Unsupported value: %q: supported values: %s`, v, allowed)
}

// invalidMsg is kube-apiserver's wording for a list of causes.
func invalidMsg(causes ...string) string {
	if len(causes) == 1 {
		return prefix + causes[0]
	}
	return prefix + "[" + strings.Join(causes, ", ") + "]"
}

// TestResolveList walks the list table of the API Concepts document (and
// rv/doc.go) cell by cell: resourceVersionMatch × paging × resourceVersion.
func TestResolveList(t *testing.T) {
	type paging struct {
		name  string
		limit int64
		cont  string
	}
	pagings := []paging{{"no limit", 0, ""}, {"limit", 500, ""}, {"limit+continue", 500, "tok"}}
	rvs := []string{"", "0", "42"}
	const listSupported = `"Exact", "NotOlderThan", ""`

	// want[match][paging][rv]: a Request, or an error message.
	type cell struct {
		req Request
		err string // full message; ErrInvalid unless it is contRV
	}
	ok := func(m Match, rev uint64) cell { return cell{req: Request{Match: m, Revision: rev}} }
	cont := cell{req: Request{Match: Exact, Continue: "tok"}}
	bad := func(causes ...string) cell { return cell{err: invalidMsg(causes...)} }
	want := map[string][3][3]cell{
		"": {
			{ok(MostRecent, 0), ok(Any, 0), ok(NotOlderThan, 42)},
			{ok(MostRecent, 0), ok(Any, 0), ok(Exact, 42)},
			{cont, cont, {err: contRV}},
		},
		MatchExact: {
			{bad(unsetOnly), bad(exactZero), ok(Exact, 42)},
			{bad(unsetOnly), bad(exactZero), ok(Exact, 42)},
			{bad(unsetOnly, withCont), bad(withCont, exactZero), bad(withCont)},
		},
		MatchNotOlderThan: {
			{bad(unsetOnly), ok(Any, 0), ok(NotOlderThan, 42)},
			{bad(unsetOnly), ok(Any, 0), ok(NotOlderThan, 42)},
			{bad(unsetOnly, withCont), bad(withCont), bad(withCont)},
		},
		"Newest": {
			{bad(unsetOnly, notSup("Newest", listSupported)), bad(notSup("Newest", listSupported)), bad(notSup("Newest", listSupported))},
			{bad(unsetOnly, notSup("Newest", listSupported)), bad(notSup("Newest", listSupported)), bad(notSup("Newest", listSupported))},
			{bad(unsetOnly, withCont, notSup("Newest", listSupported)), bad(withCont, notSup("Newest", listSupported)), bad(withCont, notSup("Newest", listSupported))},
		},
	}
	for match, rows := range want {
		for pi, p := range pagings {
			for ri, v := range rvs {
				c := rows[pi][ri]
				t.Run(fmt.Sprintf("match=%q/%s/rv=%q", match, p.name, v), func(t *testing.T) {
					o := Options{ResourceVersion: v, ResourceVersionMatch: match, Limit: p.limit, Continue: p.cont}
					got, err := o.Resolve()
					if c.err == "" {
						if c.req.Match != Any { // resourceVersion=0 ignores limit, as kube's watch cache
							c.req.Limit = p.limit
						}
						if err != nil || !reflect.DeepEqual(got, c.req) {
							t.Fatalf("Resolve(%+v) = %+v, %v; want %+v", o, got, err, c.req)
						}
						return
					}
					kind := ErrInvalid
					if c.err == contRV {
						kind = ErrBadRequest
					}
					checkErr(t, o, err, kind, c.err)
				})
			}
		}
	}
}

// TestResolveWatch covers the watch table and the streaming-list rules
// (sendInitialEvents), as kube's validateWatchOptions checks them.
func TestResolveWatch(t *testing.T) {
	const nse = `"NotOlderThan"`
	tests := []struct {
		name string
		o    Options
		want Request
		err  string
		kind error
	}{
		{name: "rv unset", o: Options{}, want: Request{Match: MostRecent, Initial: true}},
		{name: "rv 0", o: Options{ResourceVersion: "0"}, want: Request{Match: Any, Initial: true}},
		{name: "rv N", o: Options{ResourceVersion: "42"}, want: Request{Match: Exact, Revision: 42}},
		{name: "limit and continue ignored", o: Options{ResourceVersion: "42", Limit: 5, Continue: "tok"}, want: Request{Match: Exact, Revision: 42}},
		{name: "bad rv", o: Options{ResourceVersion: "x"}, err: `invalid resource version: resourceVersion: Invalid value: "x": strconv.ParseUint: parsing "x": invalid syntax`, kind: ErrBadRequest},

		{name: "match without sendInitialEvents", o: Options{ResourceVersion: "42", ResourceVersionMatch: MatchNotOlderThan}, err: invalidMsg(watchOnly)},
		{name: "Exact without sendInitialEvents", o: Options{ResourceVersion: "42", ResourceVersionMatch: MatchExact}, err: invalidMsg(watchOnly, notSup("Exact", nse))},

		{name: "sendInitialEvents=true without match", o: Options{SendInitialEvents: ptr(true)}, err: invalidMsg(needNOT)},
		{name: "sendInitialEvents=false without match", o: Options{ResourceVersion: "42", SendInitialEvents: ptr(false)}, err: invalidMsg(needNOT)},
		{name: "sendInitialEvents with Exact", o: Options{ResourceVersion: "42", ResourceVersionMatch: MatchExact, SendInitialEvents: ptr(true)}, err: invalidMsg(needNOT, notSup("Exact", nse))},
		{name: "sendInitialEvents with continue", o: Options{ResourceVersionMatch: MatchNotOlderThan, Continue: "tok", SendInitialEvents: ptr(true)}, err: invalidMsg(withCont)},

		{name: "sendInitialEvents=true rv unset", o: Options{ResourceVersionMatch: MatchNotOlderThan, SendInitialEvents: ptr(true)}, want: Request{Match: MostRecent, Initial: true, InitialEnd: true}},
		{name: "sendInitialEvents=true rv 0", o: Options{ResourceVersion: "0", ResourceVersionMatch: MatchNotOlderThan, SendInitialEvents: ptr(true)}, want: Request{Match: Any, Initial: true, InitialEnd: true}},
		{name: "sendInitialEvents=true rv N", o: Options{ResourceVersion: "42", ResourceVersionMatch: MatchNotOlderThan, SendInitialEvents: ptr(true)}, want: Request{Match: NotOlderThan, Revision: 42, Initial: true, InitialEnd: true}},
		{name: "sendInitialEvents=false rv unset", o: Options{ResourceVersionMatch: MatchNotOlderThan, SendInitialEvents: ptr(false)}, want: Request{Match: MostRecent}},
		{name: "sendInitialEvents=false rv 0", o: Options{ResourceVersion: "0", ResourceVersionMatch: MatchNotOlderThan, SendInitialEvents: ptr(false)}, want: Request{Match: Any}},
		{name: "sendInitialEvents=false rv N", o: Options{ResourceVersion: "42", ResourceVersionMatch: MatchNotOlderThan, SendInitialEvents: ptr(false)}, want: Request{Match: NotOlderThan, Revision: 42}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Watch = true
			got, err := tt.o.Resolve()
			if tt.err == "" {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("Resolve(%+v) = %+v, %v; want %+v", tt.o, got, err, tt.want)
				}
				return
			}
			kind := tt.kind
			if kind == nil {
				kind = ErrInvalid
			}
			checkErr(t, tt.o, err, kind, tt.err)
		})
	}
}

// TestResolveListOther covers what the table leaves out.
func TestResolveListOther(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want Request
		err  string
		kind error
	}{
		{name: "sendInitialEvents on a list", o: Options{SendInitialEvents: ptr(true)}, err: invalidMsg(listSIE)},
		{name: "sendInitialEvents=false on a list", o: Options{ResourceVersion: "42", SendInitialEvents: ptr(false)}, err: invalidMsg(listSIE)},
		{name: "every list error at once", o: Options{ResourceVersionMatch: "x", Continue: "t", SendInitialEvents: ptr(true)},
			err: invalidMsg(unsetOnly, withCont, notSup("x", `"Exact", "NotOlderThan", ""`), listSIE)},
		{name: "bad rv", o: Options{ResourceVersion: "1.5"}, err: `invalid resource version: resourceVersion: Invalid value: "1.5": strconv.ParseUint: parsing "1.5": invalid syntax`, kind: ErrBadRequest},
		{name: "bad rv wins over continue", o: Options{ResourceVersion: "abc", Continue: "t"}, err: `invalid resource version: resourceVersion: Invalid value: "abc"`, kind: ErrBadRequest},
		{name: "negative limit", o: Options{ResourceVersion: "42", Limit: -1}, want: Request{Match: NotOlderThan, Revision: 42}},
		{name: "continue without limit", o: Options{Continue: "t"}, want: Request{Match: Exact, Continue: "t"}},
		{name: "match value quoted as kube does", o: Options{ResourceVersion: "1", ResourceVersionMatch: "a&b\x01"},
			err: invalidMsg(`resourceVersionMatch: Unsupported value: "a\u0026b\u0001": supported values: "Exact", "NotOlderThan", ""`)},
		{name: "long match value", o: Options{ResourceVersion: "1", ResourceVersionMatch: strings.Repeat("m", 100)},
			err: invalidMsg(notSup(strings.Repeat("m", 64)+"...", `"Exact", "NotOlderThan", ""`))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.o.Resolve()
			if tt.err == "" {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("Resolve(%+v) = %+v, %v; want %+v", tt.o, got, err, tt.want)
				}
				return
			}
			kind := tt.kind
			if kind == nil {
				kind = ErrInvalid
			}
			checkErr(t, tt.o, err, kind, tt.err)
		})
	}
}

// checkErr checks the kind and message of err; an ErrInvalid error must
// name the parameter in each cause, which the message lists in order.
func checkErr(t *testing.T, o Options, err, kind error, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Resolve(%+v) error %#v; want an *Error", o, err)
	}
	if !errors.Is(err, kind) {
		t.Errorf("Resolve(%+v) error kind %v; want %v", o, e.Kind, kind)
	}
	if kind == ErrBadRequest {
		if !strings.Contains(e.Msg, msg) || len(e.Causes) != 0 {
			t.Errorf("Resolve(%+v) error %q (causes %v); want it to contain %q", o, e.Msg, e.Causes, msg)
		}
		return
	}
	if e.Msg != msg {
		t.Errorf("Resolve(%+v) error\n got %s\nwant %s", o, e.Msg, msg)
	}
	for _, c := range e.Causes {
		if (c.Field != "resourceVersionMatch" && c.Field != "sendInitialEvents") || c.Detail == "" ||
			!strings.Contains(e.Msg, c.Field+": "+c.Message()) {
			t.Errorf("cause %+v; want a named parameter, a detail, and its text in the message", c)
		}
		switch c.Type {
		case "FieldValueForbidden", "FieldValueNotSupported":
		default:
			t.Errorf("cause type %q; want FieldValueForbidden or FieldValueNotSupported", c.Type)
		}
	}
	if n := strings.Count(msg, ": Forbidden: ") + strings.Count(msg, ": Unsupported value: "); len(e.Causes) != n {
		t.Errorf("%d causes; want %d", len(e.Causes), n)
	}
}

func FuzzResolve(f *testing.F) {
	f.Add("", "", int64(0), "", false, int8(-1))
	f.Add("42", MatchExact, int64(500), "", false, int8(-1))
	f.Add("0", MatchNotOlderThan, int64(0), "tok", true, int8(1))
	f.Add("42", "", int64(0), "tok", false, int8(0))
	f.Add("x", "Bogus", int64(-3), "", true, int8(1))
	f.Fuzz(func(t *testing.T, v, match string, limit int64, cont string, watch bool, sie int8) {
		o := Options{ResourceVersion: v, ResourceVersionMatch: match, Limit: limit, Continue: cont, Watch: watch}
		if sie >= 0 {
			o.SendInitialEvents = ptr(sie > 0)
		}
		r, err := o.Resolve()
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Fatalf("Resolve(%+v) error %#v; want an *Error with a message", o, err)
			}
			switch {
			case errors.Is(err, ErrInvalid):
				if len(e.Causes) == 0 {
					t.Fatalf("Resolve(%+v): ErrInvalid without causes", o)
				}
			case !errors.Is(err, ErrBadRequest):
				t.Fatalf("Resolve(%+v) error kind %v; want ErrInvalid or ErrBadRequest", o, e.Kind)
			}
			return
		}
		rev, perr := Parse(v)
		switch {
		case perr != nil:
			t.Fatalf("Resolve(%+v) accepted an unparsable resourceVersion", o)
		case r.Match < MostRecent || r.Match > Exact:
			t.Fatalf("Resolve(%+v) = %+v: unknown match", o, r)
		case r.Limit < 0:
			t.Fatalf("Resolve(%+v) = %+v: negative limit", o, r)
		case (r.Continue != "") != (cont != "" && !watch):
			t.Fatalf("Resolve(%+v) = %+v: continue kept %v; want only for a list with continue", o, r, r.Continue != "")
		case r.Continue == "" && r.Revision != rev:
			t.Fatalf("Resolve(%+v) = %+v: revision %d; want %d", o, r, r.Revision, rev)
		case r.Continue == "" && (r.Match == Exact || r.Match == NotOlderThan) != (rev != 0):
			t.Fatalf("Resolve(%+v) = %+v: %v with revision %d", o, r, r.Match, rev)
		case (r.Initial || r.InitialEnd) && !watch:
			t.Fatalf("Resolve(%+v) = %+v: initial events for a list", o, r)
		case r.InitialEnd && !r.Initial:
			t.Fatalf("Resolve(%+v) = %+v: InitialEnd without Initial", o, r)
		}
	})
}
