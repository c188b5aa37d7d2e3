// Command idkit generates, explains and compares unique IDs.
//
//	idkit new SCHEME [-n N] [flags]        print new IDs, one per line
//	idkit inspect SCHEME ID [flags]        explain an ID: time, node, counter
//	idkit launch begin|current|list        record a launch, or show the log
//	idkit nodes --etcd ENDPOINTS           list the nodes claimed in etcd
//	idkit serve [--addr HOST:PORT] [flags] serve IDs over HTTP, with metrics
//	idkit sql instagram [--shard N]        print Instagram's next_id() PL/pgSQL
//	idkit compare [flags]                  measure every scheme side by side
//	idkit help [COMMAND]                   show help
//
// Schemes are traceid, decimalid, snowflake, objectid, flake128, ulid,
// uuidv4, uuidv7, xid and ksuid (uuid4 and uuid7 are accepted too). Errors are one line on stderr, with exit status 2 for bad arguments
// and 1 for anything else. Run "idkit help COMMAND" for the flags and examples.
//
// idkit links the standard library, bbolt and the peer ID modules only, and
// starts in a millisecond or two. It hands serve, compare, nodes and every
// command line with --etcd to idkit-full, which links etcd's client, gRPC,
// the SQL drivers and Prometheus too, and which it finds beside itself or on
// $PATH. Install both:
//
//	go install github.com/idkit/idkit/cmd/idkit/...@latest
package main

import (
	"os"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
