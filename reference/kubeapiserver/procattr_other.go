//go:build !linux

package kubeapiserver

import "syscall"

// procAttr: elsewhere than Linux a kube-apiserver whose parent dies
// without calling Stop keeps running until killed.
func procAttr() *syscall.SysProcAttr { return nil }
