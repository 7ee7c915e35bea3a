package registry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

// Column is one column of a resource's Table rendering (kubectl get),
// declared like a CRD's additionalPrinterColumns.
type Column struct {
	Name        string // header, e.g. "Replicas"
	Type        string // integer, number, string, boolean or date
	Format      string // OpenAPI format hint, e.g. "int32" or "name"
	Description string
	// Priority 0 columns are shown by kubectl get; higher ones with -o wide.
	Priority int32
	// JSONPath selects the value, e.g. ".spec.replicas" or
	// `.status.conditions[?(@.type=="Ready")].status`.
	JSONPath string
	// Value, when set, computes the cell instead of JSONPath (kube's
	// built-in printers do this, e.g. a configmap's DATA count). It must
	// not modify obj.
	Value func(obj Object) any

	path jsonPath
}

// Descriptions kube gives the columns every table has.
const (
	nameDescription    = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	createdDescription = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)

// compileColumns checks the resource's columns and parses their paths.
func (r *Resource) compileColumns() error {
	for i := range r.Columns {
		c := &r.Columns[i]
		switch c.Type {
		case "integer", "number", "string", "boolean", "date":
		default:
			return fmt.Errorf("registry: resource %q: column %q: type %q is not one of integer, number, string, boolean, date", r.Plural, c.Name, c.Type)
		}
		if c.Value != nil && c.JSONPath == "" {
			continue
		}
		p, err := parseJSONPath(c.JSONPath)
		if err != nil {
			return fmt.Errorf("registry: resource %q: column %q: %v", r.Plural, c.Name, err)
		}
		c.path = p
		if c.Description == "" {
			c.Description = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
	}
	return nil
}

// The meta.k8s.io Table, in kube's JSON field order.
type table struct {
	Kind              string         `json:"kind"`
	APIVersion        string         `json:"apiVersion"`
	Metadata          map[string]any `json:"metadata"`
	ColumnDefinitions []columnDef    `json:"columnDefinitions"`
	Rows              []tableRow     `json:"rows"`
}

type columnDef struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int32  `json:"priority"`
}

type tableRow struct {
	Cells  []any           `json:"cells"`
	Object json.RawMessage `json:"object,omitempty"`
}

// tableOptions reads includeObject (None, Metadata — the default — or
// Object).
func tableOptions(req *http.Request) (string, error) {
	switch v := req.URL.Query().Get("includeObject"); v {
	case "":
		return "Metadata", nil
	case "None", "Metadata", "Object":
		return v, nil
	default:
		return "", errBadRequest(`Unable to convert to Table as requested: includeObject: Unsupported value: %q: supported values: "None", "Metadata", "Object"`, v)
	}
}

