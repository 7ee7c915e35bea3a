package registry

import "context"

// directKey marks a context's writes as direct (DirectWrite).
type directKey struct{}

// DirectWrite returns ctx with its updates marked as kube's storage-level
// writes, which a subresource such as pods/binding makes (kube's
// assignPod updates the pod in storage, not through its REST update):
// they still take the one write path (admission, validation, the
// strategy's hooks), but leave managedFields as they are and bump no
// metadata.generation. Use it for the writes a kind's subresource makes
// on behalf of a controller, as kube does:
//
//	POST pods/p/binding  →  pod p stored with spec.nodeName, its managedFields and generation unchanged
func DirectWrite(ctx context.Context) context.Context {
	return context.WithValue(ctx, directKey{}, true)
}

// direct reports whether ctx's writes are direct (DirectWrite).
func direct(ctx context.Context) bool {
	d, _ := ctx.Value(directKey{}).(bool)
	return d
}
