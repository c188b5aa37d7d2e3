// Command idkit-full is idkit with every command linked in.
package main

import (
	"os"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
