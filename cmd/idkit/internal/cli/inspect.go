package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/internal/explain"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

var cmdInspect = &Command{
	Name:  "inspect",
	Usage: "inspect SCHEME [ID | -] [--at TIME] [--preset NAME] [--json]",
	Short: "explain an ID: when, where and in what order it was made",
	Long: `
Inspect prints the parts of an ID of SCHEME, one per line, or with --json
as one JSON object in which the ID itself is a string (JavaScript loses
integers above 2^53). Times are RFC 3339 in UTC. An ID that is not one of
SCHEME is a bad argument (exit status 2). A negative number is taken as an
ID, not a flag; "--" ends the flags.

With "-" for the ID, or no ID and IDs piped in, inspect reads IDs from
standard input, one a line (blank lines skipped, spaces around an ID
trimmed), and prints one line per ID: its parts as name=value pairs, the
scheme left out, a value with spaces quoted; or with --json one object a
line. A line that is not an ID is reported on stderr with its number while
the others go on, and the command exits with status 2; other errors (the
launch log) stop it with status 1.

Schemes, their parts and flags:

	traceid     time second node thread counter
	            The ID is decimal, or an OpenTelemetry span ID (16 hex
	            digits) or trace ID (32 hex digits, the TraceId in the high
	            half) as otelid makes them; 16 decimal digits read as
	            decimal unless --hex is given. A random ID from another
	            generator is refused if its top bit is set and decodes to
	            meaningless parts if not.
	            --at TIME        the wrapping second is read as the latest
	                             one not after TIME (RFC 3339; default now)
	            --thread-bits T  the T the generator used (default 0)
	            --hex            read the ID as a span or trace ID
	decimalid   split counter generator launch
	            --log FILE       also show the launch's record from FILE
	            --etcd ENDPOINTS or from the launch log in etcd
	snowflake   time tick, the node fields by name, sequence
	            --preset NAME    layout (default twitter), one of
	                             ` + strings.Join(snowflake.PresetNames(), ", ") + `
	            --at TIME        the time the ID's time is checked
	                             against for a hint at another preset
	                             (RFC 3339; default now)
	objectid    time process counter
	flake128    time milliseconds worker mac sequence hex (base-62 or
	            32-digit hexadecimal input)
	ulid        time entropy
	uuidv4      version variant (uuid4 too)
	uuidv7      time version variant (uuid7 too)
	xid         time machine pid counter
	ksuid       time payload

Examples:

	idkit inspect traceid 4649612847423160321
	idkit inspect traceid 4649612847423160321 --at 2026-01-01T00:00:00Z --json
	idkit inspect traceid 4061f04001c00002
	idkit inspect traceid 4061f04001c000017c2b7e15a1f3d904
	idkit inspect decimalid 1415-00092-00065
	idkit inspect snowflake 1541815603606036480
	idkit inspect snowflake --preset discord 175928847299117063
	idkit inspect objectid 507f1f77bcf86cd799439011
	idkit inspect flake128 8HFaR8qWtRlGDHnO57
	idkit inspect uuidv7 017f22e2-79b0-7cc3-98c4-dc0c0c07398f
	idkit inspect xid 9m4e2mr0ui3e8a215n4g
	idkit new traceid --node 7 -n 3 | idkit inspect traceid
	idkit new snowflake --node 7 -n 3 | idkit inspect snowflake - --json
`,
	Run: runInspect,
}

func runInspect(c *Console, args []string) error {
	s, err := schemeArg(args)
	if err != nil {
		return err
	}
	fs := NewFlags("inspect")
	asJSON := fs.Bool("json", false, "print one JSON object")
	explain := s.inspectFlags(c, fs)
	rest, err := inspectArgs(fs, args[1:])
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 1:
		return Usagef("unexpected argument %q", rest[1])
	case len(rest) == 0 && IsTerminal(c.stdin()):
		return Usagef("missing the %s ID to inspect: give it as an argument, or one a line on standard input", s.name)
	case len(rest) == 0 || rest[0] == "-":
		return inspectLines(c, s.name, explain, *asJSON)
	}
	r, err := explain(rest[0])
	if err != nil {
		if isNotAnID(err) {
			return usageError{err.Error()}
		}
		return err
	}
	if *asJSON {
		return r.writeJSON(c.Stdout)
	}
	return r.writeText(c.Stdout)
}

