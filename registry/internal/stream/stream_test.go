package stream

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/watch"
)

func TestFrameJSON(t *testing.T) {
	got, err := Frame([]byte("x"), negotiate.JSON, watch.Added, protobuf.TypeMeta{}, []byte(`{"a":1}`))
	if want := "x" + `{"type":"ADDED","object":{"a":1}}` + "\n"; err != nil || string(got) != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

func TestQueue(t *testing.T) {
	shared := []byte("one\n")
	var q Queue
	q.Add(shared)
	if q.Len() != 4 {
		t.Errorf("Len after one frame: got %d; want 4", q.Len())
	}
	q.Add([]byte("two\n"))
	if err := q.Append(negotiate.JSON, watch.Bookmark, protobuf.TypeMeta{}, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if !q.Send(rec, http.NewResponseController(rec)) {
		t.Fatal("Send: got false; want true")
	}
	want := "one\ntwo\n" + `{"type":"BOOKMARK","object":{}}` + "\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("sent %q; want %q", got, want)
	}
	if !rec.Flushed {
		t.Error("Send did not flush")
	}
	if !bytes.Equal(shared, []byte("one\n")) {
		t.Errorf("the shared frame was written to: %q", shared)
	}
	if q.Len() != 0 {
		t.Errorf("Len after Send: got %d; want 0", q.Len())
	}
}
