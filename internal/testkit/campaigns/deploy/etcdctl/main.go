// Command etcdctl is etcd's own command-line client, built from etcd's
// etcdctl module at the version of the harness's etcd: the deployed-fleet
// harness runs deploy/etcd-auth.sh with it.
package main

import "go.etcd.io/etcd/etcdctl/v3/ctlv3"

func main() { ctlv3.MustStart() }
