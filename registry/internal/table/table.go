package table

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kapi-dev/kapi/internal/jsonval"
)

// Table is the meta.k8s.io Table, in kube's JSON field order.
type Table struct {
	Kind              string             `json:"kind"`
	APIVersion        string             `json:"apiVersion"`
	Metadata          map[string]any     `json:"metadata"`
	ColumnDefinitions []ColumnDefinition `json:"columnDefinitions"`
	Rows              []Row              `json:"rows"`
}

// ColumnDefinition is one of a Table's columnDefinitions.
type ColumnDefinition struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int32  `json:"priority"`
}

// Row is one of a Table's rows: its cells, and the object as the client
// asked (includeObject); null with includeObject=None, as kube writes its
// empty RawExtension.
type Row struct {
	Cells  []any           `json:"cells"`
	Object json.RawMessage `json:"object"`
}

// The columns kube gives every table: Name first, and Created At when the
// resource declares no columns of its own.
var (
	Name    = ColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"}
	Created = ColumnDefinition{Name: "Created At", Type: "date", Description: "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}
)

// Cell converts v, the value a column's path found, to the column's type
// (integer, number, string, boolean or date) as kube's CRD table convertor
// does: a date becomes an age such as "5m" from now; a mistyped value is
// nil.
func Cell(typ string, v any, now time.Time) any {
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
		return jsonval.Scalar(v)
	case "date":
		if s, ok := v.(string); ok {
			ts, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return "<invalid>"
			}
			return Age(now.Sub(ts))
		}
	}
	return nil
}

// Age is how kube shows an age: "45s", "3m20s", "5h", "12d".
func Age(d time.Duration) string {
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
