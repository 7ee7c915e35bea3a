// Package metrics measures a kapi server in Prometheus' text format,
// under kube-apiserver's metric names, so the dashboards and alerts made
// for kube-apiserver read it: its one job is to turn the core's
// measurement hooks (serve.Observer, registry.Metrics) into metrics.
//
//	apiserver_request_total{verb,dry_run,group,version,resource,subresource,scope,component,code}
//	apiserver_request_duration_seconds{verb,dry_run,group,version,resource,subresource,scope,component}
//	apiserver_request_terminations_total{…,code}   429 (in-flight limit) and 504 (timeout)
//	apiserver_longrunning_requests{verb,group,version,resource,subresource,scope,component}
//	apiserver_current_inflight_requests{request_kind}   readOnly, mutating
//	apiserver_watch_events_total{group,version,resource}
//	apiserver_watch_events_sizes{group,version,resource}
//	apiserver_storage_objects{resource}   at each scrape, from Options.Objects
//
// plus the Go runtime's and the process' collectors. Where kapi's figure
// differs from kube's: apiserver_current_inflight_requests is the count at
// the last change (kube reports the highest of the last second), and
// apiserver_watch_events_sizes observes each event of a sent batch at the
// batch's mean size.
//
// It is a Go module of its own so that the core module stays on the
// standard library and the design card's few dependencies: the Prometheus
// client (and its own dependencies) comes only into the programs that
// import this package. Writing the text format by hand in the core was
// the other way; a home-made encoder of a format with escaping, histogram
// and exposition rules would be one more thing to get wrong, and the
// hooks keep the core's cost to a few method calls per request.
package metrics
