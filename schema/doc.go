// Package schema is the structural schema model of kapi's resources: the
// OpenAPI v3 subset CustomResourceDefinitions use, built from Go (a
// literal), from Go structs (json tags and k8s.io/api's patch tags), or
// from apiextensions.k8s.io/v1 CustomResourceDefinition manifests — without
// any k8s.io module. Patching (strategic merge, server-side apply),
// validation and OpenAPI publishing read it.
package schema
