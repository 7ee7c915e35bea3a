package watch

// EventType is the kind of a watch event, as it appears on the wire.
type EventType string

// The event types of the Kubernetes watch protocol.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	Error    EventType = "ERROR"
)

// Event is one notification.
//
// Revision is the resourceVersion the event happened at; consumers put it on
// the object they send. Object's concrete type belongs to the producer
// (storage watches carry storage.Object values); it is nil for bookmarks,
// and an error for Error events. For Deleted, Object is the last state the
// watcher saw, which is older than Revision.
type Event struct {
	Type     EventType
	Revision uint64
	Object   any
	// InitialEventsEnd marks the bookmark that ends the initial events of
	// a watch that asked for them (sendInitialEvents=true).
	InitialEventsEnd bool
}

// Interface is what a watcher reads. ResultChan is closed when the watch
// ends, whether by Stop, by the producer, or because the watcher fell
// behind; Stop may be called any number of times, from any goroutine.
type Interface interface {
	ResultChan() <-chan Event
	Stop()
}
