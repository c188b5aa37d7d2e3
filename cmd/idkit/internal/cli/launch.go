package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/store"
)

// DefaultLog is the launch log's path when --log is not given.
const DefaultLog = "idkit.db"

var cmdLaunch = &Command{
	Name:  "launch",
	Usage: "launch begin|current|list|advance|adopt [--log FILE | --etcd ENDPOINTS] [flags]",
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
	launch advance [--launch N] [--generator LAUNCH=ID]... [--block TAG=ID]...
	               [--marks TIME]
	    moves a log file's counters past what a lost copy of it handed out,
	    never back, and prints what moved, with every process that uses it
	    stopped (it refuses while a node is held)
	launch adopt --moved | --restored [--launch N] [--generator LAUNCH=ID]...
	             [--block TAG=ID]... [--margin DURATION] [--by WHO] [--note TEXT]
	    makes a log file that is not where its log was last written (a
	    copy, a backup put back, a move to another disk: every write to it
	    is refused until then) the log's file, once you say what happened:
	    --moved, it was moved or copied whole while nothing used it, and
	    the old file is used no more; --restored, it is older than what
	    its log handed out: give the last launch and each segment tag's
	    last ID from your data, and the last generator id of each launch
	    you go on with (the others end); its marks move to now + --margin
	    (default 10s)

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
	idkit launch advance --log idkit.db --launch 41 --generator 41=17 --marks 2026-11-29T10:00:00Z
	idkit launch adopt --log /mnt/new-disk/idkit.db --moved --by ops
	idkit launch adopt --log idkit.db --restored --launch 41 --block orders=20000
`,
	Run: runLaunch,
}

func runLaunch(c *Console, args []string) error {
	if len(args) == 0 {
		return Usagef("missing begin, current, list, advance or adopt")
	}
	switch args[0] {
	case "begin":
		return launchBegin(c, args[1:])
	case "current":
		return launchShow(c, "current", args[1:])
	case "list":
		return launchShow(c, "list", args[1:])
	case "advance":
		return launchAdvance(c, args[1:])
	case "adopt":
		return launchAdopt(c, args[1:])
	}
	if isHelpFlag(args[0]) {
		return flag.ErrHelp
	}
	return Usagef("unknown launch subcommand %q (want begin, current, list, advance or adopt)", args[0])
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
	launch, err := l.Begin(context.Background(), store.Info{Ticket: *ticket, By: *by, Note: *note})
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
			launches = []store.Launch{}
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

// counterFlags adds the flags of launch advance and launch adopt that give
// the last values a lost log handed out, and returns what they set.
func counterFlags(fs *flag.FlagSet, marks bool) *launchlog.Counters {
	counters := new(launchlog.Counters)
	fs.IntVar(&counters.Launch, "launch", 0, "the last launch id handed out")
	fs.Func("generator", "LAUNCH=ID: the last generator id handed out in a launch (repeatable)", func(v string) error {
		launch, id, err := pair(v, "LAUNCH=ID")
		if err != nil {
			return err
		}
		l, err := strconv.Atoi(launch)
		if err != nil {
			return fmt.Errorf("launch %q is not a number", launch)
		}
		g, err := strconv.Atoi(id)
		if err != nil {
			return fmt.Errorf("generator id %q is not a number", id)
		}
		if counters.Generators == nil {
			counters.Generators = make(map[int]int)
		}
		counters.Generators[l] = max(counters.Generators[l], g)
		return nil
	})
	fs.Func("block", "TAG=ID: the last ID reserved for a segment tag (repeatable)", func(v string) error {
		tag, id, err := pair(v, "TAG=ID")
		if err != nil {
			return err
		}
		last, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return fmt.Errorf("ID %q is not a number", id)
		}
		if counters.Blocks == nil {
			counters.Blocks = make(map[string]int64)
		}
		counters.Blocks[tag] = max(counters.Blocks[tag], last)
		return nil
	})
	if marks {
		fs.Func("marks", "TIME: the latest time the lost log's generators may have issued in, RFC 3339 (its last use plus the longest lease)", func(v string) error {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return fmt.Errorf("%q is not an RFC 3339 time such as 2025-06-01T12:00:00Z", v)
			}
			counters.Marks = t
			return nil
		})
	}
	return counters
}

// launchAdvance runs "launch advance".
func launchAdvance(c *Console, args []string) error {
	fs := NewFlags("launch advance")
	where := AddStoreFlags(fs, DefaultLog)
	counters := counterFlags(fs, true)
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	if IsSet(fs, "etcd") {
		return Usagef("advance moves the counters of a log file (--log); a log in etcd is not restored from a file")
	}
	l, err := launchlog.New(launchlog.Options{Path: *where.log, Clock: c.Clock})
	if err != nil {
		return err
	}
	moved, err := l.AdvanceCounters(context.Background(), *counters)
	if err != nil {
		return err
	}
	r := movedReport(moved)
	if len(r.Fields) == 0 {
		_, err := fmt.Fprintf(c.Stdout, "nothing moved: %s is past every value given\n", where.Name())
		return err
	}
	return r.writeText(c.Stdout)
}

// movedReport lists the counters that moved.
func movedReport(moved launchlog.Counters) *report {
	r := new(report)
	if moved.Launch != 0 {
		r.add("launch", fmt.Sprintf("next after %d", moved.Launch))
	}
	for _, launch := range slices.Sorted(maps.Keys(moved.Generators)) {
		r.add(fmt.Sprintf("generator of launch %d", launch), fmt.Sprintf("next after %d", moved.Generators[launch]))
	}
	for _, tag := range slices.Sorted(maps.Keys(moved.Blocks)) {
		r.add(fmt.Sprintf("block of %s", tag), fmt.Sprintf("next after %d", moved.Blocks[tag]))
	}
	if !moved.Marks.IsZero() {
		r.add("high-water marks", "at least "+FormatTime(moved.Marks))
	}
	return r
}

// launchAdopt runs "launch adopt".
func launchAdopt(c *Console, args []string) error {
	fs := NewFlags("launch adopt")
	where := AddStoreFlags(fs, DefaultLog)
	moved := fs.Bool("moved", false, "the file was moved or copied whole while nothing used it, and the file it came from is used no more")
	restored := fs.Bool("restored", false, "the file is a restored copy, older than what the log handed out: give the last values your data holds")
	counters := counterFlags(fs, false)
	margin := fs.Duration("margin", launchlog.DefaultAdoptMargin, "with --restored, how far past now every high-water mark moves: at least the longest lease in use")
	by := fs.String("by", "", "who adopts the log")
	note := fs.String("note", "", "why, in free text")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	if IsSet(fs, "etcd") {
		return Usagef("adopt moves a log file (--log) into its place; a log in etcd lives in no file")
	}
	if *moved == *restored {
		return Usagef("say what happened to the file: --moved (moved or copied whole, the old file used no more) or --restored (a restored copy, with the last values your data holds)")
	}
	if *moved && (counters.Launch != 0 || len(counters.Generators) > 0 || len(counters.Blocks) > 0) {
		return Usagef("--launch, --generator and --block go with --restored: a log moved whole needs none")
	}
	l, err := launchlog.New(launchlog.Options{Path: *where.log, Clock: c.Clock})
	if err != nil {
		return err
	}
	a, err := l.Adopt(context.Background(), launchlog.AdoptOptions{Moved: *moved, Counters: *counters, Margin: *margin, By: *by, Note: *note})
	if err != nil {
		return err
	}
	r := new(report).add("adopted", fmt.Sprintf("%s (%s)", where.Name(), a.Why))
	if a.Was != "" {
		r.add("was", a.Was)
		r.add("now", a.Now)
	}
	r.Fields = append(r.Fields, movedReport(a.Advanced).Fields...)
	for _, launch := range a.Ended {
		r.add(fmt.Sprintf("generator ids of launch %d", launch), "ended: begin a new launch for decimalid")
	}
	return r.writeText(c.Stdout)
}

// pair splits "A=B", naming form in its error.
func pair(v, form string) (string, string, error) {
	a, b, ok := strings.Cut(v, "=")
	if !ok || a == "" || b == "" {
		return "", "", fmt.Errorf("%q is not %s", v, form)
	}
	return a, b, nil
}
