package main

import (
	"context"
	"os"
	"strconv"
	"time"

	"github.com/idkit/idkit/fleet"
)

var cmdNodes = &command{
	Name:  "nodes",
	Usage: "nodes --etcd ENDPOINTS [--etcd-prefix P] [--json]",
	Short: "list the node numbers claimed in etcd",
	Long: `
Nodes lists the node numbers that traceid and snowflake generators hold in
etcd: the space (traceid, snowflake/PRESET, or an application's own), the
node, its holder (host/pid and process id), the lease time left as etcd
counts it, and the holder's clock when it last recorded it. A holder that
dies frees its node when its lease runs out.

Examples:

	idkit nodes --etcd 10.0.0.5:2379
	idkit nodes --etcd 10.0.0.5:2379,10.0.0.6:2379 --json
`,
	Run: runNodes,
}

func runNodes(c *console, args []string) error {
	fs := newFlags("nodes")
	endpoints := fs.String("etcd", os.Getenv(envEtcdEndpoints), "etcd endpoints, comma-separated (or $"+envEtcdEndpoints+")")
	prefix := fs.String("etcd-prefix", fleet.DefaultPrefix, "prefix of idkit's keys in etcd")
	conn := addEtcdFlags(fs)
	asJSON := fs.Bool("json", false, "print a JSON array")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *endpoints == "" {
		return usagef("nodes needs --etcd ENDPOINTS")
	}
	cli, err := c.dialEtcd(*endpoints, conn)
	if err != nil {
		return err
	}
	nodes, err := fleet.Nodes(context.Background(), cli, *prefix, etcdTimeout)
	if err != nil {
		return err
	}
	if *asJSON {
		if nodes == nil {
			nodes = []fleet.NodeInfo{}
		}
		return writeJSON(c, nodes)
	}
	rows := [][]string{{"SPACE", "NODE", "HOLDER", "PID", "LEASE LEFT", "CLOCK", "CLAIMED"}}
	for _, n := range nodes {
		rows = append(rows, []string{n.Space, strconv.Itoa(n.Node), n.Holder, strconv.Itoa(n.PID),
			n.LeaseLeft.String(), formatTime(n.Clock), formatTime(n.ClaimedAt.Truncate(time.Second))})
	}
	return writeTable(c.stdout, rows)
}
