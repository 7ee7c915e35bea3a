package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/kapi-dev/kapi/bench/compare"
)

func main() {
	n := flag.Int("n", 10000, "objects per peer")
	scenarios := flag.String("scenarios", strings.Join(compare.AllScenarios, ","), "comma-separated scenarios to run")
	peersFlag := flag.String("peers", "", "comma-separated peer names to run (default: all)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	out := flag.String("out", "", "Markdown file whose bench-compare section is rewritten with the table")
	flag.Parse()
	klog.LogToStderr(false) // the cacher's and etcd client's chatter
	klog.SetOutput(io.Discard)

	cfg := compare.Config{N: *n, Scenarios: strings.Split(*scenarios, ","), Log: os.Stderr}
	peers := compare.Peers()
	if *peersFlag != "" {
		var keep []compare.PeerInfo
		for _, p := range peers {
			for _, want := range strings.Split(*peersFlag, ",") {
				if strings.EqualFold(strings.TrimSpace(want), p.Name) {
					keep = append(keep, p)
				}
			}
		}
		peers = keep
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	results := compare.Run(context.Background(), cfg, peers)
	table := compare.Table(cfg, results)
	fmt.Println(table)
	fmt.Fprintf(os.Stderr, "run took %s (GOMAXPROCS=%d)\n", time.Since(start).Round(time.Second), runtime.GOMAXPROCS(0))
	if *out != "" {
		if err := compare.WriteSection(*out, compare.Section(cfg, results, shellArgs(os.Args[1:]))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
	}
}

// shellArgs joins args for a shell, quoting those with spaces.
func shellArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if strings.ContainsAny(a, " '\"") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}
