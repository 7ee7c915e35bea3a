// Package server builds the example API served by examples/apiserver: core
// v1 namespaces and configmaps, the built-in kinds of package builtin
// (pods, deployments, services, secrets, jobs, leases, events, …), and
// widgets.example.com/v1 Widget with status and scale subresources. Tests start it in-process.
package server
