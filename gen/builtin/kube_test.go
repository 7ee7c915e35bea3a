package main

import (
	_ "k8s.io/kubernetes/pkg/apis/core/v1" // keeps k8s.io/kubernetes, whose documents kubeDir reads, in the module graph
)
