// Package helmtest checks that Helm's Go SDK, in its default
// configuration (releases stored in Secrets), installs, upgrades, rolls
// back and uninstalls a chart against kapi's example server over HTTP.
// It is a module of its own so that Helm's dependency graph stays out of
// the core and the conformance modules.
package helmtest
