package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// idkit makes, explains and records IDs with the standard library, bbolt
// and the peer ID modules only, so that a call starts in a millisecond or
// two. The commands that reach services — serve, compare, nodes, and
// every command line with --etcd — live in idkit-full, which links etcd's
// client, gRPC, the SQL drivers and Prometheus as well. idkit lists them
// and hands them over: it runs idkit-full with the same arguments.

// fullName is the program that runs every command.
const fullName = "idkit-full"

// The commands that only idkit-full runs. It sets their help and body with
// Provide; idkit knows their names, synopses and summaries for its help.
var (
	cmdNodes = &Command{
		Name:  "nodes",
		Usage: "nodes --etcd ENDPOINTS [--etcd-prefix P] [--json]",
		Short: "list the node numbers claimed in etcd",
	}
	cmdServe = &Command{
		Name:  "serve",
		Usage: "serve [--addr HOST:PORT] [--schemes LIST] [--node N] [--log FILE | --etcd ENDPOINTS] [flags]",
		Short: "serve IDs over HTTP, with metrics and a health check",
	}
	cmdCompare = &Command{
		Name:  "compare",
		Usage: "compare [-n N | --grow [--max-n N]] [--writers K [--concurrent]] [--schemes LIST] [--postgres DSN] [--mysql DSN] [--need LIST] [--engine NAME [--shards N]] [--like TABLE [--scratch DSN] [--sample N] [--dry-run]] [--max-load N] [--max-lag D] [--json FILE] [--html FILE] [--quiet]",
		Short: "measure every ID scheme side by side: speed, insert locality in bbolt, SQLite, PostgreSQL and InnoDB, order, size; and a verdict",
	}
)

// inFull reports whether only idkit-full runs cmd.
func inFull(cmd *Command) bool { return cmd == cmdNodes || cmd == cmdServe || cmd == cmdCompare }

// Provide gives the command called name, which only idkit-full runs, its
// help text and its body.
func Provide(name, long string, run func(c *Console, args []string) error) {
	cmd := Lookup(name)
	if cmd == nil {
		panic("cli.Provide: no command " + name)
	}
	cmd.Long, cmd.Run = long, run
	for _, e := range etcdCommands() {
		if e == cmd {
			cmd.Long = withEtcdHelp(long)
		}
	}
}

// Listed marks err as a list, one item per line (the rights that a run
// lacks, each with its grant), which the command prints as it is.
func Listed(err error) error { return listedError{err} }

type listedError struct{ error }

func (e listedError) Unwrap() error { return e.error }

// elsewhere reports whether the command line args, which name cmd, needs
// a command or a flag that this program lacks: a command with no body, or
// etcd (--etcd, or $IDKIT_ETCD_ENDPOINTS) where Etcd is not set.
func elsewhere(cmd *Command, args []string) bool {
	if cmd.Run == nil {
		return true
	}
	if Etcd != nil {
		return false
	}
	for _, e := range etcdCommands() {
		if e == cmd && namesEtcd(args) {
			return true
		}
	}
	return false
}

// namesEtcd reports whether args give --etcd, or the environment gives
// $IDKIT_ETCD_ENDPOINTS, which stands for it.
func namesEtcd(args []string) bool {
	if os.Getenv(EnvEtcdEndpoints) != "" {
		return true
	}
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "etcd" {
			return true
		}
	}
	return false
}

// handOver runs idkit-full with args, from the directory of this program
// or else from $PATH, and returns its exit status: where the platform
// allows, idkit-full takes this process's place, with its pid, signals and
// terminal.
var handOver = func(args []string, stderr io.Writer) int {
	path, err := findFull()
	if err != nil {
		fmt.Fprintf(stderr, "idkit %s: %v\n", args[0], err)
		return 1
	}
	return execFull(path, args, stderr)
}

// errNoFull says where idkit-full was looked for, and how to install it.
var errNoFull = errors.New("this command runs in " + fullName + ", which is not installed beside idkit or on $PATH; install both with 'go install github.com/idkit/idkit/cmd/idkit/...@latest'")

// findFull returns the path of idkit-full: beside this program (symbolic
// links followed), or else on $PATH.
func findFull() (string, error) {
	if self, err := os.Executable(); err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			beside := filepath.Join(filepath.Dir(self), fullName+exeSuffix())
			if st, err := os.Stat(beside); err == nil && !st.IsDir() {
				return beside, nil
			}
		}
	}
	if path, err := exec.LookPath(fullName); err == nil {
		return path, nil
	}
	return "", errNoFull
}
