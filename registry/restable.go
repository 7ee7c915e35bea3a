package registry

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/registry/internal/discovery"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/registry/internal/openapi"
)

// The table of served resources, which changes while serving (CRDs
// created, updated and deleted through the API, or a Go user's Register,
// Replace and Unregister).
//
// Invariants:
//   - A *resTable is immutable once published: readers (every request's
//     router, discovery, OpenAPI, the garbage collector) Load the
//     Registry's atomic pointer once and use that table throughout,
//     without a lock. Writers serialise on Registry.tableMu, copy the
//     maps (copy-on-write), and Store the new table.
//   - A *groupVer is immutable too, and a new table shares the groupVers
//     of the group versions a change did not touch: their documents
//     (discovery, APIResourceList, OpenAPI v3), built lazily once per
//     groupVer, survive the change. The table's own documents (the
//     aggregated discovery lists, /apis, the OpenAPI v3 index and the
//     whole-server OpenAPI v2) are built lazily once per table, from the
//     group versions' cached parts (the index from each groupVer's
//     entry, made with it), and compressed at most once.
//   - Documents are named without being hashed (docHash): a table's by
//     its number (their ETags), a groupVer's OpenAPI v3 document by the
//     groupVer's number (its index hash and ETag). Both change whenever
//     the document may have, and only then for a groupVer: a client that
//     cached one group version's document keeps it across changes of
//     others.
//   - A Resource is registered once: it is retired (its retired channel
//     closed) when a change removes or replaces it, which ends its open
//     watches, as apiextensions-apiserver's storage teardown ends them.
//
// Worked example: 1,000 CRDs served in 1,000 group versions; a CRD is
// updated (its schema tightened). The change copies the two maps (1,000
// entries), swaps one *groupVer for a new one and retires one Resource.
// The next GET /openapi/v3/apis/G/V of the changed group version builds
// that one document; the 999 others are served from their groupVers'
// caches; the next GET /apis (aggregated) concatenates 1,000 cached
// fragments, one of them rebuilt, and the next GET /openapi/v3
// concatenates 1,000 index entries, the changed one with a new hash.
type resTable struct {
	seq       uint64                          // numbers the tables made: the version of its documents
	resources map[string]*Resource            // by group/version/plural
	groups    map[string]map[string]*groupVer // group → version → resources

	aggOnce          sync.Once
	aggCore, aggAPIs *doc // apidiscovery.k8s.io/v2 of /api and /apis
	docsOnce         sync.Once
	docs             tableDocs
	indexOnce        sync.Once
	index            *doc // the /openapi/v3 index
	v2Once           sync.Once
	v2               *openapi.V2
	v2Err            error
}

// tableDocs are a table's legacy discovery documents, built together on
// first use.
type tableDocs struct {
	apiGroupList *doc // the APIGroupList of /apis
	groupDocs    map[string][]byte
}

// doc is a JSON document served as it is, with its gzip form made once
// (the first time a client that accepts gzip asks for it) when it is
// large enough to be compressed, and the ETag of this version of it; a
// discovery document's forms in YAML, protobuf and CBOR are docs of their
// own, made the first time a client asks for them (in).
type doc struct {
	raw      []byte
	etag     string    // quoted; "" for none
	modified time.Time // when it was built
	gzOnce   sync.Once
	gz       []byte
	forms    [negotiate.NumFormats]docForm // its other formats (in)
}

// docForm is a doc's form in another format, made on first use.
type docForm struct {
	once sync.Once
	d    *doc
	err  error
}

// in is d in format f (d itself for JSON), encoded once (discoveryIn),
// with d's ETag.
func (d *doc) in(f negotiate.Format) (*doc, error) {
	if f == negotiate.JSON {
		return d, nil
	}
	form := &d.forms[f]
	form.once.Do(func() {
		b, err := discoveryIn(f, d.raw)
		form.d, form.err = &doc{raw: b, etag: d.etag, modified: d.modified}, err
	})
	return form.d, form.err
}

// serveIn writes d in format f as writeBody would, from the cached forms.
func (d *doc) serveIn(w http.ResponseWriter, req *http.Request, f negotiate.Format) {
	d, err := d.in(f)
	if err != nil {
		writeStatus(w, req, errInternal(err))
		return
	}
	if len(d.raw) <= gzipThreshold || (f == negotiate.JSON && negotiate.Pretty(req)) || !negotiate.AcceptsGzip(req) {
		writeBody(w, req, http.StatusOK, f, d.raw)
		return
	}
	w.Header().Set("Content-Type", negotiate.Types[f])
	d.serveGzip(w)
}

// serveGzip writes d's gzip form with the headers already set.
func (d *doc) serveGzip(w http.ResponseWriter) {
	d.gzOnce.Do(func() {
		var b bytes.Buffer
		gw := gzipWriters.Get().(*gzip.Writer)
		gw.Reset(&b)
		gw.Write(d.raw)
		gw.Close()
		gw.Reset(nil)
		gzipWriters.Put(gw)
		d.gz = b.Bytes()
	})
	h := w.Header()
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
	h.Set("Content-Length", strconv.Itoa(len(d.gz)))
	w.WriteHeader(http.StatusOK)
	w.Write(d.gz)
}

