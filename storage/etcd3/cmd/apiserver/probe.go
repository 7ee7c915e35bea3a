package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
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
	if u, err := url.Parse(ep); err == nil && u.Host != "" {
		target = u.Host
		if u.Scheme == "https" || u.Scheme == "unixs" {
			cfg := &tls.Config{}
			if tc != nil {
				cfg = tc.Clone()
			}
			creds = credentials.NewTLS(cfg)
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
		last = err
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
