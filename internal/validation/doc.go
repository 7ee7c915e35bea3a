// Package validation checks object metadata the way kube-apiserver does:
// names, namespaces, label and annotation keys and values, finalizers and
// owner references, with kube's messages, so clients see the same 422
// causes they would from a real cluster.
//
// The string rules (IsDNS1123Subdomain, IsQualifiedName, ...) return the
// problems as messages, none when the value is valid. ValidateObjectMeta and
// ValidateObjectMetaUpdate work on the decoded JSON "metadata" object and
// return [Error] values carrying the field path and kube's error type.
package validation