// docNonce makes this process's document hashes its own: two processes
// that number their tables alike still name their documents apart, so a
// client's cache never takes one server's document for another's.
var docNonce = func() []byte {
	b := make([]byte, 16)
	rand.Read(b)
	return b
}()

// docHash names one version of a document as kube names its documents
// (hex SHA-512, uppercase): a hash of what identifies that version (a
// table's or a groupVer's number), not of the document's bytes, so it
// costs nothing to compute and changes whenever the document may have.
func docHash(parts ...string) string {
	h := sha512.New()
	h.Write(docNonce)
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return strings.ToUpper(hex.EncodeToString(h.Sum(nil)))
}

// groupVer is one served group version and its resources, in plural
// order, with its documents built once on first use.
type groupVer struct {
	group, version string
	resources      []*Resource

	once       sync.Once
	disc       discovery.Version
	list       []byte // APIResourceList
	aggregated []byte // its apidiscovery.k8s.io/v2 version entry

	seq uint64 // numbers this groupVer among every one made: its documents' version
	// path is its OpenAPI v3 path ("apis/G/V"); hash names this version
	// of its OpenAPI v3 document (its ETag and its index URL's hash);
	// indexEntry is its member of the index's "paths": all three made
	// with the groupVer, so the index is a concatenation.
	path, hash string
	indexEntry []byte

	v3Once     sync.Once
	v3         []byte
	v3Modified time.Time // when v3 was built
}

// groupVerSeq numbers the groupVers and tableSeq the tables (restable.go's
// change makes them).
var groupVerSeq, tableSeq atomic.Uint64

// newGroupVer is an empty groupVer of g/v with its names.
func newGroupVer(g, v string) *groupVer {
	gv := &groupVer{group: g, version: v, seq: groupVerSeq.Add(1)}
	gv.path = openapi.GroupVersion{Group: g, Version: v}.Path()
	// kube's hash is the document's SHA-512; this one names the version
	// of the document without building it (see docHash).
	gv.hash = docHash("openapi/v3", gv.path, strconv.FormatUint(gv.seq, 10))
	p, _ := json.Marshal(gv.path)
	u, _ := json.Marshal("/openapi/v3/" + gv.path + "?hash=" + gv.hash)
	gv.indexEntry = slices.Concat(p, []byte(`:{"serverRelativeURL":`), u, []byte(`}`))
	return gv
}

func tableID(group, version, plural string) string { return group + "/" + version + "/" + plural }

// resource is the resource served at group/version/plural, or nil.
func (t *resTable) resource(group, version, plural string) *Resource {
	return t.resources[tableID(group, version, plural)]
}

// built returns gv with its discovery documents built.
func (gv *groupVer) built() *groupVer {
	gv.once.Do(func() {
		gv.disc = discovery.Version{Version: gv.version}
		for _, res := range gv.resources {
			gv.disc.Resources = append(gv.disc.Resources, res.discoveryEntry())
		}
		gv.list = mustJSON(discovery.ResourceList(gv.group, gv.disc))
		gv.aggregated = discovery.AggregatedVersion(gv.disc)
	})
	return gv
}

// openAPIV3 returns gv's OpenAPI v3 document, built once (at now).
func (gv *groupVer) openAPIV3(gitVersion string, now time.Time) []byte {
	gv.v3Once.Do(func() {
		d := openapi.GroupVersion{Group: gv.group, Version: gv.version}
		for _, res := range gv.resources {
			d.Resources = append(d.Resources, res.openAPI())
		}
		gv.v3, gv.v3Modified = mustJSON(openapi.V3(gitVersion, d)), now
	})
	return gv.v3
}

// versions are group's versions, the preferred first (kube's version
// priority: GA before beta before alpha, higher numbers first).
func (t *resTable) versions(group string) []*groupVer {
	vs := t.groups[group]
	if len(vs) == 1 {
		for _, gv := range vs {
			return []*groupVer{gv}
		}
	}
	out := slices.Collect(maps.Values(vs))
	slices.SortFunc(out, func(a, b *groupVer) int { return discovery.CompareVersions(a.version, b.version) })
	return out
}

