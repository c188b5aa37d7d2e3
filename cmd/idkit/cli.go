package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// A command is one idkit subcommand.
type command struct {
	Name  string // as typed: "new"
	Usage string // the synopsis after "idkit "
	Short string // one line for the command list
	Long  string // help text, with examples
	// Run runs the command with the arguments after its name. It returns a
	// usageError for bad arguments.
	Run func(c *console, args []string) error
}

// console carries the command's output streams.
type console struct {
	stdout, stderr io.Writer
}

// commands is the table of subcommands, in the order help lists them.
var commands []*command

func init() {
	commands = []*command{cmdNew, cmdHelp}
}

// usageError reports bad command-line arguments: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// run runs idkit with args (without the program name) and returns the exit
// status: 0 on success, 2 for a usage error, 1 for any other error.
func run(args []string, stdout, stderr io.Writer) int {
	c := &console{stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		printCommands(stderr)
		return 2
	}
	cmd := lookup(args[0])
	if cmd == nil {
		fmt.Fprintf(stderr, "idkit: unknown command %q; run 'idkit help'\n", args[0])
		return 2
	}
	err := cmd.Run(c, args[1:])
	var usage usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		printHelp(stdout, cmd)
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "idkit %s: %s\nusage: idkit %s\nrun 'idkit help %s' for details\n", cmd.Name, usage.msg, cmd.Usage, cmd.Name)
		return 2
	default:
		fmt.Fprintf(stderr, "idkit %s: %s\n", cmd.Name, oneLine(err.Error()))
		return 1
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// newFlags returns a flag set for command name whose errors come back to run instead
// of being printed.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses args into fs, turning flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	return nil
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

var cmdHelp = &command{
	Name:  "help",
	Usage: "help [COMMAND]",
	Short: "show help for idkit or one command",
	Long:  "Help prints the list of commands, or the usage and examples of one.",
	Run: func(c *console, args []string) error {
		switch len(args) {
		case 0:
			printCommands(c.stdout)
			return nil
		case 1:
			cmd := lookup(args[0])
			if cmd == nil {
				return usagef("unknown command %q", args[0])
			}
			printHelp(c.stdout, cmd)
			return nil
		}
		return usagef("too many arguments")
	},
}

func printCommands(w io.Writer) {
	fmt.Fprintln(w, "idkit generates, explains and compares unique IDs.")
	fmt.Fprintln(w, "\nUsage:\n\n\tidkit COMMAND [arguments]\n\nCommands:")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "\t%s\t%s\n", c.Name, c.Short)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nRun 'idkit help COMMAND' for the flags and examples of one command.")
}

func printHelp(w io.Writer, cmd *command) {
	fmt.Fprintf(w, "usage: idkit %s\n\n%s\n", cmd.Usage, strings.TrimSpace(cmd.Long))
}
