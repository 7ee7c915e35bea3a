// Package serve serves an http.Handler — a registry.Registry, usually —
// as kube-apiserver serves its API: the one job of turning a handler into
// a production server.
//
//   - TLS from certificate files, re-read when they change, or from a
//     self-signed certificate made at start (kept in a directory if asked,
//     its CA returned for a kubeconfig); HTTP/2, watches included.
//   - Max-in-flight limits for read-only and for mutating requests, as
//     kube's --max-requests-inflight and --max-mutating-requests-inflight:
//     over the limit a request is refused at once with 429, Retry-After: 1
//     and a Status (kube's filter writes the same code and header with a
//     plain-text body; client-go retries either). Long-running requests
//     (watches) are not counted.
//   - A deadline for every request that is not long-running: 60 s, or a
//     shorter ?timeout=; then kube's 504 Status.
//   - Bounds on what a client may hold: header, body and idle timeouts, a
//     header size limit, and a write timeout, so a client that stalls
//     while sending or stops reading is cut off while others are served.
//   - /livez, /readyz and /healthz with named checks, printed as kube
//     prints them with ?verbose ("[+]ping ok" … "livez check passed"),
//     and /metrics from the handler given.
//   - Graceful shutdown: /readyz fails, the listeners close after a delay,
//     watches end cleanly (the client re-watches elsewhere), requests in
//     flight finish.
//   - A log line per request and measurements for metrics, each only when
//     asked for (Options.Logger, Options.Observer): the package is silent
//     otherwise.
//
// The stages, outermost first, for each request:
//
//	request.Parse (verb, resource…) → log line and metrics when it ends →
//	  long-running: ended by Shutdown            → handler
//	  otherwise:    in-flight slot (or 429, system:masters spared) → deadline (or 504) → handler
//
// kube-apiserver runs its in-flight limit after authentication and spares
// system:masters; here the limit comes first, and a request it would
// refuse is authenticated then (when the handler can tell its user:
// registry.Registry's Authenticate) and served if its user is in
// system:masters.
//
// When the handler serves non-resource paths itself after authorizing
// them (registry.Registry's HandleNonResource), the health endpoints and
// /metrics are added there, so the authorizer decides who reads them as in
// kube (its RBAC defaults let anyone read the health endpoints, and
// /metrics only those granted it); for any other handler the server
// answers them in front of it.
//
// Worked example of the in-flight limit, with MaxRequestsInFlight 1: a
// list holds the read-only slot; a second list in the meantime gets 429
// at once, a create takes the mutating slot, and a watch is served (it is
// long-running); when the first list ends, the next read-only request
// takes the slot.
//
// Metrics in Prometheus format come from the module
// github.com/kapi-dev/kapi/metrics, which implements Observer (and the
// registry's Metrics) with prometheus/client_golang, so that importing
// this package pulls no dependency beyond the standard library.
package serve
