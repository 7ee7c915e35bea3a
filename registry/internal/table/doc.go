// Package table holds the parts of server-side Table rendering (kubectl
// get's meta.k8s.io Table) that do not depend on the registry: the Table
// shape in kube's JSON field order, the JSONPath subset of CRD
// additionalPrinterColumns (Path), the conversion of a found value to its
// column's type (Cell) and kube's way of showing an age (Age). The
// registry renders each resource's rows with them.
package table
