package builtin

import "github.com/kapi-dev/kapi/registry"

// columns are the kinds' Table columns, by group/plural.
var columns = map[string][]registry.Column{}
