package registry

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/registry/internal/openapi"
)

// OpenAPI v3 (URI-8, in part): /openapi/v3 lists one document per group
// version, and each document describes the resources' paths and schemas
// (package openapi builds them). kubectl reads these to learn that the
// server validates fields itself (the fieldValidation parameter of PATCH),
// and `kubectl explain` reads the schemas.

// serveOpenAPI serves /openapi/v3 and /openapi/v3/{api/v1,apis/G/V},
// from the documents cached with the table (restable.go), as
// kube-openapi's handler3 serves them: uncompressed, with an ETag and
// Last-Modified (as http.ServeContent answers: 304 to a matching
// If-None-Match; serveContent).
// A group version's document asked for with the hash of the index's URL
// is immutable (Cache-Control: public, immutable); with an older hash, it
// is a 301 to the current URL.
//
// Worked example: the index lists "apis/example.com/v1" with
// serverRelativeURL "/openapi/v3/apis/example.com/v1?hash=9F86…"; a GET
// of that URL answers the document with Etag "9F86…"; once the group
// version changes, the same URL answers 301 with Location
// /openapi/v3/apis/example.com/v1?hash=<the new hash>.
func (r *Registry) serveOpenAPI(w http.ResponseWriter, req *http.Request, path string) {
	rest := strings.TrimPrefix(strings.TrimPrefix(path, "/openapi/v3"), "/")
	t := r.tab.Load()
	if rest == "" {
		d := t.openAPIIndex(r.opts.Now())
		w.Header().Set("Etag", d.etag)
		w.Header().Set("Content-Type", "application/json")
		serveContent(w, req, "/openapi/v3", d.modified, d.raw)
		return
	}
	group, version := "", ""
	switch parts := strings.Split(rest, "/"); {
	case len(parts) == 2 && parts[0] == "api":
		version = parts[1]
	case len(parts) == 3 && parts[0] == "apis" && parts[1] != "":
		group, version = parts[1], parts[2]
	}
	gv := t.groups[group][version]
	if gv == nil || version == "" {
		writeStatus(w, req, errPathNotFound())
		return
	}
	doc := gv.openAPIV3(r.opts.Version.GitVersion, r.opts.Now())
	h := w.Header()
	h.Add("Vary", "Accept")
	h.Set("Content-Type", "application/json")
	h.Set("Etag", strconv.Quote(gv.hash))
	if hash := req.URL.Query().Get("hash"); hash != "" {
		if hash != gv.hash {
			http.Redirect(w, req, "/openapi/v3/"+gv.path+"?hash="+gv.hash, http.StatusMovedPermanently)
			return
		}
		h.Set("Vary", "Accept")
		h.Set("Cache-Control", "public, immutable")
		h.Set("Expires", r.opts.Now().AddDate(1, 0, 0).Format(time.RFC1123))
	}
	serveContent(w, req, "", gv.v3Modified, doc)
}

// serveContent answers as http.ServeContent does (kube-openapi's
// handler3 serves its documents with it), writing body in one Write
// when the request is a plain GET or HEAD: no Range and no conditional
// header, so the answer is 200 with the whole body. ServeContent copies
// a body through io.CopyN, 32 KiB at a time, so a 230 KiB index is
// eight writes to the socket; one Write of the ready bytes is one (the
// headers are the same: Accept-Ranges, Last-Modified, Content-Length).
// Any other request goes to ServeContent, which decides ranges,
// If-None-Match, If-Modified-Since and the rest.
func serveContent(w http.ResponseWriter, req *http.Request, name string, modified time.Time, body []byte) {
	h := req.Header
	if h.Get("Range") != "" || h.Get("If-Match") != "" || h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != "" ||
		h.Get("If-Unmodified-Since") != "" || h.Get("If-Range") != "" || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		http.ServeContent(w, req, name, modified, bytes.NewReader(body))
		return
	}
	out := w.Header()
	if !modified.IsZero() && !modified.Equal(time.Unix(0, 0)) {
		out.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	}
	out.Set("Accept-Ranges", "bytes")
	out.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		w.Write(body)
	}
}

// OpenAPIDefinitions are a resource's schema as OpenAPI v3 definitions,
// in the form kube-apiserver publishes them in components.schemas: a
// node naming another definition is {"$ref":
// "#/components/schemas/NAME"}, or {"allOf": [{"$ref": ...}],
// "description": ..., "default": ...} when the node has a description or
// default of its own; enums are published (kube's +enum types) and not
// validated by kapi (Resource.Schema validates).
//
// Worked example: Pods' Name is "io.k8s.api.core.v1.Pod", whose property
// spec is {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}],
// "default": {}, "description": "Specification of ..."}. The document of
// core v1 then holds Pod, PodSpec and every definition they reach, and
// kubectl explain pod.spec prints "spec <PodSpec>" and the enums of
// pod.spec.containers.imagePullPolicy.
type OpenAPIDefinitions struct {
	// Name is the resource's own definition.
	Name string
	// Schemas returns the definitions by name, Name's and those it
	// reaches among them; it may return more. It is called when a
	// document is built, and what it returns is shared: never changed.
	Schemas func() map[string]map[string]any
}

