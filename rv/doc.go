// Package rv holds resourceVersion semantics: parsing and formatting
// versions, the read rules (MostRecent, Any, NotOlderThan, Exact), validation
// of list and watch options, and continue tokens.
//
// A resource version is a store revision: an unsigned decimal number that
// clients treat as an opaque string. Revision 0 means "unset" or "any".
//
// The rules follow the Kubernetes API Concepts tables. For a list:
//
//	resourceVersionMatch  limit/continue      rv unset     rv="0"   rv="N"
//	unset                 none                MostRecent   Any      NotOlderThan(N)
//	unset                 limit               MostRecent   Any      Exact(N)
//	unset                 limit+continue      token's rev  token's  400
//	Exact                 any                 invalid      invalid  Exact(N)
//	NotOlderThan          any                 invalid      Any      NotOlderThan(N)
package rv
