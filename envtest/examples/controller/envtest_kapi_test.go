//go:build !crenvtest

package controller_test

import "github.com/kapi-dev/kapi/envtest"

// The names the suite takes from envtest; envtest_cr_test.go is this
// file with the other import.
type (
	Environment       = envtest.Environment
	User              = envtest.User
	CRDInstallOptions = envtest.CRDInstallOptions
	AuthenticatedUser = envtest.AuthenticatedUser
	ControlPlane      = envtest.ControlPlane
	APIServer         = envtest.APIServer
	Etcd              = envtest.Etcd
	SecureServing     = envtest.SecureServing
	Arguments         = envtest.Arguments
	ListenAddr        = envtest.ListenAddr
)