// inspectLines explains the IDs on standard input, one a line (blank lines
// skipped, spaces around an ID trimmed), one result per line: a report's
// fields as name=value pairs, or with asJSON one JSON object. A line that
// is not an ID is reported on stderr with its number and the others go on;
// the command then fails as a usage error (exit status 2). Any other error
// (reading standard input, the launch log) stops it with exit status 1.
func inspectLines(c *Console, scheme string, explain func(string) (*report, error), asJSON bool) error {
	w := bufio.NewWriter(c.Stdout)
	in := bufio.NewScanner(c.stdin())
	in.Buffer(nil, 1<<20)
	var bad []int
	n, lines := 0, 0
	for in.Scan() {
		n++
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		lines++
		r, err := explain(line)
		switch {
		case err == nil && asJSON:
			err = r.writeJSON(w)
		case err == nil:
			err = r.writeLine(w)
		case isNotAnID(err):
			bad = append(bad, n)
			w.Flush()
			fmt.Fprintf(c.Stderr, "idkit inspect: line %d: %s\n", n, OneLine(err.Error()))
			continue
		}
		if err != nil {
			w.Flush()
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("reading standard input after line %d: %w", n, err)
	}
	if len(bad) > 0 {
		return Usagef("%d of %d IDs on standard input are not %s IDs (line %s)", len(bad), lines, scheme, lineList(bad))
	}
	return nil
}

// lineList writes line numbers for a message, the first few of them.
func lineList(lines []int) string {
	var b strings.Builder
	for i, l := range lines {
		if i == 5 {
			fmt.Fprintf(&b, " and %d more", len(lines)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(l))
	}
	return b.String()
}

// otherError marks an error of inspect that is not about the ID it was
// given, such as a launch log that cannot be read.
type otherError struct{ error }

func (e otherError) Unwrap() error { return e.error }

// isNotAnID reports whether err, from explaining one ID, says that the ID
// is not one of the scheme.
func isNotAnID(err error) bool {
	var usage usageError
	var other otherError
	return !errors.As(err, &usage) && !errors.As(err, &other)
}

// stdin is the console's standard input: os.Stdin unless it names one.
func (c *Console) stdin() io.Reader {
	if c.Stdin != nil {
		return c.Stdin
	}
	return os.Stdin
}

// IsTerminal reports whether stream (a reader or a writer) is a terminal,
// or another character device such as /dev/null: a command should not wait
// for IDs from one unasked, and may redraw a progress bar on one.
func IsTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// inspectArgs parses args into fs like parseArgs, except that a negative
// number where an ID may stand ("-1") is an argument, not a flag, so that
// it is reported as not an ID; as a flag's value ("--thread-bits -1") it
// stays the value.
func inspectArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case a == "-" || !strings.HasPrefix(a, "-") || len(a) > 1 && '0' <= a[1] && a[1] <= '9':
			rest = append(rest, a)
		default:
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") || i+1 == len(args) {
				continue
			}
			if f := fs.Lookup(name); f != nil {
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
					i++
					flags = append(flags, args[i])
				}
			}
		}
	}
	if err := ParseFlags(fs, flags); err != nil {
		return nil, err
	}
	return rest, nil
}

// A report is what inspect prints: an explained ID, or another record
// shown the same way.
type report explain.Report

func newReport(scheme, id string) *report {
	return (*report)(explain.New(scheme, id))
}

func (r *report) add(name string, value any) *report {
	(*explain.Report)(r).Add(name, value)
	return r
}

// explained converts the result of an explain function.
func explained(r *explain.Report, err error) (*report, error) {
	return (*report)(r), err
}

// writeText writes one "name value" line per field, the values aligned.
func (r *report) writeText(w io.Writer) error {
	rows := make([][]string, len(r.Fields))
	for i, f := range r.Fields {
		rows[i] = []string{f.Name, fmt.Sprint(f.Value)}
	}
	return WriteTable(w, rows)
}

// writeLine writes the fields but the scheme on one line, as name=value
// pairs separated by spaces; a value that is empty or holds a space, a
// quote, '=' or a control character is quoted as in Go.
func (r *report) writeLine(w io.Writer) error {
	var b []byte
	for _, f := range r.Fields {
		if f.Name == "scheme" {
			continue
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		v := fmt.Sprint(f.Value)
		if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == '"' || r == '=' || r == 0x7f }) {
			v = strconv.Quote(v)
		}
		b = append(append(append(b, f.Name...), '='), v...)
	}
	_, err := w.Write(append(b, '\n'))
	return err
}

// WriteTable writes rows with their columns aligned, two spaces apart,
// and no spaces at the ends of lines. Tabs and line breaks in a cell are
// escaped.
func WriteTable(w io.Writer, rows [][]string) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, row := range rows {
		for i, c := range row {
			if i > 0 {
				tw.Write([]byte{'\t'})
			}
			tw.Write([]byte(cell(c)))
		}
		tw.Write([]byte{'\n'})
	}
	tw.Flush()
	var out []byte
	for line := range bytes.Lines(b.Bytes()) {
		out = append(append(out, bytes.TrimRight(line, " \n")...), '\n')
	}
	_, err := w.Write(out)
	return err
}

