package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"

	idkitpkg "github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/launchlog"
)

// A command is one idkit subcommand.
type Command struct {
	Name  string // as typed: "new"
	Usage string // the synopsis after "idkit "
	Short string // one line for the command list
	Long  string // help text, with examples
	// Run runs the command with the arguments after its name. It returns a
	// usageError for bad arguments.
	Run func(c *Console, args []string) error
}

// Console carries what a command may touch of the outside world: its
// output streams and the clock, which tests replace with a fake one.
type Console struct {
	Stdin          io.Reader // nil for os.Stdin
	Stdout, Stderr io.Writer
	Clock          clock.Clock
	exits          []func() // run when the command ends, last first
	// Interrupted, when set, ends with SIGINT or SIGTERM: a command that
	// holds a node claim stops issuing, so that it can release the claim.
	Interrupted context.Context
}

// AtExit registers f to run when the command ends: releasing a node claim,
// closing a client.
func (c *Console) AtExit(f func()) { c.exits = append(c.exits, f) }

// commands is the table of subcommands, in the order help lists them.
var commands []*Command

func init() {
	commands = []*Command{cmdNew, cmdInspect, cmdLaunch, cmdNodes, cmdServe, cmdSQL, cmdPublicID, cmdCompare, cmdVersion, cmdHelp}
}

// usageError reports bad command-line arguments: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func Usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// Main runs the command line args (without the program name) on the
// process's streams and returns the exit status.
func Main(args []string) int { return Run(args, os.Stdout, os.Stderr) }

// Run runs idkit with args (without the program name) and returns the exit
// status: 0 on success, 2 for a usage error, 1 for any other error. An error
// is one line on stderr.
func Run(args []string, stdout, stderr io.Writer) int {
	return (&Console{Stdout: stdout, Stderr: stderr, Clock: clock.System()}).Run(args)
}

// Run runs idkit with args on console c.
func (c *Console) Run(args []string) int {
	stdout, stderr := c.Stdout, c.Stderr
	if len(args) == 0 {
		printCommands(stderr)
		return 2
	}
	switch {
	case isHelpFlag(args[0]):
		args = append([]string{"help"}, args[1:]...)
	case args[0] == "--version" || args[0] == "-version":
		args = append([]string{"version"}, args[1:]...)
	}
	cmd := Lookup(args[0])
	if cmd == nil {
		var names []string
		for _, c := range commands {
			names = append(names, c.Name)
		}
		if near := nearest(args[0], names); near != "" {
			fmt.Fprintf(stderr, "idkit: unknown command %q; did you mean %q? run 'idkit help'\n", args[0], near)
		} else {
			fmt.Fprintf(stderr, "idkit: unknown command %q; run 'idkit help'\n", args[0])
		}
		return 2
	}
	// What only idkit-full runs, and its help, go to idkit-full.
	if cmd == cmdHelp && len(args) == 2 {
		if target := Lookup(args[1]); target != nil && target.Run == nil {
			return handOver(args, stderr)
		}
	}
	if elsewhere(cmd, args[1:]) {
		return handOver(args, stderr)
	}
	// "idkit COMMAND -h" is help for every command, those whose first
	// argument is not a flag (a scheme, a kind) included.
	if len(args) > 1 && isHelpFlag(args[1]) {
		printHelp(stdout, cmd)
		return 0
	}
	err := cmd.Run(c, args[1:])
	for i := len(c.exits) - 1; i >= 0; i-- {
		c.exits[i]()
	}
	c.exits = nil
	var usage usageError
	var listed listedError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		printHelp(stdout, cmd)
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "idkit %s: %s; usage: idkit %s\n", cmd.Name, unprefixed(cmd.Name, OneLine(usage.msg)), cmd.Usage)
		return 2
	case errors.As(err, &listed):
		// A list, such as the rights a run lacks with the statement that
		// grants each: one per line, to copy from.
		fmt.Fprintf(stderr, "idkit %s: %s\n", cmd.Name, unprefixed(cmd.Name, err.Error()))
		return 1
	default:
		fmt.Fprintf(stderr, "idkit %s: %s%s\n", cmd.Name, unprefixed(cmd.Name, OneLine(err.Error())), hint(cmd, err))
		return 1
	}
}

// unprefixed drops the package's own "NAME: " from the front of msg when the
// command of that name prints it after "idkit NAME: ", which would say it
// twice (idkit publicid: publicid: ...).
func unprefixed(name, msg string) string { return strings.TrimPrefix(msg, name+": ") }

// hint suggests a way out of err, where there is one beyond its message.
func hint(cmd *Command, err error) string {
	if !errors.Is(err, idkitpkg.ErrHeld) {
		return ""
	}
	if held := (*launchlog.HeldError)(nil); errors.As(err, &held) && held.Key == "" {
		return "" // the message says what to do
	}
	if cmd == cmdNew {
		return "; use another node, wait for it with --wait DURATION, or claim nodes with --etcd"
	}
	return "; use another node, or claim nodes with --etcd"
}

// Commands are idkit's commands, in the order help lists them.
func Commands() []*Command { return slices.Clone(commands) }

