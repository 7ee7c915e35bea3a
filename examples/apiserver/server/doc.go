// Package server builds the example API served by examples/apiserver: core
// v1 namespaces and configmaps, and widgets.example.com/v1 Widget with
// status and scale subresources. Tests start it in-process.
package server
