package registry

import "github.com/kapi-dev/kapi/schema"

// DefaultsOnly exports defaultsOnly to the external tests.
var DefaultsOnly = defaultsOnly

// SchemasOf are the schemas of r's resources, by resource.
func SchemasOf(r *Registry) map[string]*schema.Schema {
	out := map[string]*schema.Schema{}
	for _, res := range r.all() {
		out[res.qualified()+"/"+res.Version] = res.Schema
	}
	return out
}