// cell makes s fit in one cell of a table: no tabs or line breaks.
func cell(s string) string {
	if strings.ContainsAny(s, "\t\r\n") {
		q := strconv.Quote(s)
		return q[1 : len(q)-1]
	}
	return s
}

// writeJSON writes the fields as one JSON object on one line, in order.
func (r *report) writeJSON(w io.Writer) error {
	_, err := w.Write((*explain.Report)(r).JSON())
	return err
}

// FormatTime formats t as a report does.
func FormatTime(t time.Time) string { return explain.FormatTime(t) }

// atFlag adds --at to fs and returns a function that reads it: the
// reference time, now unless --at is given.
func atFlag(c *Console, fs *flag.FlagSet) func() (time.Time, error) {
	at := fs.String("at", "", "reference time, RFC 3339 (default now)")
	return func() (time.Time, error) {
		if !IsSet(fs, "at") {
			return c.Clock.Now(), nil
		}
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			return time.Time{}, Usagef("--at %q is not an RFC 3339 time such as 2025-06-01T12:00:00Z", *at)
		}
		return t, nil
	}
}

func inspectTraceID(c *Console, fs *flag.FlagSet) func(string) (*report, error) {
	at := atFlag(c, fs)
	threadBits := fs.Int("thread-bits", 0, "thread bits T, 0 to 16")
	asHex := fs.Bool("hex", false, "read the ID as an OpenTelemetry span ID (16 hex digits) or trace ID (32)")
	return func(s string) (*report, error) {
		if *threadBits < 0 || *threadBits > traceid.MaxThreadBits {
			return nil, Usagef("--thread-bits %d out of range, want 0 to %d", *threadBits, traceid.MaxThreadBits)
		}
		ref, err := at()
		if err != nil {
			return nil, err
		}
		if !*asHex && !isOTelHex(s) {
			r, err := explain.TraceID(s, ref, *threadBits)
			if errors.Is(err, traceid.ErrSyntax) {
				return nil, fmt.Errorf("%w: %q, want a decimal TraceId, or 16 or 32 hex digits (an OpenTelemetry span or trace ID)", traceid.ErrSyntax, s)
			}
			return explained(r, err)
		}
		r, id, err := parseOTelHex(s)
		if err != nil {
			return nil, err
		}
		return explained(explain.AddTraceID(r, id, ref, *threadBits))
	}
}

// isOTelHex reports whether s reads as an OpenTelemetry ID without --hex:
// 32 hex digits, or 16 that are not a canonical decimal number (a letter,
// or a leading zero).
func isOTelHex(s string) bool {
	if !isHex(s) {
		return false
	}
	return len(s) == 32 || len(s) == 16 && (s[0] == '0' || strings.ContainsAny(s, "abcdefABCDEF"))
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// parseOTelHex reads s as a span ID (16 hex digits) or a trace ID (32) and
// returns the start of its report and the TraceId it holds.
func parseOTelHex(s string) (*explain.Report, traceid.ID, error) {
	if !isHex(s) || len(s) != 16 && len(s) != 32 {
		return nil, 0, fmt.Errorf("traceid: parse %q: want 16 or 32 hex digits (an OpenTelemetry span or trace ID), got %d characters", s, len(s))
	}
	s = strings.ToLower(s)
	b, _ := hex.DecodeString(s)
	form := "span ID"
	if len(b) == 16 {
		form = "trace ID"
	}
	// otelid puts a TraceId in a span ID, and in a trace ID's high half,
	// big-endian (otelid.FromSpanID): its top bit, which no TraceId has,
	// marks a random fallback. Read here without the OpenTelemetry SDK,
	// which idkit does not link.
	id := traceid.ID(binary.BigEndian.Uint64(b[:8]))
	switch {
	case id > 0:
	case s[:16] == "0000000000000000" && len(b) == 8:
		return nil, 0, fmt.Errorf("traceid: parse %s %q: the zero span ID is invalid", form, s)
	case s[:16] == "0000000000000000":
		return nil, 0, fmt.Errorf("traceid: parse %s %q: the high 8 bytes are zero, which no TraceId is", form, s)
	default:
		return nil, 0, fmt.Errorf("traceid: parse %s %q: the top bit is set, which no TraceId has: a random ID (otelid's fallback when its generator fails, or another generator's)", form, s)
	}
	r := explain.New("traceid", s).
		Add("form", strings.ReplaceAll(form, " ID", "-id")).
		Add("traceid", id.String())
	if len(b) == 16 {
		r.Add("random", s[16:])
	}
	return r, id, nil
}

func inspectDecimalID(c *Console, fs *flag.FlagSet) func(string) (*report, error) {
	where := AddStoreFlags(fs, "")
	var l Store // opened at the first ID
	lookup := func(id decimalid.ID) (store.Launch, error) {
		if l == nil {
			var err error
			if l, err = where.Open(c); err != nil {
				var usage usageError
				if errors.As(err, &usage) {
					return store.Launch{}, err
				}
				return store.Launch{}, otherError{err}
			}
		}
		launch, err := l.Get(context.Background(), id.Launch())
		if errors.Is(err, launchlog.ErrNoLaunch) {
			return launch, otherError{fmt.Errorf("launch %d of %s is not in %s", id.Launch(), id, where.Name())}
		}
		if err != nil {
			return launch, otherError{err}
		}
		return launch, nil
	}
	return func(s string) (*report, error) {
		if !where.wanted() {
			return explained(explain.DecimalID(s, nil))
		}
		return explained(explain.DecimalID(s, lookup))
	}
}

func inspectSnowflake(c *Console, fs *flag.FlagSet) func(string) (*report, error) {
	preset := fs.String("preset", "twitter", "layout: "+strings.Join(snowflake.PresetNames(), ", "))
	at := atFlag(c, fs)
	return func(s string) (*report, error) {
		layout, err := PresetFlag(*preset)
		if err != nil {
			return nil, err
		}
		ref, err := at()
		if err != nil {
			return nil, err
		}
		r, err := explained(explain.Snowflake(s, layout))
		if err != nil {
			return nil, err
		}
		if hint := presetHint(s, layout, ref); hint != "" {
			r.add("hint", hint)
		}
		return r, nil
	}
}

// plausible reports whether t could be when an ID in use was made: from
// 2010, when Twitter's Snowflake began, to a year after now.
func plausible(t, now time.Time) bool {
	return !t.Before(time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)) && !t.After(now.AddDate(1, 0, 0))
}