// Lookup returns the command called name, or nil.
func Lookup(name string) *Command {
	for _, c := range commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// newFlags returns a flag set for command name whose errors come back to run instead
// of being printed.
func NewFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// ParseFlags parses args into fs, turning flag errors into usage errors.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
			msg = "unknown flag " + flagName(name)
			if near := nearest(name, names); near != "" {
				msg += "; did you mean " + flagName(near) + "?"
			} else {
				msg += " (" + flagList(fs) + ")"
			}
		}
		msg = flagRef.ReplaceAllStringFunc(msg, func(m string) string {
			i := strings.Index(m, " -") // the prefix ends with a space
			return m[:i+1] + flagName(m[i+2:])
		})
		return usageError{msg}
	}
	return nil
}

// flagRef finds a flag as package flag's errors spell it, -node, to spell
// it as help does.
var flagRef = regexp.MustCompile(`(flag |for |argument: )-[A-Za-z][\w-]*`)

// flagName spells a flag as help does: -n, --node.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// nearest returns the name of names closest to s, if one is close enough
// to be a typo of it: at most a third of its letters changed, added,
// dropped or swapped with a neighbour (at least one, and never all), with
// a name that s begins preferred among those as close; else a name that s
// is the start of, at least three letters long; else "".
func nearest(s string, names []string) string {
	s = strings.ToLower(s)
	limit := max(1, len(s)/3)
	var best []string
	bestDist := limit + 1
	for _, n := range names {
		d := editDistance(s, n)
		if d >= len(s) || d > limit {
			continue
		}
		switch {
		case d < bestDist:
			best, bestDist = []string{n}, d
		case d == bestDist:
			best = append(best, n)
		}
	}
	if len(best) > 1 {
		var started []string
		for _, n := range best {
			if strings.HasPrefix(n, s) {
				started = append(started, n)
			}
		}
		best = started
	}
	if len(best) == 1 {
		return best[0]
	}
	if len(best) > 1 || len(s) < 3 {
		return ""
	}
	var started []string
	for _, n := range names {
		if strings.HasPrefix(n, s) {
			started = append(started, n)
		}
	}
	if len(started) == 1 {
		return started[0]
	}
	return ""
}

// editDistance is the optimal string alignment distance of a and b: the
// fewest letters changed, added, dropped or swapped with a neighbour.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// flagList names the flags fs defines, as help spells them.
func flagList(fs *flag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, flagName(f.Name)) })
	if len(names) == 0 {
		return "it takes no flags"
	}
	return "want one of " + strings.Join(names, ", ")
}

// parseArgs parses args into fs and returns the arguments that are not
// flags, which may stand before, between or after the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := ParseFlags(fs, args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if len(left) == 0 {
			return rest, nil
		}
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			return append(rest, left...), nil // all after "--" are arguments
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
}

// IsSet reports whether the flag called name was given on the command line.
func IsSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// isHelpFlag reports whether arg asks for help, as the flag package reads it.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--h", "--help":
		return true
	}
	return false
}

func OneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

var cmdHelp = &Command{
	Name:  "help",
	Usage: "help [COMMAND]",
	Short: "show help for idkit or one command",
	Long: `
Help prints the list of commands, or the usage and examples of one.
"idkit COMMAND -h" prints the same as "idkit help COMMAND".

Examples:

	idkit help
	idkit help inspect
	idkit new -h
`,
	Run: func(c *Console, args []string) error {
		switch len(args) {
		case 0:
			printCommands(c.Stdout)
			return nil
		case 1:
			cmd := Lookup(args[0])
			if cmd == nil {
				return Usagef("unknown command %q", args[0])
			}
			printHelp(c.Stdout, cmd)
			return nil
		}
		return Usagef("too many arguments")
	},
}

var cmdVersion = &Command{
	Name:  "version",
	Usage: "version",
	Short: "print idkit's version, commit and Go version",
	Long: `
Version prints the module version idkit was built from ("(devel)" for a
build from a checkout), the commit and whether the tree had changes, and
the Go version, from the build information. "idkit --version" prints the
same.

Examples:

	idkit version
	idkit --version
`,
	Run: func(c *Console, args []string) error {
		if len(args) > 0 {
			return Usagef("unexpected argument %q", args[0])
		}
		_, err := fmt.Fprintln(c.Stdout, versionLine())
		return err
	},
}

// versionLine says what idkit was built from: "idkit v1.2.3 (commit
// 0123abcd, go1.26.8)".
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "idkit (no build information) " + runtime.Version()
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var commit, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if commit != "" {
		commit = "commit " + commit + modified + ", "
	}
	return fmt.Sprintf("idkit %s (%s%s)", version, commit, info.GoVersion)
}

func printCommands(w io.Writer) {
	fmt.Fprintln(w, "idkit generates, explains and compares unique IDs.")
	fmt.Fprintln(w, "\nUsage:\n\n\tidkit COMMAND [arguments]\n\nCommands:")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range commands {
		mark := ""
		if inFull(c) {
			mark = " [" + fullName + "]"
		}
		fmt.Fprintf(tw, "\t%s\t%s%s\n", c.Name, c.Short, mark)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nThe commands marked [%s], and every command line with --etcd, run in\n%s, the second program that 'go install .../cmd/idkit/...' installs:\nit links etcd's client, gRPC, the SQL drivers and Prometheus, which idkit\nleaves out to start fast. idkit hands them over to it.\n", fullName, fullName)
	fmt.Fprintln(w, "\nRun 'idkit help COMMAND' for the flags and examples of one command.")
}

func printHelp(w io.Writer, cmd *Command) {
	fmt.Fprintf(w, "usage: idkit %s\n\n%s\n", cmd.Usage, strings.TrimSpace(cmd.Long))
}
