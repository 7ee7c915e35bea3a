// Package watch delivers change notifications: the Event types, the
// Interface a watcher reads, and Broadcaster, which fans events out to many
// watchers without ever blocking the writer.
//
// Each watcher has a bounded buffer. A watcher that falls behind is ended
// with a reason (Kubernetes clients then re-watch from the last
// resourceVersion they saw) instead of stalling the writer or the other
// watchers.
package watch