// groupNames are the named groups, in discovery's order (kube's group
// priority, then name).
func (t *resTable) groupNames() []string {
	out := make([]string, 0, len(t.groups))
	for g := range t.groups {
		if g != "" {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, discovery.CompareGroups)
	return out
}

// group describes a group for discovery.
func (t *resTable) group(name string) discovery.Group {
	g := discovery.Group{Name: name}
	for _, gv := range t.versions(name) {
		g.Versions = append(g.Versions, gv.built().disc)
	}
	return g
}

// aggregated returns the table's apidiscovery.k8s.io/v2 documents of /api
// and /apis, building them once: a concatenation of the group versions'
// cached entries.
func (t *resTable) aggregated() (core, apis *doc) {
	t.aggOnce.Do(func() {
		build := func(which string, names []string) *doc {
			groups := make([]discovery.AggregatedGroup, 0, len(names))
			for _, g := range names {
				ag := discovery.AggregatedGroup{Name: g}
				for _, gv := range t.versions(g) {
					ag.Versions = append(ag.Versions, gv.built().aggregated)
				}
				groups = append(groups, ag)
			}
			return &doc{raw: discovery.AssembleAggregated(groups), etag: strconv.Quote(docHash(which, strconv.FormatUint(t.seq, 10)))}
		}
		t.aggCore, t.aggAPIs = build("/api", []string{""}), build("/apis", t.groupNames())
	})
	return t.aggCore, t.aggAPIs
}

// documents returns the table's legacy discovery documents, building
// them once.
func (t *resTable) documents() *tableDocs {
	t.docsOnce.Do(func() {
		d := &t.docs
		names := t.groupNames()
		groups := make([]discovery.APIGroup, 0, len(names))
		d.groupDocs = make(map[string][]byte, len(names))
		for _, g := range names {
			ag := discovery.NewAPIGroup(t.group(g))
			groups = append(groups, ag)
			ag.Kind, ag.APIVersion = "APIGroup", "v1"
			d.groupDocs[g] = mustJSON(ag)
		}
		d.apiGroupList = &doc{raw: mustJSON(map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})}
	})
	return &t.docs
}

// openAPIIndex returns the table's /openapi/v3 index, building it once
// (at now) from the group versions' entries.
func (t *resTable) openAPIIndex(now time.Time) *doc {
	t.indexOnce.Do(func() {
		var gvs []*groupVer
		size := 0
		for _, vs := range t.groups {
			for _, gv := range vs {
				gvs = append(gvs, gv)
				size += len(gv.indexEntry) + 1
			}
		}
		slices.SortFunc(gvs, func(a, b *groupVer) int { return strings.Compare(a.path, b.path) })
		b := make([]byte, 0, size+len(`{"paths":{}}`))
		b = append(b, `{"paths":{`...)
		for i, gv := range gvs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, gv.indexEntry...)
		}
		b = append(b, `}}`...)
		t.index = &doc{raw: b, etag: strconv.Quote(docHash("/openapi/v3", strconv.FormatUint(t.seq, 10))), modified: now}
	})
	return t.index
}

// tableChange is one change of the table: the resources to remove (by
// tableID) and those to add, applied together.
type tableChange struct {
	remove []string
	add    []*Resource
}

// change applies c to the current table and publishes the result; it
// fails, changing nothing, when a resource to add is taken (and not
// removed by c) or one to remove is not served.
func (r *Registry) change(c tableChange) error {
	r.tableMu.Lock()
	defer r.tableMu.Unlock()
	old := r.tab.Load()
	next := &resTable{seq: tableSeq.Add(1), resources: maps.Clone(old.resources), groups: maps.Clone(old.groups)}
	touched := map[[2]string]bool{}
	var retired []*Resource
	for _, id := range c.remove {
		res, ok := next.resources[id]
		if !ok {
			return fmt.Errorf("registry: resource %s is not registered", id)
		}
		delete(next.resources, id)
		retired = append(retired, res)
		touched[[2]string{res.Group, res.Version}] = true
	}
	for _, res := range c.add {
		id := tableID(res.Group, res.Version, res.Plural)
		if _, ok := next.resources[id]; ok {
			return fmt.Errorf("registry: resource %s registered twice", id)
		}
		next.resources[id] = res
		touched[[2]string{res.Group, res.Version}] = true
	}
	for gvKey := range touched {
		g, v := gvKey[0], gvKey[1]
		vs := maps.Clone(next.groups[g])
		if vs == nil {
			vs = map[string]*groupVer{}
		}
		gv := newGroupVer(g, v)
		// The group version's resources: the old ones still served, and
		// those added (not a walk of every resource of the table).
		if prev := vs[v]; prev != nil {
			for _, res := range prev.resources {
				if next.resources[tableID(res.Group, res.Version, res.Plural)] == res {
					gv.resources = append(gv.resources, res)
				}
			}
		}
		for _, res := range c.add {
			if res.Group == g && res.Version == v {
				gv.resources = append(gv.resources, res)
			}
		}
		slices.SortFunc(gv.resources, func(a, b *Resource) int { return strings.Compare(a.Plural, b.Plural) })
		if len(gv.resources) == 0 {
			delete(vs, v)
		} else {
			vs[v] = gv
		}
		if len(vs) == 0 {
			delete(next.groups, g)
		} else {
			next.groups[g] = vs
		}
	}
	for _, res := range c.add {
		res.retired = make(chan struct{})
	}
	r.tab.Store(next)
	for _, res := range retired {
		close(res.retired)
	}
	return nil
}
