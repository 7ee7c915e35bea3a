package main

import (
	"context"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/metrics"
)

func main() {
	server.Main(func(count func(context.Context) (map[string]int64, error)) server.Metrics {
		return metrics.New(metrics.Options{Objects: count})
	})
}
