// Package compare runs the same storage scenarios on kapi and on the peers a
// user would otherwise pick (client-go's fake ObjectTracker,
// controller-runtime's fake client, k8s.io/apiserver's etcd3 store and its
// watch cache), each behind the small Peer interface, and over HTTP on
// kapi's example server beside k8s.io/apiextensions-apiserver (both driven
// by client-go's dynamic client, kapi's also through the registry's
// in-process transport), and renders the figures as one Markdown table.
// cmd/compare is its command line; cmd/profile profiles a number of gets
// or lists on one peer.
package compare
