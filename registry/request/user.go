package request

import "context"

// User is who sends a request, as an authenticator finds it: kube's
// user.Info.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// The users and groups kube gives special meaning.
const (
	Anonymous          = "system:anonymous"
	AllUnauthenticated = "system:unauthenticated"
	AllAuthenticated   = "system:authenticated"
	SystemPrivileged   = "system:masters"
)

// InGroup reports whether u is in group g.
func (u *User) InGroup(g string) bool {
	for _, x := range u.Groups {
		if x == g {
			return true
		}
	}
	return false
}

type userKey struct{}

// WithUser returns ctx carrying u.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the User an authenticator stored in ctx.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey{}).(*User)
	return u, ok
}
