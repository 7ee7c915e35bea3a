package registry

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/codec/cbor"
	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/internal/gojson"
	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
)

// Request bodies: an object (create, update) or DeleteOptions, in JSON,
// YAML, CBOR, or protobuf when there is a message to read it with.

// readBody reads a request body of at most MaxBodyBytes.
func (r *Registry) readBody(req *http.Request) ([]byte, error) {
	return r.readBodyInto(new(bytes.Buffer), req)
}

// readBodyInto is readBody reading into body, whose bytes it returns.
func (r *Registry) readBodyInto(body *bytes.Buffer, req *http.Request) ([]byte, error) {
	if req.ContentLength > r.opts.MaxBodyBytes {
		return nil, errTooLarge("limit is " + strconv.FormatInt(r.opts.MaxBodyBytes, 10) + " bytes")
	}
	if n := req.ContentLength; n > 0 {
		body.Grow(int(n) + bytes.MinRead) // read at once, EOF included
	}
	_, err := body.ReadFrom(io.LimitReader(req.Body, r.opts.MaxBodyBytes+1))
	if err != nil {
		return nil, errBadRequest("cannot read the request body: %v", err)
	}
	b := body.Bytes()
	if b == nil {
		b = []byte{} // as io.ReadAll: empty, not nil
	}
	if int64(len(b)) > r.opts.MaxBodyBytes {
		return nil, errTooLarge("limit is " + strconv.FormatInt(r.opts.MaxBodyBytes, 10) + " bytes")
	}
	return b, nil
}

// bodies are readObject's body buffers: a JSON or protobuf body's decoded
// object shares no bytes with it (the decoders copy strings), so the
// buffer is reused once decoded.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody bounds the buffers kept in bodies.
const maxPooledBody = 64 << 10

// mediaType returns the request's Content-Type without parameters.
func mediaType(req *http.Request) string {
	ct := req.Header.Get("Content-Type")
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}

// bodyFormat is the format of the request body: JSON when no Content-Type
// is given (as kube reads it), 415 for a type the endpoint does not read.
func bodyFormat(req *http.Request, withProtobuf bool) (negotiate.Format, error) {
	switch mt := mediaType(req); mt {
	case "", negotiate.MediaJSON:
		return negotiate.JSON, nil
	case negotiate.MediaYAML:
		return negotiate.YAML, nil
	case negotiate.MediaCBOR:
		return negotiate.CBOR, nil
	case negotiate.MediaProtobuf:
		if withProtobuf {
			return negotiate.Protobuf, nil
		}
		fallthrough
	default:
		return 0, errUnsupportedMediaType(mt, bodyTypes(withProtobuf))
	}
}

// bodyTypes are the media types a 415 lists.
func bodyTypes(withProtobuf bool) []string {
	supported := []string{negotiate.MediaJSON, negotiate.MediaYAML}
	if withProtobuf {
		supported = append(supported, negotiate.MediaProtobuf)
	}
	return append(supported, negotiate.MediaCBOR)
}

// readObject reads and decodes an object body for res.
// With fieldValidation other than Ignore, a JSON body's duplicate fields
// go to o.duplicates.
func (r *Registry) readObject(req *http.Request, res *Resource, o *writeOptions) (Object, error) {
	f, err := bodyFormat(req, res.Protobuf != nil)
	if err != nil {
		if res.Custom {
			// kube's custom resource serializer lists protobuf (it has
			// it for PartialObjectMetadata) though it reads none.
			err = errUnsupportedMediaType(mediaType(req), bodyTypes(true))
		}
		return nil, err
	}
	buf := bodies.Get().(*bytes.Buffer)
	buf.Reset()
	b, err := r.readBodyInto(buf, req)
	if (f == negotiate.JSON || f == negotiate.Protobuf) && buf.Cap() <= maxPooledBody {
		// The JSON and protobuf decoders copy what they keep (protobuf's
		// strings share one copy of the body); other formats' may keep
		// views of it.
		defer bodies.Put(buf)
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if f == negotiate.JSON {
			return nil, unrecognized(res, b, "couldn't get version/kind; json parse error: unexpected end of JSON input")
		}
		return nil, errBadRequest("the request body is empty; send the object as %s", f)
	}
	var obj Object
	if f == negotiate.JSON {
		obj, o.duplicates, err = decodeJSON(b, o.fieldValidation != fieldIgnore)
	} else {
		obj, err = decodeBody(f, res.Protobuf, b)
		o.fromProtobuf = f == negotiate.Protobuf
	}
	if err != nil && res.Protobuf != nil && f == negotiate.JSON && bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		// Go's decoder reads null into a built-in kind's struct as
		// nothing: an empty object, which validation then refuses.
		obj, err = Object{}, nil
	}
	if err != nil {
		var typeMeta struct {
			APIVersion string `json:"apiVersion,omitempty"`
			Kind       string `json:"kind,omitempty"`
		}
		switch {
		case f == negotiate.JSON:
			if jerr := json.Unmarshal(b, &typeMeta); jerr != nil {
				return nil, unrecognized(res, b, "couldn't get version/kind; json parse error: "+jerr.Error())
			}
		case f == negotiate.YAML:
			return nil, unrecognized(res, b, strings.TrimPrefix(err.Error(), "codec: invalid YAML: "))
		}
		return nil, errBadRequest("the request body is not a valid object: %v", err)
	}
	if res.Protobuf != nil && res.Schema != nil && (f == negotiate.JSON || f == negotiate.YAML) {
		// A built-in kind (kube decodes it into its Go type).
		text := func() ([]byte, error) {
			if f == negotiate.YAML {
				return codec.YAMLToJSON(b)
			}
			return b, nil
		}
		o.decodeErr = r.kindMismatch(res, obj)
		if o.decodeErr == nil {
			if err := gojson.Check(res.Schema, map[string]any(obj), text); err != nil {
				o.decodeErr = cannotHandle(res)(err.Error())
			}
		}
		if o.fieldValidation == fieldStrict {
			if j, err := text(); err == nil {
				o.order = gojson.Positions(j)
			}
		}
	}
	if _, ok := obj["kind"]; !ok && !res.typedList() && f == negotiate.JSON {
		// A custom resource's body is decoded as unstructured, which
		// needs its kind.
		return nil, unrecognized(res, b, fmt.Sprintf("Object 'Kind' is missing in '%s'", b))
	}
	return obj, nil
}

