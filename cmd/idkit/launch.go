package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/idkit/idkit/launchlog"
)

// defaultLog is the launch log's path when --log is not given.
const defaultLog = "idkit.db"

var cmdLaunch = &command{
	Name:  "launch",
	Usage: "launch begin|current|list [--log FILE] [flags]",
	Short: "record a launch, or show the launch log",
	Long: `
Launch keeps the launch log, the bbolt file that hands out launch ids
(1..=99999) and decimalid generator ids and keeps the high-water marks of
"idkit new --log". Every process on a host may share one file.

	launch begin [--log FILE] [--ticket T] [--by WHO] [--note TEXT]
	    records a new launch and prints only its id, for a deployment
	    script to capture
	launch current [--log FILE] [--json]
	    prints the latest launch
	launch list [--log FILE] [--json]
	    prints every launch, oldest first

--log defaults to idkit.db in the current directory. With --json, current
prints one JSON object and list a JSON array of them.

Examples:

	LAUNCH=$(idkit launch begin --ticket REL-42 --by deploy-bot)
	idkit new decimalid --launch "$LAUNCH" -n 3
	idkit launch current --json
	idkit launch list --log /var/lib/app/idkit.db
`,
	Run: runLaunch,
}

func runLaunch(c *console, args []string) error {
	if len(args) == 0 {
		return usagef("missing begin, current or list")
	}
	switch args[0] {
	case "begin":
		return launchBegin(c, args[1:])
	case "current":
		return launchShow(c, "current", args[1:])
	case "list":
		return launchShow(c, "list", args[1:])
	}
	if isHelpFlag(args[0]) {
		return flag.ErrHelp
	}
	return usagef("unknown launch subcommand %q (want begin, current or list)", args[0])
}

func launchBegin(c *console, args []string) error {
	fs := newFlags("launch begin")
	logPath := fs.String("log", defaultLog, "the launch log")
	ticket := fs.String("ticket", "", "the release ticket")
	by := fs.String("by", "", "who starts the launch")
	note := fs.String("note", "", "free text")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	l, err := openLog(c, *logPath)
	if err != nil {
		return err
	}
	launch, err := l.Begin(launchlog.Info{Ticket: *ticket, By: *by, Note: *note})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(c.stdout, launch.ID)
	return err
}

// launchShow runs "launch current" and "launch list".
func launchShow(c *console, sub string, args []string) error {
	fs := newFlags("launch " + sub)
	logPath := fs.String("log", defaultLog, "the launch log")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	l, err := openLog(c, *logPath)
	if err != nil {
		return err
	}
	if sub == "current" {
		launch, err := l.Current()
		if errors.Is(err, launchlog.ErrNoLaunch) {
			return fmt.Errorf("no launch in %s yet; record one with 'idkit launch begin --log %s'", *logPath, *logPath)
		}
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(c, launch)
		}
		return new(report).
			add("launch", launch.ID).
			add("started", formatTime(launch.StartedAt)).
			add("ticket", launch.Ticket).
			add("by", launch.By).
			add("note", launch.Note).
			writeText(c.stdout)
	}
	launches, err := l.List()
	if err != nil {
		return err
	}
	if *asJSON {
		if launches == nil {
			launches = []launchlog.Launch{}
		}
		return writeJSON(c, launches)
	}
	if len(launches) == 0 {
		fmt.Fprintf(c.stderr, "idkit launch list: no launches in %s\n", *logPath)
		return nil
	}
	rows := [][]string{{"LAUNCH", "STARTED", "TICKET", "BY", "NOTE"}}
	for _, launch := range launches {
		rows = append(rows, []string{strconv.Itoa(launch.ID), formatTime(launch.StartedAt), launch.Ticket, launch.By, launch.Note})
	}
	return writeTable(c.stdout, rows)
}

func writeJSON(c *console, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.stdout.Write(append(b, '\n'))
	return err
}

// openLog returns the launch log at path.
func openLog(c *console, path string) (*launchlog.Log, error) {
	if path == "" {
		return nil, usagef("--log is empty, want a file path")
	}
	return launchlog.New(launchlog.Options{Path: path, Clock: c.clock})
}
