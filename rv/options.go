package rv

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The values of resourceVersionMatch.
const (
	MatchNotOlderThan = "NotOlderThan"
	MatchExact        = "Exact"
)

// Options are the read-related query parameters of a get, list or watch
// request, as the client sent them.
type Options struct {
	ResourceVersion      string
	ResourceVersionMatch string
	Limit                int64
	Continue             string
	Watch                bool
	SendInitialEvents    *bool // nil when the parameter is absent
}

// Request is a validated read: what revision to serve and how.
//
// For a list, Match and Revision choose the snapshot; Continue, when set, is
// the raw token (decoded by the storage, which knows the prefix) and wins
// over Match. For a watch, Revision is where the stream starts (0: now);
// Initial asks for synthetic ADDED events for the state at the start, and
// InitialEnd for the "k8s.io/initial-events-end" bookmark after them.
type Request struct {
	Match      Match
	Revision   uint64
	Limit      int64
	Continue   string
	Initial    bool
	InitialEnd bool
}

// Resolve validates o and returns the read it asks for. Every invalid
// combination answers an *Error naming the parameter to fix:
// ErrBadRequest for values that cannot be parsed and for a continue token
// with a resource version, ErrInvalid (with Causes) for combinations the
// spec forbids.
//
// Worked example: resourceVersion=42&limit=500 resolves to
// {Match: Exact, Revision: 42, Limit: 500}, because a paginated list at a
// given version must serve every page from that one snapshot; and
// resourceVersion=0&limit=500 to {Match: Any}, no limit, as kube's watch
// cache serves it.
func (o Options) Resolve() (Request, error) {
	rev, err := Parse(o.ResourceVersion)
	if err != nil {
		return Request{}, err
	}
	if o.Watch {
		return o.resolveWatch(rev)
	}
	if causes := o.listCauses(); len(causes) > 0 {
		return Request{}, invalid(causes)
	}
	req := Request{Revision: rev, Limit: max(o.Limit, 0)}
	if o.Continue != "" {
		if o.ResourceVersion != "" && o.ResourceVersion != "0" {
			return Request{}, badRequest("specifying resource version is not allowed when using continue")
		}
		req.Continue, req.Revision, req.Match = o.Continue, 0, Exact
		return req, nil
	}
	switch {
	case o.ResourceVersion == "":
		req.Match = MostRecent
	case rev == 0:
		// kube serves resourceVersion=0 from its watch cache, which
		// ignores limit (cacher's computeListLimit): one whole page.
		req.Match, req.Limit = Any, 0
	case o.ResourceVersionMatch == MatchExact:
		req.Match = Exact
	case o.ResourceVersionMatch == MatchNotOlderThan:
		req.Match = NotOlderThan
	case req.Limit > 0: // legacy: a limit with an explicit version means Exact
		req.Match = Exact
	default:
		req.Match = NotOlderThan
	}
	return req, nil
}

func (o Options) listCauses() []Cause {
	var c []Cause
	if m := o.ResourceVersionMatch; m != "" {
		if o.ResourceVersion == "" {
			c = append(c, forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if o.Continue != "" {
			c = append(c, forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
		}
		if m != MatchExact && m != MatchNotOlderThan {
			c = append(c, notSupported("resourceVersionMatch", m, `"Exact", "NotOlderThan", ""`))
		}
		if m == MatchExact && o.ResourceVersion == "0" {
			c = append(c, forbidden("resourceVersionMatch", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
		}
	}
	if o.SendInitialEvents != nil {
		c = append(c, forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
	}
	return c
}

// resolveWatch applies the watch table: rv unset or "0" starts with the
// current state as synthetic ADDED events, rv=N starts after N. With
// sendInitialEvents the state is followed by the initial-events-end
// bookmark.
func (o Options) resolveWatch(rev uint64) (Request, error) {
	var c []Cause
	m := o.ResourceVersionMatch
	if o.SendInitialEvents != nil && m != MatchNotOlderThan {
		c = append(c, forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
	}
	if m != "" {
		if o.SendInitialEvents == nil {
			c = append(c, forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		if m != MatchNotOlderThan {
			c = append(c, notSupported("resourceVersionMatch", m, `"NotOlderThan"`))
		}
		if o.Continue != "" {
			c = append(c, forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
		}
	}
	if len(c) > 0 {
		return Request{}, invalid(c)
	}
	req := Request{Revision: rev}
	switch {
	case o.SendInitialEvents != nil:
		req.Initial = *o.SendInitialEvents
		req.InitialEnd = *o.SendInitialEvents
		req.Match = NotOlderThan
		if rev == 0 {
			req.Match = MostRecent
			if o.ResourceVersion == "0" {
				req.Match = Any
			}
		}
	case o.ResourceVersion == "":
		req.Initial, req.Match = true, MostRecent
	case rev == 0:
		req.Initial, req.Match = true, Any
	default:
		req.Match = Exact
	}
	return req, nil
}

// invalid words the error as kube-apiserver does: one cause after a colon,
// several in brackets.
func invalid(c []Cause) *Error {
	parts := make([]string, len(c))
	for i, x := range c {
		parts[i] = x.Field + ": " + x.Message()
	}
	msg := strings.Join(parts, ", ")
	if len(parts) > 1 {
		msg = "[" + msg + "]"
	}
	return &Error{Kind: ErrInvalid, Msg: `ListOptions.meta.k8s.io "" is invalid: ` + msg, Causes: c}
}

// Message is the cause as kube words it, e.g. "Forbidden: …".
func (c Cause) Message() string {
	switch c.Type {
	case "FieldValueForbidden":
		return "Forbidden: " + c.Detail
	case "FieldValueNotSupported":
		// kube quotes a typed value as JSON: "\u0026" for "&".
		v, _ := json.Marshal(c.Value)
		return fmt.Sprintf("Unsupported value: %s: %s", v, c.Detail)
	}
	return fmt.Sprintf("Invalid value: %q: %s", c.Value, c.Detail)
}

func forbidden(field, detail string) Cause {
	return Cause{Field: field, Type: "FieldValueForbidden", Detail: detail}
}

func notSupported(field, value, allowed string) Cause {
	return Cause{Field: field, Type: "FieldValueNotSupported", Value: truncate(value), Detail: "supported values: " + allowed}
}
