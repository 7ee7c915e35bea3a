package jsonobj

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/kapi-dev/kapi/internal/jsontree"
)

// Duplicates returns the keys a JSON body gives twice, as kube's
// strict decoder reports them (`duplicate field "spec.ports[0].port"`).
// obj is the body decoded; when it holds as many keys as the body has
// members (one ':' outside strings each) there is none, which spares the
// token walk for almost every body.
func Duplicates(body []byte, obj any) []string {
	if Members(body) == Keys(obj) {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var out []string
	seen := map[string]bool{}
	var walk func(path string) error
	walk = func(path string) error {
		t, err := d.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'):
			keys := map[string]bool{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				p := k
				if path != "" {
					p = path + "." + k
				}
				if keys[k] && !seen[p] && len(out) < 100 {
					seen[p] = true
					out = append(out, `duplicate field "`+p+`"`)
				}
				keys[k] = true
				if err := walk(p); err != nil {
					return err
				}
			}
			_, err = d.Token()
			return err
		case json.Delim('['):
			for i := 0; d.More(); i++ {
				if err := walk(path + "[" + strconv.Itoa(i) + "]"); err != nil {
					return err
				}
			}
			_, err = d.Token()
			return err
		}
		return nil
	}
	if walk("") != nil {
		return nil
	}
	return out
}

// Members counts the object members of a JSON text: its ':' outside
// strings.
func Members(b []byte) int {
	n, in, esc := 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && c == ':':
			n++
		}
	}
	return n
}

// Keys counts the keys of every object in a decoded JSON value.
func Keys(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := len(v)
		for _, x := range v {
			n += Keys(x)
		}
		return n
	case []any:
		n := 0
		for _, x := range v {
			n += Keys(x)
		}
		return n
	}
	return 0
}

// PatchDuplicates are the duplicate fields of a JSON or merge patch body,
// which kube reports beside the patched object's unknown fields.
func PatchDuplicates(body []byte) []string {
	// jsontree's Exact numbers refuse what json.Unmarshal's float64s
	// refuse; on any refusal, encoding/json answers.
	_, dups, err := jsontree.Decode(body, jsontree.Options{Numbers: jsontree.Exact, Duplicates: true})
	if err != nil {
		var v any
		if json.Unmarshal(body, &v) != nil {
			return nil // the patch itself reports it
		}
		dups = Duplicates(body, v)
	}
	return dups
}
