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
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
