package main

// The k8s.io/kubernetes module is required for its committed OpenAPI and
// discovery documents, which kubeDir finds through `go list -m`; its
// defaulting code (imported by the tests) is the reference for the
// builtin package's defaults.
