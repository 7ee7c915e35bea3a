package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/kapi-dev/kapi/bench/compare"
)

func main() {
	peer := flag.String("peer", "kapi HTTP", "peer name (one without etcd)")
	op := flag.String("op", "get", "get (one object, round robin) or list (every object, one page)")
	n := flag.Int("n", 10000, "objects created before the profile starts")
	ops := flag.Int("ops", 10000, "calls profiled")
	out := flag.String("cpuprofile", "cpu.prof", "profile file")
	flag.Parse()
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	if err := run(*peer, *op, *n, *ops, *out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(peer, op string, n, ops int, out string) error {
	if op != "get" && op != "list" {
		return fmt.Errorf("-op %q: want get or list", op)
	}
	if n <= 0 || ops <= 0 {
		return errors.New("-n and -ops must be positive")
	}
	var info *compare.PeerInfo
	for _, p := range compare.Peers() {
		if strings.EqualFold(p.Name, peer) {
			info = &p
		}
	}
	if info == nil || info.NeedsEtcd {
		return fmt.Errorf("-peer %q: not a peer without etcd", peer)
	}
	ctx := context.Background()
	p, err := info.Start(ctx, nil)
	if err != nil {
		return err
	}
	defer p.Close()
	for i := range n {
		if _, err := p.Create(ctx, compare.Widget(i)); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	start := time.Now()
	for i := range ops {
		if op == "get" {
			ns, name := compare.Name(i % n)
			_, err = p.Get(ctx, ns, name)
		} else {
			_, err = p.List(ctx, compare.ListOptions{})
		}
		if err != nil {
			pprof.StopCPUProfile()
			return err
		}
	}
	d := time.Since(start)
	pprof.StopCPUProfile()
	fmt.Printf("%s: %d %ss in %v, %.1f µs each (wall)\n", info.Name, ops, op, d.Round(time.Millisecond), float64(d.Nanoseconds())/1e3/float64(ops))
	return nil
}
