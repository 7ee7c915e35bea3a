package rbac

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, for errors.Is.
var (
	// ErrNotFound: a binding's RoleRef names a role that does not exist.
	ErrNotFound = errors.New("rbac: role not found")
	// ErrUnsupportedRoleRef: a RoleRef's kind is neither Role nor ClusterRole.
	ErrUnsupportedRoleRef = errors.New("rbac: unsupported role reference kind")
	// ErrEscalation: a write would grant rules its author does not hold.
	ErrEscalation = errors.New("rbac: privilege escalation")
	// ErrInvalidSelector: a label selector kube would refuse.
	ErrInvalidSelector = errors.New("rbac: invalid label selector")
	// ErrNoUser: an escalation check without a user.
	ErrNoUser = errors.New("rbac: no user")
)

// NotFoundError is a missing role. Its text is kube's NotFound message:
// the authorizer's reason names the resource in the singular, as kube's
// informer listers do (clusterrole.rbac.authorization.k8s.io "x" not
// found); RulesOfRef, which the registry calls when a binding is written,
// names it in the plural, as kube's storage does (roles.rbac.…), so that
// the registry can answer 404 with kube's text.
type NotFoundError struct {
	Resource string // role, clusterrole, roles or clusterroles
	Name     string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s.%s %q not found", e.Resource, GroupName, e.Name)
}

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// UnsupportedRoleRefError is a RoleRef of an unknown kind.
type UnsupportedRoleRefError struct{ Kind string }

func (e *UnsupportedRoleRefError) Error() string {
	return fmt.Sprintf("unsupported role reference kind: %q", e.Kind)
}

// Is makes errors.Is(err, ErrUnsupportedRoleRef) hold.
func (e *UnsupportedRoleRefError) Is(target error) bool { return target == ErrUnsupportedRoleRef }

// EscalationError is a refused write: the user does not hold Missing.
// Its text is kube's (the registry prefixes it with, for a Role,
// `roles.rbac.authorization.k8s.io "NAME" is forbidden: `, see
// ForbiddenMessage, and answers 403).
type EscalationError struct {
	User    string
	Groups  []string
	Missing []PolicyRule // compacted, as in the message
	// Resolution is the errors met resolving the user's own rules (a
	// binding to a missing role), appended to the message as kube does.
	Resolution []error
	// Message, when set, replaces the text (kube's "must have
	// cluster-admin privileges to use the aggregationRule").
	Message string
}

func (e *EscalationError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	desc := make([]string, 0, len(e.Missing))
	for _, r := range e.Missing {
		desc = append(desc, r.CompactString())
	}
	desc = sortedUnique(desc)
	groups := e.Groups
	if groups == nil {
		groups = []string{}
	}
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", e.User, groups, strings.Join(desc, "\n"))
	if len(e.Resolution) > 0 {
		msg += fmt.Sprintf("; resolution errors: [%s]", aggregate(e.Resolution))
	}
	return msg
}

// Is makes errors.Is(err, ErrEscalation) hold.
func (e *EscalationError) Is(target error) bool { return target == ErrEscalation }

// ForbiddenMessage is the message of kube's Forbidden status for a write
// of the object name of resource (roles, clusterroles, rolebindings,
// clusterrolebindings) refused with err:
// `roles.rbac.authorization.k8s.io "NAME" is forbidden: ` and err's text.
func ForbiddenMessage(resource, name string, err error) string {
	if name == "" {
		return fmt.Sprintf("%s.%s is forbidden: %v", resource, GroupName, err)
	}
	return fmt.Sprintf("%s.%s %q is forbidden: %v", resource, GroupName, name, err)
}

// aggregate is the text of apimachinery's errors.NewAggregate: one error's
// own text, or several, deduplicated, as "[a, b]".
func aggregate(errs []error) string {
	if len(errs) == 1 {
		return errs[0].Error()
	}
	var msgs []string
	seen := map[string]bool{}
	for _, e := range errs {
		m := e.Error()
		if !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// aggregateError is errors.NewAggregate's error.
type aggregateError []error

func (a aggregateError) Error() string   { return aggregate(a) }
func (a aggregateError) Unwrap() []error { return a }

func joinErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return aggregateError(errs)
}
