// Command etcd is etcd's own server entry point (go.etcd.io/etcd/server/v3/etcdmain),
// built at exactly the version k8s.io/kubernetes pins, so the API server is always
// run against the etcd release it was tested with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
