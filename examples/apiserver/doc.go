// Command apiserver serves the example API (namespaces, configmaps, the
// built-in kinds of package builtin — pods, deployments, services, … — and
// widgets.example.com) on an in-memory store. Point kubectl at it:
//
//	go run ./examples/apiserver --kubeconfig /tmp/kapi.kubeconfig
//	kubectl --kubeconfig /tmp/kapi.kubeconfig get widgets -A
package main
