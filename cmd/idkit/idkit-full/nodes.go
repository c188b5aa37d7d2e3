package main

import (
	"context"
	"os"
	"strconv"
	"time"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"

	"github.com/idkit/idkit/fleet"
)

func init() { cli.Provide("nodes", nodesHelp, runNodes) }

// nodesHelp is the help of "idkit nodes".
var nodesHelp = `
Nodes lists the node numbers that traceid and snowflake generators hold in
etcd: the space (traceid, snowflake/PRESET, or an application's own), the
node, its holder (host/pid and process id), the lease time left as etcd
counts it, and the holder's clock when it last recorded it. A holder that
dies frees its node when its lease runs out.

Examples:

	idkit nodes --etcd 10.0.0.5:2379
	idkit nodes --etcd 10.0.0.5:2379,10.0.0.6:2379 --json
`

func runNodes(c *cli.Console, args []string) error {
	fs := cli.NewFlags("nodes")
	endpoints := fs.String("etcd", os.Getenv(cli.EnvEtcdEndpoints), "etcd endpoints, comma-separated (or $"+cli.EnvEtcdEndpoints+")")
	prefix := fs.String("etcd-prefix", fleet.DefaultPrefix, "prefix of idkit's keys in etcd")
	conn := cli.AddEtcdFlags(fs)
	asJSON := fs.Bool("json", false, "print a JSON array")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	if *endpoints == "" {
		return cli.Usagef("nodes needs --etcd ENDPOINTS")
	}
	client, err := dialEtcd(c, *endpoints, etcdFlags{conn})
	if err != nil {
		return err
	}
	nodes, err := fleet.Nodes(context.Background(), client, *prefix, cli.EtcdTimeout)
	if err != nil {
		return err
	}
	if *asJSON {
		if nodes == nil {
			nodes = []fleet.NodeInfo{}
		}
		return cli.WriteJSON(c, nodes)
	}
	rows := [][]string{{"SPACE", "NODE", "HOLDER", "PID", "LEASE LEFT", "CLOCK", "CLAIMED"}}
	for _, n := range nodes {
		rows = append(rows, []string{n.Space, strconv.Itoa(n.Node), n.Holder, strconv.Itoa(n.PID),
			n.LeaseLeft.String(), cli.FormatTime(n.Clock), cli.FormatTime(n.ClaimedAt.Truncate(time.Second))})
	}
	return cli.WriteTable(c.Stdout, rows)
}
