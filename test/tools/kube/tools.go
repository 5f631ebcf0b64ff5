//go:build tools

// Package tools records the commands this module builds, so that `go mod tidy`
// keeps their dependencies. The binaries are built by
// test/scripts/obtain-kube-binaries.sh:
//
//	go build k8s.io/kubernetes/cmd/kube-apiserver
//	go build ./etcd
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
