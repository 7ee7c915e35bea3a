package compare

import (
	"context"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/reference/inprocess"
)

// KubeHTTP is k8s.io/apiextensions-apiserver (the CRD server
// kube-apiserver embeds) started in-process on the shared embedded etcd,
// serving the same widgets CRD as KapiHTTP, as the conformance module's
// reference server is (both start it with reference/inprocess).
func KubeHTTP() PeerInfo {
	return PeerInfo{
		Name:      "kube HTTP",
		What:      "k8s.io/apiextensions-apiserver in-process (its test server: HTTPS, HTTP/2, loopback token, priority-and-fairness and webhook admission off) on the embedded etcd, watch cache on; same CRD, same client as kapi HTTP",
		NeedsEtcd: true,
		Start: func(ctx context.Context, e *Etcd) (Peer, error) {
			cfg, stop, err := startKube(e)
			if err != nil {
				return nil, err
			}
			if err := installCRD(ctx, cfg, widgetsCRD); err != nil {
				stop()
				return nil, err
			}
			count := &wireCount{}
			count.instrument(cfg)
			p, err := newHTTPPeer(cfg, count, stop)
			if err != nil {
				stop()
				return nil, err
			}
			return p, nil
		},
	}
}

// startKube starts apiextensions-apiserver on e under a prefix of its own
// (the reference module's inprocess package) and returns the loopback
// client config (a copy the caller may change) and the tear-down.
func startKube(e *Etcd) (*rest.Config, func(), error) {
	s, err := inprocess.StartAPIExtensions(inprocess.APIExtensionsOptions{EtcdServers: []string{e.Endpoint}})
	if err != nil {
		return nil, nil, err
	}
	return rest.CopyConfig(s.Config), s.Stop, nil
}

// installCRD creates the CRD of crdYAML and waits until it is Established,
// in discovery, and its resources answer a list.
func installCRD(ctx context.Context, cfg *rest.Config, crdYAML string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err := inprocess.InstallCRD(ctx, cfg, crdYAML)
	return err
}
