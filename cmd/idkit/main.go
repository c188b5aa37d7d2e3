// Command idkit generates, explains and compares unique IDs.
//
//	idkit new SCHEME [-n N] [flags]   print new IDs, one per line
//	idkit help [COMMAND]              show help
//
// Run "idkit help" for the full list.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
