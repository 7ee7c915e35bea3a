package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// probe reads from each etcd endpoint on a gRPC connection of its own,
// failing fast (the etcd client's calls wait for a connection instead),
// until the endpoint answers or ctx ends. Once ctx ends, the returned
// channel yields the last error of each endpoint that never answered:
// why its connection fails, e.g. "tls: certificate required".
func probe(ctx context.Context, endpoints []string, tc *tls.Config) <-chan []error {
	out := make(chan []error, 1)
	errs := make([]error, len(endpoints))
	var wg sync.WaitGroup
	for i, ep := range endpoints {
		wg.Go(func() { errs[i] = probeOne(ctx, ep, tc) })
	}
	go func() {
		wg.Wait()
		out <- slicesNonNil(errs)
	}()
	return out
}

func slicesNonNil(errs []error) []error {
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// probeOne returns nil once ep answers a read, or the last error when
// ctx ends first.
func probeOne(ctx context.Context, ep string, tc *tls.Config) error {
	target, creds := ep, insecure.NewCredentials()
	var tlsCfg *tls.Config // for https endpoints
	if u, err := url.Parse(ep); err == nil && u.Host != "" {
		target = u.Host
		if u.Scheme == "https" || u.Scheme == "unixs" {
			tlsCfg = &tls.Config{}
			if tc != nil {
				tlsCfg = tc.Clone()
			}
			creds = credentials.NewTLS(tlsCfg.Clone())
		}
	}
	conn, err := grpc.NewClient("passthrough:///"+target, grpc.WithTransportCredentials(creds))
	if err != nil {
		return fmt.Errorf("%s: %w", ep, err)
	}
	defer conn.Close()
	kv := pb.NewKVClient(conn)
	var last error
	for {
		_, err := kv.Range(ctx, &pb.RangeRequest{Key: []byte{0}, CountOnly: true, Serializable: true})
		if err == nil || ctx.Err() != nil {
			if err == nil || last == nil {
				return nil // answered, or no reason known
			}
			return fmt.Errorf("%s: %w", ep, last)
		}
		if st, ok := status.FromError(err); ok {
			err = errors.New(strings.Trim(strings.TrimPrefix(st.Message(), "connection error: desc = "), `"`))
		}
		if !tlsReason(err) && tlsCfg != nil {
			// With TLS 1.3 the server refuses a client certificate after
			// the client's handshake is done, and gRPC's first write may
			// meet a closed connection ("broken pipe") before the alert
			// that says why: read the alert on a connection of our own.
			if why := handshake(ctx, target, tlsCfg); why != nil && tlsReason(why) {
				err = why
			}
		}
		if last == nil || !tlsReason(last) || tlsReason(err) {
			last = err // a TLS reason, once known, is not replaced by a vaguer error
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tlsReason reports whether err says why TLS failed.
func tlsReason(err error) bool {
	s := err.Error()
	return strings.Contains(s, "tls:") || strings.Contains(s, "x509:")
}

// handshake opens a TLS connection to target and reads from it briefly:
// the error of the handshake, or the alert the server sends once it has
// checked the client's certificate; nil if neither comes.
func handshake(ctx context.Context, target string, cfg *tls.Config) error {
	c := cfg.Clone()
	if c.ServerName == "" {
		if host, _, err := net.SplitHostPort(target); err == nil {
			c.ServerName = host
		}
	}
	d := tls.Dialer{Config: c}
	conn, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := conn.Read(make([]byte, 1)); err != nil && tlsReason(err) {
		return err
	}
	return nil
}
