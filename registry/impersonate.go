package registry

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

// Impersonation as kube-apiserver v1.36+ does it, with constrained
// impersonation on (the ConstrainedImpersonation feature, beta and on by
// default; k8s.io/apiserver's endpoints/filters/impersonation). The
// modes are tried in kube's order, each only for the users it is about:
//
//   - arbitrary-node: system:node:NAME, with nothing but the name;
//   - serviceaccount: system:serviceaccount:NS:NAME, with nothing but the
//     name;
//   - user-info: any other user;
//   - legacy: anyone (the impersonate verb alone, as before 1.35).
//
// A constrained mode M asks first whether the requestor may
// "impersonate-on:M:VERB" what the request asks (its own attributes,
// with the verb changed), then "impersonate:M" on each part of the
// wanted user (users, nodes or serviceaccounts; uids, groups and
// userextras, all in group authentication.k8s.io); legacy asks
// "impersonate" on users, serviceaccounts and groups of the core group,
// and uids and userextras of authentication.k8s.io. The first mode that
// allows wins; when none does, the answer is the first refusal, which for
// a plain user is user-info's impersonate-on check:
//
//	configmaps is forbidden: User "bob" cannot impersonate-on:user-info:list resource "configmaps" in API group "" in the namespace "a"
//
// kube's associated-node mode (a service account impersonating the node
// its pod runs on, known from the node-name extra of its token) is left
// out: kapi authenticates no service-account tokens, so no requestor has
// that extra. kube also remembers which mode last allowed a request of
// the same attributes and tries it first, which can change which refusal
// is reported; kapi always tries the modes in order.

// The impersonation headers (kube's transport constants).
const (
	impersonateUser        = "Impersonate-User"
	impersonateUID         = "Impersonate-Uid"
	impersonateGroup       = "Impersonate-Group"
	impersonateExtraPrefix = "Impersonate-Extra-"
)

// The groups of the impersonated kinds: legacy asks about users, groups
// and serviceaccounts in the core group, constrained impersonation about
// all of them in authentication.k8s.io (as uids and userextras always).
const authenticationGroup = "authentication.k8s.io"

// manyChecks is kube's manyAuthorizationChecksInLoop: from this many
// groups or extra values on, constrained impersonation first asks once
// for all of them ("*").
const manyChecks = 4