// unrecognized is kube's 400 for a body it cannot read as an object of
// res (its handlers' transformDecodeError): why, then the start of the
// body, as text when it looks like JSON and in hex otherwise.
func unrecognized(res *Resource, body []byte, why string) error {
	return errBadRequest("the object provided is unrecognized (must be of type %s): %s (%s)", res.Kind, why, summarizeBody(body, 30))
}

// summarizeBody is kube's summarizeData: at most max bytes of body.
func summarizeBody(body []byte, max int) string {
	more := ""
	if len(body) > max {
		body, more = body[:max], " ..."
	}
	switch {
	case len(body) == 0:
		return "<empty>"
	case body[0] == '{':
		return string(body) + more
	}
	return hex.EncodeToString(body) + more
}

// decodeBody decodes a whole body of format f into the JSON form; md reads
// protobuf bodies, whose envelope gives apiVersion and kind.
func decodeBody(f negotiate.Format, md protoreflect.MessageDescriptor, b []byte) (Object, error) {
	switch f {
	case negotiate.YAML:
		j, err := codec.YAMLToJSON(b)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
			return nil, jsonobj.ErrNotObject
		}
		return decodeObject(j)
	case negotiate.CBOR:
		m, err := cbor.Unmarshal(b)
		if err != nil {
			return nil, err
		}
		if err := jsonobj.CheckNumbers(m); err != nil {
			return nil, err
		}
		return Object(m), nil
	case negotiate.Protobuf:
		tm, raw, err := protobuf.DecodeEnvelope(b)
		if err != nil {
			return nil, err
		}
		m, err := protobuf.Unmarshal(md, raw)
		if err != nil {
			return nil, err
		}
		if tm.APIVersion != "" {
			m["apiVersion"] = tm.APIVersion
		}
		if tm.Kind != "" {
			m["kind"] = tm.Kind
		}
		return Object(m), nil
	}
	return decodeObject(b)
}

// checkRepresentable refuses an object the resource's protobuf message
// cannot carry (a number where the message has a string), with kube's
// wording: kube decodes every body into the Go type first and answers 400.
func checkRepresentable(res *Resource, obj Object) error {
	if res.Protobuf == nil {
		return nil
	}
	if _, err := protobuf.Marshal(res.Protobuf, obj); err != nil {
		return errBadRequest("%s in version %q cannot be handled as a %s: %v", res.Kind, res.Version, res.Kind, err)
	}
	return nil
}

// kindMismatch is kube's 400 for a built-in kind's body that names
// another kind or version: kube's decoder makes the Go type the body
// names, then fails to convert it to the resource's internal type, or
// has no type for it. A body without apiVersion or kind takes the
// resource's; another version of the same kind, which kube would
// convert, is left to checkTypeMeta.
//
//	POST /api/v1/namespaces/ns/configmaps {"apiVersion": "v1", "kind": "Secret"}
//	→ Secret in version "v1" cannot be handled as a ConfigMap:
//	  converting (v1.Secret) to (core.ConfigMap): unknown conversion
func (r *Registry) kindMismatch(res *Resource, obj Object) error {
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if av == "" {
		av = res.GroupVersion()
	}
	if kind == "" {
		kind = res.Kind
	}
	if av == res.GroupVersion() && kind == res.Kind {
		return nil
	}
	_, version, found := strings.Cut(av, "/")
	if !found {
		version = av
	}
	other := r.resourceForKind(av, kind)
	switch {
	case other == nil || other.GroupVersion() != av:
	case other.Group == res.Group && kind == res.Kind:
		return nil // another served version of the kind (checkTypeMeta)
	default:
		return errBadRequest("%s in version %q cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion",
			kind, version, res.Kind, version, kind, internalPackage(res.Group), res.Kind)
	}
	return errBadRequest("%s in version %q cannot be handled as a %s: no kind %q is registered for version %q in scheme \"pkg/runtime/scheme.go:111\"",
		kind, version, res.Kind, kind, av)
}

// internalPackage is the Go package of kube's internal types of a group
// (k8s.io/kubernetes/pkg/apis/...), which its conversion errors name.
func internalPackage(group string) string {
	switch group {
	case "", "events.k8s.io":
		return "core"
	case "internal.apiserver.k8s.io":
		return "apiserverinternal"
	}
	first, _, _ := strings.Cut(group, ".")
	return first
}
