package rbac

import (
	"encoding/json"
	"errors"
	"fmt"
)

// APIVersion is the apiVersion of the RBAC objects' JSON.
const APIVersion = GroupName + "/v1"

// ErrUnknownKind: SetJSON or Delete with a kind other than Role,
// ClusterRole, RoleBinding or ClusterRoleBinding.
var ErrUnknownKind = errors.New("rbac: unknown kind")

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// MarshalJSON is the Role as kube stores it, with apiVersion and kind.
func (r Role) MarshalJSON() ([]byte, error) {
	type plain Role
	return json.Marshal(struct {
		typeMeta
		plain
	}{typeMeta{APIVersion, "Role"}, plain(r)})
}

// MarshalJSON is the ClusterRole as kube stores it, with apiVersion and kind.
func (r ClusterRole) MarshalJSON() ([]byte, error) {
	type plain ClusterRole
	return json.Marshal(struct {
		typeMeta
		plain
	}{typeMeta{APIVersion, "ClusterRole"}, plain(r)})
}

// MarshalJSON is the RoleBinding as kube stores it, with apiVersion and kind.
func (b RoleBinding) MarshalJSON() ([]byte, error) {
	type plain RoleBinding
	return json.Marshal(struct {
		typeMeta
		plain
	}{typeMeta{APIVersion, "RoleBinding"}, plain(b)})
}

// MarshalJSON is the ClusterRoleBinding as kube stores it, with
// apiVersion and kind.
func (b ClusterRoleBinding) MarshalJSON() ([]byte, error) {
	type plain ClusterRoleBinding
	return json.Marshal(struct {
		typeMeta
		plain
	}{typeMeta{APIVersion, "ClusterRoleBinding"}, plain(b)})
}

// SetJSON decodes an object of kind (Role, ClusterRole, RoleBinding,
// ClusterRoleBinding) from its JSON and sets it: the registry calls it
// with each stored object as it changes.
func (z *Authorizer) SetJSON(kind string, data []byte) error {
	var err error
	switch kind {
	case "Role":
		var r Role
		if err = json.Unmarshal(data, &r); err == nil {
			z.SetRole(&r)
		}
	case "ClusterRole":
		var r ClusterRole
		if err = json.Unmarshal(data, &r); err == nil {
			z.SetClusterRole(&r)
		}
	case "RoleBinding":
		var b RoleBinding
		if err = json.Unmarshal(data, &b); err == nil {
			z.SetRoleBinding(&b)
		}
	case "ClusterRoleBinding":
		var b ClusterRoleBinding
		if err = json.Unmarshal(data, &b); err == nil {
			z.SetClusterRoleBinding(&b)
		}
	default:
		return fmt.Errorf("%w: %q", ErrUnknownKind, kind)
	}
	if err != nil {
		return fmt.Errorf("rbac: decoding a %s: %w", kind, err)
	}
	return nil
}

// Delete removes the object of kind, namespace ("" for cluster-scoped
// kinds) and name.
func (z *Authorizer) Delete(kind, namespace, name string) error {
	switch kind {
	case "Role":
		z.DeleteRole(namespace, name)
	case "ClusterRole":
		z.DeleteClusterRole(name)
	case "RoleBinding":
		z.DeleteRoleBinding(namespace, name)
	case "ClusterRoleBinding":
		z.DeleteClusterRoleBinding(name)
	default:
		return fmt.Errorf("%w: %q", ErrUnknownKind, kind)
	}
	return nil
}
