// Command etcd is etcd's own server, built from etcd's server module at
// the version that idkit's client uses: the deployed-fleet harness runs
// three of these as the fleet's cluster.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
