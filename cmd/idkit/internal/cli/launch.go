package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/idkit/idkit/launchlog"
)

// DefaultLog is the launch log's path when --log is not given.
const DefaultLog = "idkit.db"

var cmdLaunch = &Command{
	Name:  "launch",
	Usage: "launch begin|current|list [--log FILE | --etcd ENDPOINTS] [flags]",
	Short: "record a launch, or show the launch log",
	Long: `
Launch keeps the launch log, which hands out launch ids (1 to 99999) and
decimalid generator ids and keeps the high-water marks of "idkit new --log".
It lives in a bbolt file that every process on a host may share (--log), or
in etcd for a fleet of hosts (--etcd).

	launch begin [--ticket T] [--by WHO] [--note TEXT]
	    records a new launch and prints only its id, for a deployment
	    script to capture
	launch current [--json]
	    prints the latest launch
	launch list [--json]
	    prints every launch, oldest first

Each takes --log FILE (default idkit.db in the current directory) or
--etcd ENDPOINTS (comma-separated host:port; --etcd-prefix P, default
"idkit/", names the key prefix). With --json, current prints one JSON
object and list a JSON array of them.

Examples:

	LAUNCH=$(idkit launch begin --ticket REL-42 --by deploy-bot)
	idkit new decimalid --launch "$LAUNCH" -n 3
	idkit launch current --json
	idkit launch list --log /var/lib/app/idkit.db
	idkit launch begin --etcd 10.0.0.5:2379,10.0.0.6:2379 --ticket REL-43
`,
	Run: runLaunch,
}

func runLaunch(c *Console, args []string) error {
	if len(args) == 0 {
		return Usagef("missing begin, current or list")
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
	return Usagef("unknown launch subcommand %q (want begin, current or list)", args[0])
}

func launchBegin(c *Console, args []string) error {
	fs := NewFlags("launch begin")
	where := AddStoreFlags(fs, DefaultLog)
	ticket := fs.String("ticket", "", "the release ticket")
	by := fs.String("by", "", "who starts the launch")
	note := fs.String("note", "", "free text")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	l, err := where.Open(c)
	if err != nil {
		return err
	}
	launch, err := l.Begin(context.Background(), launchlog.Info{Ticket: *ticket, By: *by, Note: *note})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(c.Stdout, launch.ID)
	return err
}

// launchShow runs "launch current" and "launch list".
func launchShow(c *Console, sub string, args []string) error {
	fs := NewFlags("launch " + sub)
	where := AddStoreFlags(fs, DefaultLog)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	l, err := where.Open(c)
	if err != nil {
		return err
	}
	if sub == "current" {
		launch, err := l.Current(context.Background())
		if errors.Is(err, launchlog.ErrNoLaunch) {
			return fmt.Errorf("no launch in %s yet; record one with 'idkit launch begin %s'", where.Name(), where.Hint())
		}
		if err != nil {
			return err
		}
		if *asJSON {
			return WriteJSON(c, launch)
		}
		return new(report).
			add("launch", launch.ID).
			add("started", FormatTime(launch.StartedAt)).
			add("ticket", launch.Ticket).
			add("by", launch.By).
			add("note", launch.Note).
			writeText(c.Stdout)
	}
	launches, err := l.List(context.Background())
	if err != nil {
		return err
	}
	if *asJSON {
		if launches == nil {
			launches = []launchlog.Launch{}
		}
		return WriteJSON(c, launches)
	}
	if len(launches) == 0 {
		fmt.Fprintf(c.Stderr, "idkit launch list: no launches in %s\n", where.Name())
		return nil
	}
	rows := [][]string{{"LAUNCH", "STARTED", "TICKET", "BY", "NOTE"}}
	for _, launch := range launches {
		rows = append(rows, []string{strconv.Itoa(launch.ID), FormatTime(launch.StartedAt), launch.Ticket, launch.By, launch.Note})
	}
	return WriteTable(c.Stdout, rows)
}

func WriteJSON(c *Console, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.Stdout.Write(append(b, '\n'))
	return err
}
