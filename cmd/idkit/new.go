package main

import (
	"bufio"
	"flag"
	"sort"
	"strings"

	"github.com/idkit/idkit/traceid"
)

var cmdNew = &command{
	Name:  "new",
	Usage: "new SCHEME [-n N] [flags]",
	Short: "print new IDs, one per line",
	Long: `
New prints N new IDs of SCHEME (default 1), one per line, in the scheme's
canonical text form.

Schemes and their flags:

	traceid   --node N (0..=65535, required) --thread-bits T (0..=16)

A new generator issues nothing in the second it was created in, so each
call may wait up to a second before its first ID.

Examples:

	idkit new traceid --node 7 -n 3
`,
	Run: runNew,
}

// A scheme knows its flags and makes a generator from them.
type scheme struct {
	flags func(fs *flag.FlagSet) (start func() (next func() (string, error), err error))
}

var schemes = map[string]scheme{
	"traceid": {flags: traceidFlags},
}

func schemeNames() string {
	var names []string
	for name := range schemes {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func runNew(c *console, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return usagef("missing SCHEME (one of %s)", schemeNames())
	}
	s, ok := schemes[args[0]]
	if !ok {
		return usagef("unknown scheme %q (want one of %s)", args[0], schemeNames())
	}
	fs := newFlags("new")
	n := fs.Int("n", 1, "how many IDs to print")
	start := s.flags(fs)
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *n < 0 || *n > 100_000_000 {
		return usagef("-n %d out of range 0..=100000000", *n)
	}
	next, err := start()
	if err != nil {
		return err
	}
	w := bufio.NewWriter(c.stdout)
	for range *n {
		id, err := next()
		if err != nil {
			w.Flush()
			return err
		}
		w.WriteString(id)
		w.WriteByte('\n')
	}
	return w.Flush()
}

func traceidFlags(fs *flag.FlagSet) func() (func() (string, error), error) {
	node := fs.Int("node", -1, "node number, 0..=65535 (required)")
	threadBits := fs.Int("thread-bits", 0, "thread bits T, 0..=16")
	return func() (func() (string, error), error) {
		if *node == -1 {
			return nil, usagef("traceid needs --node (0..=65535)")
		}
		g, err := traceid.New(traceid.Options{Node: *node, ThreadBits: *threadBits})
		if err != nil {
			return nil, usageError{err.Error()}
		}
		return func() (string, error) {
			id, err := g.Next()
			return id.String(), err
		}, nil
	}
}