// impersonate returns the user req acts as: u itself without
// impersonation headers; otherwise the user the headers name, once u is
// allowed to impersonate it for the request info describes (see above).
func (r *Registry) impersonate(ctx context.Context, req *http.Request, info *request.Info, u *request.User) (*request.User, error) {
	h := req.Header
	name := h.Get(impersonateUser)
	groups := h.Values(impersonateGroup)
	uid := h.Get(impersonateUID)
	var extra map[string][]string
	for k, vs := range h {
		if !strings.HasPrefix(k, impersonateExtraPrefix) {
			continue
		}
		if len(vs) == 0 {
			continue
		}
		// As kube: a key that does not unescape is kept as sent.
		key := strings.ToLower(k[len(impersonateExtraPrefix):])
		if u, err := url.PathUnescape(key); err == nil {
			key = u
		}
		if extra == nil {
			extra = map[string][]string{}
		}
		extra[key] = append(extra[key], vs...)
	}
	if name == "" && len(groups) == 0 && uid == "" && extra == nil {
		return u, nil
	}
	if name == "" {
		// kube's words, which print the wanted user in Go syntax.
		return nil, errBadRequest("requested &user.DefaultInfo{Name:%#v, UID:%#v, Groups:%#v, Extra:%#v} without impersonating a user name", "", uid, groups, extra)
	}
	wanted := &request.User{Name: name, UID: uid, Groups: groups, Extra: extra}
	onlyName := uid == "" && len(groups) == 0 && len(extra) == 0
	_, isNode := nodeName(name)
	_, _, isSA := serviceAccountName(name)
	var first error
	for _, m := range []struct {
		mode    string
		applies bool
	}{
		{"arbitrary-node", isNode && onlyName},
		{"serviceaccount", isSA && onlyName},
		{"user-info", !isNode && !isSA},
		{"", true}, // legacy
	} {
		if !m.applies {
			continue
		}
		target, err := r.impersonateAs(ctx, u, info, wanted, m.mode)
		if err == nil {
			for _, k := range []string{impersonateUser, impersonateUID, impersonateGroup} {
				h.Del(k)
			}
			for k := range h {
				if strings.HasPrefix(k, impersonateExtraPrefix) {
					h.Del(k)
				}
			}
			return target, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// impersonateAs is one mode's check (mode "" is legacy): the user u may
// act as, or u's refusal.
func (r *Registry) impersonateAs(ctx context.Context, u *request.User, info *request.Info, wanted *request.User, mode string) (*request.User, error) {
	check := func(a authz.Attributes) error {
		a.User = u
		d, reason, err := r.authorizer.Authorize(ctx, a)
		if d == authz.Allow {
			return nil
		}
		switch {
		case err != nil && reason != "":
			reason = err.Error() + ": " + reason
		case err != nil:
			reason = err.Error()
		}
		return errForbidden(a, reason)
	}
	verb, group := "impersonate", ""
	constrained := mode != ""
	if constrained {
		on := authz.AttributesFrom(u, info)
		on.Verb = "impersonate-on:" + mode + ":" + on.Verb
		if err := check(on); err != nil {
			return nil, err
		}
		verb, group = "impersonate:"+mode, authenticationGroup
	}
	attrs := func(group, resource, name string) authz.Attributes {
		return authz.Attributes{ResourceRequest: true, Verb: verb, APIGroup: group, APIVersion: "v1", Resource: resource, Name: name}
	}

	target := &request.User{Name: wanted.Name, UID: wanted.UID, Groups: slices.Clone(wanted.Groups), Extra: wanted.Extra}
	user := attrs(group, "users", wanted.Name)
	if node, ok := nodeName(wanted.Name); ok && constrained {
		user.Resource, user.Name = "nodes", node
		if len(wanted.Groups) != 0 {
			user.User = u
			return nil, errForbidden(user, fmt.Sprintf("when impersonating a node, cannot impersonate groups %q", wanted.Groups))
		}
		target.Groups = []string{"system:nodes"}
	}
	if ns, sa, ok := serviceAccountName(wanted.Name); ok {
		user.Resource, user.Namespace, user.Name = "serviceaccounts", ns, sa
		if constrained && len(wanted.Groups) != 0 {
			user.User = u
			return nil, errForbidden(user, fmt.Sprintf("when impersonating a service account, cannot impersonate groups %q", wanted.Groups))
		}
		if len(wanted.Groups) == 0 { // as kube: a service account's groups come with it
			target.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
		}
	}
	if err := check(user); err != nil {
		return nil, err
	}
	if wanted.UID != "" {
		if err := check(attrs(authenticationGroup, "uids", wanted.UID)); err != nil {
			return nil, err
		}
	}
	if err := impersonateGroups(check, attrs(group, "groups", ""), wanted.Groups, constrained, u); err != nil {
		return nil, err
	}
	if err := impersonateExtra(check, attrs(authenticationGroup, "userextras", ""), wanted.Extra, constrained, u); err != nil {
		return nil, err
	}
	// As kube: anonymous is unauthenticated; anyone else authenticated,
	// unless the headers say unauthenticated.
	switch {
	case target.Name == request.Anonymous:
		if !target.InGroup(request.AllUnauthenticated) {
			target.Groups = append(target.Groups, request.AllUnauthenticated)
		}
	case !target.InGroup(request.AllUnauthenticated) && !target.InGroup(request.AllAuthenticated):
		target.Groups = append(target.Groups, request.AllAuthenticated)
	}
	return target, nil
}

// impersonateGroups checks each wanted group (kube's authorizeGroups).
func impersonateGroups(check func(authz.Attributes) error, a authz.Attributes, groups []string, constrained bool, u *request.User) error {
	if len(groups) == 0 {
		return nil
	}
	if constrained {
		if slices.Contains(groups, "") {
			a.User = u
			return errForbidden(a, "impersonating the empty string group is not allowed")
		}
		if slices.Contains(groups, request.SystemPrivileged) {
			a.User, a.Name = u, request.SystemPrivileged
			return errForbidden(a, "impersonating the system:masters group is not allowed")
		}
		if len(groups) >= manyChecks {
			all := a
			all.Name = "*"
			if check(all) == nil {
				return nil
			}
		}
	}
	for _, g := range groups {
		a.Name = g
		if err := check(a); err != nil {
			return err
		}
	}
	return nil
}

// impersonateExtra checks each wanted extra value (kube's
// authorizeExtra).
func impersonateExtra(check func(authz.Attributes) error, a authz.Attributes, extra map[string][]string, constrained bool, u *request.User) error {
	if len(extra) == 0 {
		return nil
	}
	if constrained {
		if msg := invalidExtra(extra); msg != "" {
			a.User = u
			return errForbidden(a, msg)
		}
		n := 0
		for _, vs := range extra {
			n += len(vs)
		}
		if len(extra) >= manyChecks || n >= manyChecks {
			all := a
			all.Subresource, all.Name = "*", "*"
			if check(all) == nil {
				return nil
			}
		}
	}
	for k, vs := range extra {
		a.Subresource = k
		for _, v := range vs {
			a.Name = v
			if err := check(a); err != nil {
				return err
			}
		}
	}
	return nil
}

// invalidExtra is kube's validateExtra for constrained impersonation:
// why extra may not be impersonated, or "".
func invalidExtra(extra map[string][]string) string {
	for k, vs := range extra {
		switch {
		case k == "":
			return "impersonating the empty string key in extra is not allowed"
		case domainPathErrors(k) != "":
			return "impersonating an invalid key in extra is not allowed: " + domainPathErrors(k)
		case k != strings.ToLower(k):
			return fmt.Sprintf("impersonating a non-lowercase key in extra is not allowed: %q", k)
		case len(vs) == 0:
			return "impersonating empty values in extra is not allowed"
		case slices.Contains(vs, ""):
			return "impersonating the empty string value in extra is not allowed"
		}
	}
	return ""
}

// httpPath is apimachinery's httpPathFmt, a domain-prefixed path's path.
const httpPathFmt = `[A-Za-z0-9/\-._~%!$&'()*+,;=:]+`

var httpPath = regexp.MustCompile("^" + httpPathFmt + "$")

// domainPathErrors is apimachinery's IsDomainPrefixedPath on field
// extra.key, aggregated as kube prints it ("" when k is one): a DNS
// subdomain, a slash, and a path.
func domainPathErrors(k string) string {
	invalid := func(v, detail string) string { return fmt.Sprintf("extra.key: Invalid value: %q: %s", v, detail) }
	host, path, ok := strings.Cut(k, "/")
	if !ok || host == "" || path == "" {
		return invalid(k, `must be a domain-prefixed path (such as "acme.io/foo")`)
	}
	var errs []string
	for _, msg := range validation.IsDNS1123Subdomain(host) {
		errs = append(errs, invalid(host, msg))
	}
	if !httpPath.MatchString(path) {
		errs = append(errs, invalid(path, "Invalid path (regex used for validation is '"+httpPathFmt+"')"))
	}
	if len(errs) == 0 {
		return ""
	}
	return aggregated(errs)
}

// nodeName splits "system:node:NAME" where NAME is a DNS subdomain.
func nodeName(user string) (string, bool) {
	name, ok := strings.CutPrefix(user, "system:node:")
	if !ok || len(validation.IsDNS1123Subdomain(name)) != 0 {
		return "", false
	}
	return name, true
}