// presetHint says when the time that s decodes to under layout looks
// wrong, and names the presets under which it does not: when the time is
// implausible (see plausible), or when it is not within a day of now but
// another preset puts it there, as a freshly made ID of that layout would
// be. Otherwise it returns "".
func presetHint(s string, layout snowflake.Layout, now time.Time) string {
	id, err := snowflake.Parse(s)
	if err != nil {
		return ""
	}
	p, err := layout.Decode(id)
	if err != nil {
		return ""
	}
	recent := func(t time.Time) bool { return t.Sub(now).Abs() <= 24*time.Hour }
	var plausibleFits, recentFits []string
	for _, name := range snowflake.PresetNames() {
		other, _ := snowflake.Preset(name)
		if name == layout.Name {
			continue
		}
		q, err := other.Decode(id)
		switch {
		case err != nil:
		case recent(q.Time):
			recentFits = append(recentFits, fmt.Sprintf("%s (%s)", name, FormatTime(q.Time)))
			fallthrough
		case plausible(q.Time, now):
			plausibleFits = append(plausibleFits, fmt.Sprintf("%s (%s)", name, FormatTime(q.Time)))
		}
	}
	switch {
	case !plausible(p.Time, now):
		why := "before 2010"
		if p.Time.After(now) {
			why = "more than a year ahead"
		}
		hint := fmt.Sprintf("the time is implausible for preset %s (%s)", layout.Name, why)
		if len(plausibleFits) == 0 {
			return hint + "; no preset decodes it to a time from 2010 to a year from now"
		}
		return hint + "; it decodes to a plausible time under --preset " + strings.Join(plausibleFits, ", ")
	case !recent(p.Time) && len(recentFits) > 0:
		return "if the ID was made in the last day, its preset is not " + layout.Name + ": it decodes to now under --preset " + strings.Join(recentFits, ", ")
	}
	return ""
}

// inspectWith returns an inspectFlags function for a scheme with no flags.
func inspectWith(explainID func(string) (*explain.Report, error)) func(*Console, *flag.FlagSet) func(string) (*report, error) {
	return func(*Console, *flag.FlagSet) func(string) (*report, error) {
		return func(s string) (*report, error) { return explained(explainID(s)) }
	}
}

var (
	inspectObjectID = inspectWith(explain.ObjectID)
	inspectFlake128 = inspectWith(explain.Flake128)
	inspectULID     = inspectWith(explainULID)
	inspectUUID4    = inspectWith(explainUUID4)
	inspectUUID7    = inspectWith(explainUUID7)
	inspectXID      = inspectWith(explainXID)
	inspectKSUID    = inspectWith(explainKSUID)
)
