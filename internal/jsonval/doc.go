// Package jsonval walks decoded JSON values — map[string]any, []any and
// scalars, as encoding/json decodes them — for the packages that copy or
// convert them: one walk instead of one per package.
package jsonval
