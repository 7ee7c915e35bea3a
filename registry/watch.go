package registry

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/registry/internal/stream"
	"github.com/kapi-dev/kapi/registry/internal/table"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// watchOptions turns a parsed watch query into storage options. A
// streaming list (sendInitialEvents) at NotOlderThan N serves the current
// state once the store has reached N.
func (r *Registry) watchOptions(ctx context.Context, lq listQuery) (storage.WatchOptions, error) {
	o := storage.WatchOptions{
		Recursive: true, Revision: lq.req.Revision,
		// The initial-events-end bookmark is a bookmark: sent only to a
		// client that allows them, as kube.
		Initial: lq.req.Initial, InitialEnd: lq.req.InitialEnd && lq.bookmarks,
		Bookmarks: lq.bookmarks, Predicate: lq.pred,
	}
	if o.Initial && lq.req.Match == rv.NotOlderThan && o.Revision > 0 {
		cur, err := r.store.Revision(ctx)
		if err != nil {
			return o, err
		}
		if cur >= o.Revision {
			o.Revision = 0
		}
	}
	return o, nil
}

// retiredWatchGrace is how long a watch goes on once its resource is
// replaced or unregistered: kube's CRD handler tears a CRD's old storage
// down a second after the change.
const retiredWatchGrace = time.Second

// serveWatch streams events in the negotiated format (newline-separated
// JSON documents, length-prefixed protobuf frames, or a CBOR sequence)
// until timeoutSeconds (or a randomised default), the client going away,
// the store ending the watch, or the resource being replaced or
// unregistered. Events are sent in batches: once one
// arrives, every event already waiting on the watch (up to
// stream.MaxBatch, or stream.BatchBytes of frames) joins it, and the batch
// goes out in one Write and one Flush. A watcher that keeps up gets each event as its own chunk; one
// that falls behind catches up in few large writes instead of a syscall
// per event.
func (r *Registry) serveWatch(w http.ResponseWriter, rq *routed) error {
	t, err := negotiateFor(rq.Request, rq.res, negotiate.Watch)
	if err != nil {
		return err
	}
	include := ""
	if t.View == negotiate.Table {
		if include, err = tableOptions(rq.Request); err != nil {
			return err
		}
	}
	lq, err := parseListQuery(rq.res, rq.URL.Query(), true, rq.name)
	if err != nil {
		return err
	}
	timeout := time.Duration(lq.timeout) * time.Second
	if lq.timeout == 0 {
		min := r.opts.MinWatchTimeout
		timeout = min + rand.N(min)
	}
	ctx, cancel := context.WithTimeout(rq.Context(), timeout)
	defer cancel()
	opts, err := r.watchOptions(ctx, lq)
	if err != nil {
		return err
	}
	wi, err := r.storeFor(rq.res).Watch(ctx, rq.res.collectionKey(rq.namespace), opts)
	if err != nil && !errors.Is(err, storage.ErrExpired) {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", stream.Types[t.Format])
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	s := &eventWriter{r: r, res: rq.res, t: t, include: include, headers: true, w: w, last: lq.req.Revision}
	if err != nil { // too old: one ERROR event, then the stream ends
		s.writeError(toStatus(err, rq.res, ""))
		s.send(rc)
		return nil
	}
	defer wi.Stop()
	rc.Flush()
	var beforeDeadline <-chan time.Time
	if lq.bookmarks && timeout > r.opts.BookmarkBeforeDeadline {
		t := time.NewTimer(timeout - r.opts.BookmarkBeforeDeadline)
		defer t.Stop()
		beforeDeadline = t.C
	}
	retired := rq.res.retired
	var teardown <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-retired:
			// The resource is no longer served as it was (its CRD changed
			// or went): the stream ends cleanly a moment later, as
			// apiextensions-apiserver ends it when it tears the old
			// storage down (a second on), so the events of the change
			// (the instances a CRD's delete removed) still reach it; the
			// client watches again and gets the new definition, or 404.
			retired, teardown = nil, time.After(retiredWatchGrace)
		case <-teardown:
			return nil
		case <-beforeDeadline:
			beforeDeadline = nil
			if b, ok := wi.(bookmarker); ok {
				b.RequestBookmark() // the store knows the newest safe revision
			} else if s.last > 0 {
				s.writeBookmark(s.last, false)
			}
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return nil
			}
			if !s.batch(ev, wi.ResultChan()) {
				s.send(rc)
				return nil
			}
		}
		if !s.send(rc) {
			return nil
		}
	}
}

// batch queues ev and the events already waiting on ch, without waiting
// for more. It reports false when the stream should end once what was
// queued is sent (an ERROR event, or ch closed).
func (s *eventWriter) batch(ev watch.Event, ch <-chan watch.Event) bool {
	for n := 1; ; n++ {
		if !s.write(ev) {
			return false
		}
		if n == stream.MaxBatch || s.q.Len() >= stream.BatchBytes {
			return true
		}
		var ok bool
		select {
		case ev, ok = <-ch:
			if !ok {
				return false
			}
		default:
			return true
		}
	}
}

