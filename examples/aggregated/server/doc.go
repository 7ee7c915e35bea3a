// Package server builds the aggregated example API server: the
// fleet.example.com/v1 Gizmo kind on kapi's memory store, behind
// kube-aggregator, with front-proxy authentication and authentication
// and authorization delegated to the main API server. Tests start it
// in-process; examples/aggregated is its command.
package server
