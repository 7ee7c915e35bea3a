package gojson

import "strconv"

// Positions numbers the fields of a JSON document in document order, by
// their paths as strict decoding errors name them ("spec.ports[0].name"),
// so that those errors can be listed in the order kube's strict decoder
// meets them. A field given twice has its second position (where the
// duplicate is met). nil for a body that is not JSON.
func Positions(body []byte) map[string]int {
	v, err := parseOrdered(body)
	if err != nil {
		return nil
	}
	pos := map[string]int{}
	number(v, "", pos)
	return pos
}

func number(v any, path string, pos map[string]int) {
	switch x := v.(type) {
	case object:
		for _, m := range x {
			p := m.key
			if path != "" {
				p = path + "." + m.key
			}
			pos[p] = len(pos)
			number(m.val, p, pos)
		}
	case []any:
		for i, e := range x {
			number(e, path+"["+strconv.Itoa(i)+"]", pos)
		}
	}
}
