package stream

import (
	"io"
	"net/http"
	"sync"

	"github.com/kapi-dev/kapi/codec/cbor"
	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/watch"
)

// Types are the Content-Types of watch streams per format, as kube
// answers them (CBOR watches are CBOR sequences).
var Types = [negotiate.NumFormats]string{
	negotiate.JSON:     negotiate.MediaJSON,
	negotiate.Protobuf: negotiate.MediaProtobuf + ";stream=watch",
	negotiate.CBOR:     negotiate.MediaCBORSeq,
}

// Frame appends one framed watch event whose object is item (an
// encoded object without envelope, named by tm).
func Frame(dst []byte, f negotiate.Format, typ watch.EventType, tm protobuf.TypeMeta, item []byte) ([]byte, error) {
	switch f {
	case negotiate.Protobuf:
		return protobuf.AppendWatchFrame(dst, string(typ), tm, item), nil
	case negotiate.CBOR:
		return cbor.AppendWatchEvent(dst, string(typ), item)
	}
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","object":`...)
	dst = append(dst, item...)
	return append(dst, "}\n"...), nil
}

// Bounds of one batch of watch events: it stops growing at MaxBatch
// events or once its frames reach BatchBytes (one frame may pass it).
const (
	MaxBatch   = 64
	BatchBytes = 64 << 10
)

// batchBufs holds the buffers streams assemble batches in (*[]byte).
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// Queue holds the frames of one stream until Send writes them: a lone
// shared frame as is (one), two or more copied into buf, which is
// borrowed from batchBufs only while they wait, so a cached frame costs a
// stream no allocation. The zero Queue is empty.
type Queue struct {
	one []byte // a lone queued frame, shared: never written to
	buf []byte // queued frames, copied: a batchBufs buffer, or nil
}

// Len is the size of the queued frames.
func (q *Queue) Len() int { return len(q.one) + len(q.buf) }

// Append queues a frame built for this stream (see Frame).
func (q *Queue) Append(f negotiate.Format, typ watch.EventType, tm protobuf.TypeMeta, item []byte) error {
	buf, err := Frame(q.spill(), f, typ, tm, item)
	if err != nil {
		return err
	}
	q.buf = buf
	return nil
}

// Add queues a frame shared with other streams (a Memo's), which must not
// be modified: a lone frame is written as is, and copied into buf only
// when another joins it.
func (q *Queue) Add(frame []byte) {
	if q.one == nil && len(q.buf) == 0 {
		q.one = frame
		return
	}
	q.buf = append(q.spill(), frame...)
}

// spill moves a queued shared frame into buf, and returns buf for
// appending. buf comes from batchBufs and goes back after each send, so a
// stream holds one only while it has two or more frames to write: a
// thousand watchers that fall behind together share the buffers of the
// few that are sending, rather than keeping 64 KiB or more each.
func (q *Queue) spill() []byte {
	if q.buf == nil {
		q.buf = (*batchBufs.Get().(*[]byte))[:0]
	}
	if q.one != nil {
		q.buf = append(q.buf, q.one...)
		q.one = nil
	}
	return q.buf
}

// Send writes the queued frames to w in one Write and flushes them with
// rc; it reports false when the client is gone. buf goes back to
// batchBufs (unless a large frame grew it past twice BatchBytes).
func (q *Queue) Send(w io.Writer, rc *http.ResponseController) bool {
	b := q.one
	if b == nil {
		b = q.buf
	}
	q.one = nil
	var err error
	if len(b) > 0 {
		_, err = w.Write(b) // a Writer keeps no reference to b
	}
	if q.buf != nil {
		if cap(q.buf) <= 2*BatchBytes {
			buf := q.buf[:0]
			batchBufs.Put(&buf)
		}
		q.buf = nil
	}
	if err != nil {
		return false
	}
	return rc.Flush() == nil
}
