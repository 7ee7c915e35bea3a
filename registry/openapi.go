package registry

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/registry/internal/openapi"
)

// OpenAPI v3 (URI-8, in part): /openapi/v3 lists one document per group
// version, and each document describes the resources' paths and schemas
// (package openapi builds them). kubectl reads these to learn that the
// server validates fields itself (the fieldValidation parameter of PATCH),
// and `kubectl explain` reads the schemas.

// serveOpenAPI serves /openapi/v3 and /openapi/v3/{api/v1,apis/G/V}.
func (r *Registry) serveOpenAPI(w http.ResponseWriter, req *http.Request, path string) {
	rest := strings.TrimPrefix(strings.TrimPrefix(path, "/openapi/v3"), "/")
	if rest == "" {
		paths := map[string]any{}
		for _, gv := range r.groupVersions() {
			doc := mustJSON(openapi.V3(r.opts.Version.GitVersion, gv))
			sum := sha256.Sum256(doc)
			paths[gv.Path()] = map[string]string{"serverRelativeURL": "/openapi/v3/" + gv.Path() + "?hash=" + strings.ToUpper(hex.EncodeToString(sum[:]))}
		}
		r.writeJSON(w, req, http.StatusOK, map[string]any{"paths": paths})
		return
	}
	for _, gv := range r.groupVersions() {
		if gv.Path() == rest {
			r.writeJSON(w, req, http.StatusOK, openapi.V3(r.opts.Version.GitVersion, gv))
			return
		}
	}
	writeStatus(w, req, errPathNotFound())
}

// groupVersions describes the served group versions, by path.
func (r *Registry) groupVersions() []openapi.GroupVersion {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []openapi.GroupVersion
	for _, vs := range r.groups {
		for _, gv := range vs {
			d := openapi.GroupVersion{Group: gv.group, Version: gv.version}
			for _, res := range gv.resources {
				d.Resources = append(d.Resources, res.openAPI())
			}
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b openapi.GroupVersion) int { return strings.Compare(a.Path(), b.Path()) })
	return out
}

// openAPI is what the OpenAPI documents say of res.
func (res *Resource) openAPI() openapi.Resource {
	return openapi.Resource{
		Group: res.Group, Version: res.Version, Kind: res.Kind, Plural: res.Plural,
		Namespaced: res.Namespaced, Status: res.Status, Scale: res.Scale != nil, Protobuf: res.Protobuf != nil,
		Schema: res.Schema,
	}
}

// OpenAPI v2 (URI-8): /openapi/v2 is one Swagger 2.0 document describing
// every served resource, as kube-apiserver serves it (kube-openapi's
// handler): JSON by default, and gnostic's protobuf form of the same
// document for client-go's discovery (OpenAPISchema), which kubectl reads
// for `explain --output=plaintext-openapiv2`, client-side validation and
// client-side apply's patch types and merge keys.
//
// Both forms are computed once per registry state, on the first request
// after a Register, and share one ETag (the SHA-512 of the JSON, in
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
// again with If-None-Match: "9F86D0…" and gets 304 until a resource is
// registered.

// openAPIV2GzipThreshold is the body size from which /openapi/v2 is
// compressed for clients that accept gzip: kube-openapi's handler wraps
// itself in gziphandler, whose default minimum is 1400 bytes.
const openAPIV2GzipThreshold = 1400

// openAPIV2Cache holds the /openapi/v2 documents of one registry state.
// Resources are only ever added, so the number registered names the state.
type openAPIV2Cache struct {
	mu    sync.Mutex
	state int         // len(Registry.resources) docs describes
	docs  *openapi.V2 // nil until first asked for
}

// openAPIV2 returns the documents of the current registry state, building
// them if a resource was registered since they were last built.
func (r *Registry) openAPIV2() (*openapi.V2, error) {
	r.mu.RLock()
	state := len(r.resources)
	resources := make([]openapi.Resource, 0, state)
	for _, res := range r.resources {
		resources = append(resources, res.openAPI())
	}
	r.mu.RUnlock()

	c := &r.openAPIV2Cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.docs != nil && c.state == state {
		return c.docs, nil
	}
	docs, err := openapi.NewV2(r.opts.Version.GitVersion, resources, r.opts.Now())
	if err != nil {
		return nil, err
	}
	c.docs, c.state = docs, state
	return c.docs, nil
}

// serveOpenAPIV2 serves /openapi/v2.
func (r *Registry) serveOpenAPIV2(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		writeStatus(w, req, errMethodNotAllowed(req.Method))
		return
	}
	ct, ok := openapi.PickV2(req.Header.Values("Accept"))
	if !ok {
		writeStatus(w, req, errNotAcceptable(openapi.MediaJSON+", "+openapi.MediaProto))
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