// bookmarker is implemented by store watches that can send a bookmark on
// request (storage/memory's does).
type bookmarker interface{ RequestBookmark() }

// eventWriter writes the events of one watch stream in its negotiated
// target. An event's bytes are computed once per stored state, event type
// and target, and shared by every watcher (see memoKey); Table events
// (kubectl get -w) are built per stream, since only the first carries the
// column definitions and ages change. Frames wait in a stream.Queue until
// send writes them.
type eventWriter struct {
	r       *Registry
	res     *Resource
	t       negotiate.Target
	include string // Table includeObject
	headers bool   // the next Table event carries column definitions
	w       http.ResponseWriter
	last    uint64       // newest revision sent, for bookmarks
	q       stream.Queue // frames waiting for send
	events  int          // events queued since the last send, for Options.Metrics
}

// write queues ev; it reports false when the stream should end.
func (s *eventWriter) write(ev watch.Event) bool {
	s.events++
	switch ev.Type {
	case watch.Bookmark:
		return s.writeBookmark(ev.Revision, ev.InitialEventsEnd)
	case watch.Error:
		err, _ := ev.Object.(error)
		if err == nil {
			err = errors.New("watch ended")
		}
		s.writeError(toStatus(err, s.res, ""))
		return false
	}
	o, ok := ev.Object.(storage.Object)
	if !ok {
		return true
	}
	o = withDefaults(s.res, o)
	s.last = max(s.last, ev.Revision)
	if s.t.View == negotiate.Table {
		o.Revision = ev.Revision
		o.Memo = nil // a DELETED event shows the last state at a new revision
		tb, err := s.r.buildTable(s.res, s.t, s.include, []storage.Object{o}, map[string]any{"resourceVersion": rv.Format(ev.Revision)}, s.headers)
		if err != nil {
			s.writeError(toStatus(err, s.res, ""))
			return false
		}
		s.headers = false
		return s.writeValue(ev.Type, tableTypeMeta(s.t), nil, tb)
	}
	k := memoKey(ev.Revision, eventMemo, s.t, ev.Type)
	if v, ok := o.Memo.Load(k); ok {
		s.q.Add(v.([]byte))
		return true
	}
	v, err := o.Memo.Do(k, func() (any, error) {
		s.r.frames[s.t.Format].Add(1)
		item, err := s.r.item(s.res, o, ev.Revision, s.t)
		if err != nil {
			return nil, err
		}
		return stream.Frame(nil, s.t.Format, ev.Type, s.res.typeMeta(s.t, false), item)
	})
	if err != nil {
		s.writeError(toStatus(err, s.res, ""))
		return false
	}
	s.q.Add(v.([]byte))
	return true
}

func tableTypeMeta(t negotiate.Target) protobuf.TypeMeta {
	return protobuf.TypeMeta{APIVersion: t.MetaAPIVersion(), Kind: "Table"}
}

// writeValue queues an event whose object is a value built for this
// stream (a bookmark, a Table, a Status); md is its protobuf message.
func (s *eventWriter) writeValue(typ watch.EventType, tm protobuf.TypeMeta, md protoreflect.MessageDescriptor, v any) bool {
	b, err := valueItem(s.t.Format, md, v)
	if err != nil {
		return false
	}
	return s.q.Append(s.t.Format, typ, tm, b) == nil
}

// writeBookmark queues a BOOKMARK whose object carries only the revision
// (and the initial-events-end annotation), in the watched type.
func (s *eventWriter) writeBookmark(rev uint64, initialEnd bool) bool {
	s.last = max(s.last, rev)
	meta := map[string]any{"resourceVersion": rv.Format(rev)}
	if initialEnd {
		meta["annotations"] = map[string]any{"k8s.io/initial-events-end": "true"}
	}
	tm := s.res.typeMeta(s.t, false)
	var obj any = map[string]any{"kind": tm.Kind, "apiVersion": tm.APIVersion, "metadata": meta}
	md := s.res.Protobuf
	switch s.t.View {
	case negotiate.Partial:
		md = protobuf.PartialObjectMetadata
	case negotiate.Table:
		tm, md = tableTypeMeta(s.t), nil
		obj = &table.Table{Kind: tm.Kind, APIVersion: tm.APIVersion, Metadata: map[string]any{"resourceVersion": rv.Format(rev)}, Rows: []table.Row{}}
	}
	return s.writeValue(watch.Bookmark, tm, md, obj)
}

// send writes the queued frames and flushes them; it reports false when
// the client is gone.
func (s *eventWriter) send(rc *http.ResponseController) bool {
	if m := s.r.opts.Metrics; m != nil && s.events > 0 {
		m.WatchEvents(s.res.Group, s.res.Version, s.res.Plural, s.events, s.q.Len())
	}
	s.events = 0
	return s.q.Send(s.w, rc)
}

// writeError queues an ERROR event carrying a Status.
func (s *eventWriter) writeError(se *StatusError) {
	s.writeValue(watch.Error, statusTypeMeta, protobuf.Status, se.Status)
}