// kubeDefinition is the name kube gives the definition of a k8s.io/api
// kind: "io.k8s.api.rbac.v1.Role" for rbac.authorization.k8s.io/v1 Role,
// "io.k8s.api.core.v1.Namespace" for the core group's.
func kubeDefinition(res *Resource) string {
	pkg, _, _ := strings.Cut(res.Group, ".")
	if pkg == "" {
		pkg = "core"
	}
	return "io.k8s.api." + pkg + "." + res.Version + "." + res.Kind
}

// openAPI is what the OpenAPI documents say of res.
func (res *Resource) openAPI() openapi.Resource {
	out := openapi.Resource{
		Group: res.Group, Version: res.Version, Kind: res.Kind, Plural: res.Plural,
		Namespaced: res.Namespaced, Status: res.Status, Scale: res.Scale != nil, Protobuf: res.Protobuf != nil,
		Schema: res.Schema,
	}
	if res.OpenAPI != nil {
		out.Definition, out.Definitions = res.OpenAPI.Name, res.OpenAPI.Schemas
	}
	return out
}

// OpenAPI v2 (URI-8): /openapi/v2 is one Swagger 2.0 document describing
// every served resource, as kube-apiserver serves it (kube-openapi's
// handler): JSON by default, and gnostic's protobuf form of the same
// document for client-go's discovery (OpenAPISchema), which kubectl reads
// for `explain --output=plaintext-openapiv2`, client-side validation and
// client-side apply's patch types and merge keys.
//
// Both forms are computed once per table of resources (restable.go), on
// the first request after a change, and share one ETag (the SHA-512 of the JSON, in
// uppercase hex, as kube): a client that sends it back in If-None-Match
// gets 304 Not Modified. Responses say Vary: Accept, since one URL has two
// forms.
//
// Worked example: client-go asks for
//
//	GET /openapi/v2
//	Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf
//
// and gets 200 with Content-Type
// application/com.github.proto-openapi.spec.v2.v1.0+protobuf (kube answers
// the deprecated "@" name with the new one), ETag "9F86D0…", and the
// document as an openapi_v2.Document message. kubectl's disk cache asks
// again with If-None-Match: "9F86D0…" and gets 304 until the table changes.

// openAPIV2GzipThreshold is the body size from which /openapi/v2 is
// compressed for clients that accept gzip: kube-openapi's handler wraps
// itself in gziphandler, whose default minimum is 1400 bytes.
const openAPIV2GzipThreshold = 1400

// openAPIV2 returns the /openapi/v2 documents of the current table,
// built once per table on first use.
func (r *Registry) openAPIV2() (*openapi.V2, error) {
	t := r.tab.Load()
	t.v2Once.Do(func() {
		resources := make([]openapi.Resource, 0, len(t.resources))
		for _, res := range t.resources {
			resources = append(resources, res.openAPI())
		}
		t.v2, t.v2Err = openapi.NewV2(r.opts.Version.GitVersion, resources, r.opts.Now())
	})
	return t.v2, t.v2Err
}

// serveOpenAPIV2 serves /openapi/v2.
func (r *Registry) serveOpenAPIV2(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		writeStatus(w, req, errMethodNotAllowed(req.Method))
		return
	}
	ct, ok := openapi.PickV2(req.Header.Values("Accept"))
	if !ok {
		writeStatus(w, req, errOffersNotAcceptable(openapi.MediaJSON+", "+openapi.MediaProto))
		return
	}
	docs, err := r.openAPIV2()
	if err != nil {
		r.log.Error("building the OpenAPI v2 document", "err", err)
		writeStatus(w, req, errInternal(err))
		return
	}
	body := docs.JSON
	if ct == openapi.MediaProto {
		body = docs.Proto
	}
	h := w.Header()
	h.Add("Vary", "Accept")
	h.Set("Content-Type", ct)
	h.Set("Etag", docs.ETag)
	h.Set("Last-Modified", docs.Modified.Format(http.TimeFormat))
	if etagMatches(req.Header.Values("If-None-Match"), docs.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if len(body) >= openAPIV2GzipThreshold && negotiate.AcceptsGzip(req) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		w.WriteHeader(http.StatusOK)
		if req.Method == http.MethodHead {
			return
		}
		gw := gzipWriters.Get().(*gzip.Writer)
		gw.Reset(w)
		gw.Write(body)
		gw.Close()
		gw.Reset(nil)
		gzipWriters.Put(gw)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		w.Write(body)
	}
}

// etagMatches reports whether an If-None-Match header names etag (or is
// "*"), with the weak comparison HTTP prescribes for it.
func etagMatches(ifNoneMatch []string, etag string) bool {
	for _, h := range ifNoneMatch {
		for t := range strings.SplitSeq(h, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == etag {
				return true
			}
		}
	}
	return false
}