// buildTable renders objects as a Table. headers is false for the events
// of a watch after its first, as in kube.
func (r *Registry) buildTable(res *Resource, t target, include string, objs []storage.Object, meta map[string]any, headers bool) (*table, error) {
	tb := &table{Kind: "Table", APIVersion: t.metaAPIVersion(), Metadata: meta, Rows: make([]tableRow, 0, len(objs))}
	if headers {
		tb.ColumnDefinitions = res.columnDefs()
	}
	now := r.opts.Now()
	for _, o := range objs {
		obj, err := decoded(o, o.Revision)
		if err != nil {
			return nil, err
		}
		row := tableRow{Cells: res.cells(obj, now)}
		switch include {
		case "Object":
			row.Object, err = r.item(res, o, o.Revision, target{format: jsonFormat})
		case "Metadata":
			row.Object, err = r.item(res, o, o.Revision, target{format: jsonFormat, view: partialView, metaVersion: t.metaVersion})
		}
		if err != nil {
			return nil, err
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb, nil
}

func (r *Resource) columnDefs() []columnDef {
	defs := []columnDef{{Name: "Name", Type: "string", Format: "name", Description: nameDescription}}
	if len(r.Columns) == 0 {
		return append(defs, columnDef{Name: "Created At", Type: "date", Description: createdDescription})
	}
	for _, c := range r.Columns {
		defs = append(defs, columnDef{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority})
	}
	return defs
}

// cells computes one row: the name, then each column's value converted as
// kube's CRD table convertor does (dates become ages such as "5m"; a
// missing or mistyped value is null).
func (r *Resource) cells(obj Object, now time.Time) []any {
	cells := make([]any, 1, 1+max(len(r.Columns), 1))
	cells[0] = obj.Name()
	if len(r.Columns) == 0 {
		var created any
		if ts, err := time.Parse(time.RFC3339, obj.metaString("creationTimestamp")); err == nil {
			created = ts.UTC().Format(time.RFC3339)
		} else {
			created = "0001-01-01T00:00:00Z"
		}
		return append(cells, created)
	}
	for _, c := range r.Columns {
		if c.Value != nil {
			cells = append(cells, c.Value(obj))
			continue
		}
		v, ok := c.path.find(map[string]any(obj))
		if !ok {
			cells = append(cells, nil)
			continue
		}
		cells = append(cells, cellValue(c.Type, v, now))
	}
	return cells
}

func cellValue(typ string, v any, now time.Time) any {
	n, isNum := v.(json.Number)
	switch typ {
	case "integer":
		if isNum {
			if i, err := n.Int64(); err == nil {
				return i
			}
			if f, err := n.Float64(); err == nil {
				return int64(f)
			}
		}
		if i, ok := v.(int64); ok {
			return i
		}
	case "number":
		if isNum {
			if f, err := n.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "string":
		switch v.(type) {
		case nil:
			return nil
		case map[string]any, []any:
			b, _ := json.Marshal(v)
			return string(b)
		}
		return scalarString(v)
	case "date":
		if s, ok := v.(string); ok {
			ts, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return "<invalid>"
			}
			return humanDuration(now.Sub(ts))
		}
	}
	return nil
}

// writeTable answers with objs as a Table; list says whether the request
// was for a collection (whose list metadata the table carries).
func (r *Registry) writeTable(w http.ResponseWriter, req *http.Request, code int, res *Resource, t target, objs []storage.Object, l storage.ListResult, list bool) {
	include, err := tableOptions(req)
	if err != nil {
		r.writeError(w, req, err)
		return
	}
	meta := map[string]any{}
	if l.Revision != 0 {
		meta["resourceVersion"] = rv.Format(l.Revision)
	}
	if list {
		meta = listMetaMap(l)
	}
	tb, err := r.buildTable(res, t, include, objs, meta, true)
	if err != nil {
		r.writeError(w, req, err)
		return
	}
	b, err := encodeValue(t.format, tableTypeMeta(t), nil, tb)
	if err != nil {
		r.writeError(w, req, errInternal(err))
		return
	}
	writeBody(w, req, code, t.format, b)
}

// humanDuration is how kube shows an age: "45s", "3m20s", "5h", "12d".
func humanDuration(d time.Duration) string {
	seconds := int(d.Seconds())
	switch {
	case seconds < -1:
		return "<invalid>"
	case seconds < 0:
		return "0s"
	case seconds < 60*2:
		return fmt.Sprintf("%ds", seconds)
	}
	minutes := int(d / time.Minute)
	if minutes < 10 {
		if s := int(d/time.Second) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", minutes, s)
		}
		return fmt.Sprintf("%dm", minutes)
	} else if minutes < 60*3 {
		return fmt.Sprintf("%dm", minutes)
	}
	hours := int(d / time.Hour)
	switch {
	case hours < 8:
		if m := int(d/time.Minute) % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", hours, m)
		}
		return fmt.Sprintf("%dh", hours)
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 24*8:
		if h := hours % 24; h != 0 {
			return fmt.Sprintf("%dd%dh", hours/24, h)
		}
		return fmt.Sprintf("%dd", hours/24)
	case hours < 24*365*2:
		return fmt.Sprintf("%dd", hours/24)
	case hours < 24*365*8:
		if dy := (hours / 24) % 365; dy != 0 {
			return fmt.Sprintf("%dy%dd", hours/24/365, dy)
		}
		return fmt.Sprintf("%dy", hours/24/365)
	}
	return fmt.Sprintf("%dy", hours/24/365)
}
