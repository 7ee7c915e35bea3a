package registry

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

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
		Initial: lq.req.Initial, InitialEnd: lq.req.InitialEnd,
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

// serveWatch streams events as newline-separated JSON documents, one
// flushed chunk per event, until timeoutSeconds (or a randomised default),
// the client going away, or the store ending the watch.
func (r *Registry) serveWatch(w http.ResponseWriter, rq *request) error {
	if err := negotiate(rq.Request); err != nil {
		return err
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
	wi, err := r.store.Watch(ctx, rq.res.collectionKey(rq.namespace), opts)
	if err != nil && !errors.Is(err, storage.ErrExpired) {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", mediaJSON)
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	s := &eventWriter{res: rq.res, w: w, last: lq.req.Revision}
	if err != nil { // too old: one ERROR event, then the stream ends
		s.writeError(toStatus(err, rq.res, ""))
		rc.Flush()
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
	for {
		select {
		case <-ctx.Done():
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
			if !s.write(ev) {
				return nil
			}
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
	}
}

// bookmarker is implemented by store watches that can send a bookmark on
// request (storage/memory's does).
type bookmarker interface{ RequestBookmark() }

// eventWriter encodes watch events for one stream. Objects are the stored
// bytes with the event's revision spliced in; nothing is re-encoded.
type eventWriter struct {
	res  *Resource
	w    http.ResponseWriter
	buf  []byte
	last uint64 // newest revision sent, for bookmarks
}

// write sends ev; it reports false when the stream should end.
func (s *eventWriter) write(ev watch.Event) bool {
	switch ev.Type {
	case watch.Bookmark:
		s.writeBookmark(ev.Revision, ev.InitialEventsEnd)
		return true
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
	b := append(s.buf[:0], `{"type":"`...)
	b = append(b, ev.Type...)
	b = append(b, `","object":`...)
	b = appendRV(b, o.Value, ev.Revision)
	b = append(b, "}\n"...)
	s.buf = b
	s.last = max(s.last, ev.Revision)
	_, err := s.w.Write(b)
	return err == nil
}

func (s *eventWriter) writeBookmark(rev uint64, initialEnd bool) {
	b := append(s.buf[:0], `{"type":"BOOKMARK","object":{"kind":`...)
	b = strconv.AppendQuote(b, s.res.Kind)
	b = append(b, `,"apiVersion":`...)
	b = strconv.AppendQuote(b, s.res.GroupVersion())
	b = append(b, `,"metadata":{"resourceVersion":"`...)
	b = rv.Append(b, rev)
	b = append(b, `","creationTimestamp":null`...)
	if initialEnd {
		b = append(b, `,"annotations":{"k8s.io/initial-events-end":"true"}`...)
	}
	b = append(b, "}}}\n"...)
	s.buf = b
	s.last = max(s.last, rev)
	s.w.Write(b)
}

func (s *eventWriter) writeError(se *StatusError) {
	b := append(s.buf[:0], `{"type":"ERROR","object":`...)
	b = append(b, mustJSON(se.Status)...)
	b = append(b, "}\n"...)
	s.buf = b
	s.w.Write(b)
}
