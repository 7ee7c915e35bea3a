package registry

import (
	"fmt"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/registry/internal/table"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

// Column is one column of a resource's Table rendering (kubectl get),
// declared like a CRD's additionalPrinterColumns.
type Column struct {
	Name string // header, e.g. "Replicas"
	Type string // integer, number, string, boolean or date
	// DeclaredType, when set, is the type columnDefinitions declare
	// instead of Type, which still converts the cells: kube's built-in
	// printers declare their Age columns "string" though they show ages,
	// as a "date" column does.
	DeclaredType string
	// Format is the OpenAPI format hint, e.g. "int32" or "name". A
	// column of format "name" holds the object's name: the table then
	// has no NAME column of its own before Columns (kube's events put
	// NAME last, in -o wide).
	Format      string
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

	path table.Path
}

// compileColumns checks the resource's columns and parses their paths.
func (r *Resource) compileColumns() error {
	for i := range r.Columns {
		c := &r.Columns[i]
		switch c.Type {
		case "integer", "number", "string", "boolean", "date":
		default:
			return fmt.Errorf("registry: resource %q: column %q: type %q is not one of integer, number, string, boolean, date", r.Plural, c.Name, c.Type)
		}
		switch c.DeclaredType {
		case "", "integer", "number", "string", "boolean", "date":
		default:
			return fmt.Errorf("registry: resource %q: column %q: declared type %q is not one of integer, number, string, boolean, date", r.Plural, c.Name, c.DeclaredType)
		}
		if c.Value != nil && c.JSONPath == "" {
			continue
		}
		p, err := table.ParsePath(c.JSONPath)
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

// tableOptions reads includeObject (None, Metadata — the default — or
// Object).
func tableOptions(req *http.Request) (string, error) {
	switch v := req.URL.Query().Get("includeObject"); v {
	case "":
		return "Metadata", nil
	case "None", "Metadata", "Object":
		return v, nil
	default:
		return "", errBadRequest(`Unable to convert to Table as requested: includeObject: Invalid value: %q: must be 'Metadata', 'Object', 'None', or empty`, v)
	}
}

// buildTable renders objects as a Table. headers is false for the events
// of a watch after its first, as in kube.
func (r *Registry) buildTable(res *Resource, t negotiate.Target, include string, objs []storage.Object, meta map[string]any, headers bool) (*table.Table, error) {
	tb := &table.Table{Kind: "Table", APIVersion: t.MetaAPIVersion(), Metadata: meta, Rows: make([]table.Row, 0, len(objs))}
	if headers {
		tb.ColumnDefinitions = res.columnDefs()
	}
	now := r.opts.Now()
	for _, o := range objs {
		obj, err := decoded(o, o.Revision)
		if err != nil {
			return nil, err
		}
		row := table.Row{Cells: res.cells(obj, now)}
		switch include {
		case "Object":
			row.Object, err = r.item(res, o, o.Revision, negotiate.Target{Format: negotiate.JSON})
		case "Metadata":
			row.Object, err = r.item(res, o, o.Revision, negotiate.Target{Format: negotiate.JSON, View: negotiate.Partial, MetaVersion: t.MetaVersion})
		}
		if err != nil {
			return nil, err
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb, nil
}

// namesItself reports whether a column of the resource holds the name.
func (r *Resource) namesItself() bool {
	for _, c := range r.Columns {
		if c.Format == "name" {
			return true
		}
	}
	return false
}

func (r *Resource) columnDefs() []table.ColumnDefinition {
	defs := []table.ColumnDefinition{table.Name}
	if len(r.Columns) == 0 {
		return append(defs, table.Created)
	}
	if r.namesItself() {
		defs = defs[:0]
	}
	for _, c := range r.Columns {
		typ := c.Type
		if c.DeclaredType != "" {
			typ = c.DeclaredType
		}
		defs = append(defs, table.ColumnDefinition{Name: c.Name, Type: typ, Format: c.Format, Description: c.Description, Priority: c.Priority})
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
	if r.namesItself() {
		cells = cells[:0]
	}
	for _, c := range r.Columns {
		if c.Value != nil {
			cells = append(cells, c.Value(obj))
			continue
		}
		v, ok := c.path.Find(map[string]any(obj))
		if !ok {
			cells = append(cells, nil)
			continue
		}
		cells = append(cells, table.Cell(c.Type, v, now))
	}
	return cells
}

// writeTable answers with objs as a Table; list says whether the request
// was for a collection (whose list metadata the table carries).
func (r *Registry) writeTable(w http.ResponseWriter, req *http.Request, code int, res *Resource, t negotiate.Target, objs []storage.Object, l storage.ListResult, list bool) {
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
	b, err := encodeValue(t.Format, tableTypeMeta(t), nil, tb)
	if err != nil {
		r.writeError(w, req, errInternal(err))
		return
	}
	writeBody(w, req, code, t.Format, b)
}
