// Package deleteopts reads a DELETE's meta/v1 DeleteOptions as
// kube-apiserver does (endpoints/handlers/delete.go): from a JSON body
// (Parse, which refuses other kinds with kube's meta codec's errors) or
// from the query (FromQuery), then validates them (Validate, apimachinery's
// ValidateDeleteOptions). Turning them into a delete, and the Status
// errors, are the registry's.
package deleteopts
