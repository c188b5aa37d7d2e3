package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"
	"github.com/segmentio/ksuid"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

var cmdNew = &Command{
	Name:  "new",
	Usage: "new SCHEME [-n N] [flags]",
	Short: "print new IDs, one per line",
	Long: `
New prints N new IDs of SCHEME (default 1), one per line, in the scheme's
canonical text form.

Schemes and their flags:

	traceid     --node N        node number, 0 to 65535 (required without --etcd)
	            --thread-bits T thread bits, 0 to 16 (default 0)
	            --log FILE      keep a high-water mark in the launch log FILE
	            --etcd ENDPOINTS  keep it in etcd, and claim a free node
	                            there when --node is not given
	decimalid   --log FILE      the launch log (default idkit.db)
	            --etcd ENDPOINTS  the launch log in etcd instead
	            --launch N      launch id, 1 to 99999 (default the current launch)
	            --split         print the split form, counter-ggggg-lllll
	snowflake   --preset NAME   layout (default twitter), one of
	                            ` + strings.Join(snowflake.PresetNames(), ", ") + `
	            --node N        all node fields as one number (twitter:
	                            datacenter*32 + worker), or the preset's
	                            fields by name: --` + strings.Join(SnowflakeFieldNames(), ", --") + `
	            --log FILE      keep a high-water mark in the launch log FILE
	            --etcd ENDPOINTS  keep it in etcd, and claim the node fields
	                            not given (leading fields such as
	                            --datacenter may be fixed) there
	flake128    --worker N      worker, 1 to 2^48-1 (default: the MAC address
	                            of --interface)
	            --interface NAME  network interface whose MAC address is the
	                            worker (default the first one up)
	            --hex           print the 32-digit hexadecimal form
	            --log FILE      keep a high-water mark in the launch log FILE
	            --etcd ENDPOINTS  keep it in etcd
	--wait DURATION   with --log, wait up to DURATION for a node that
	                  another process holds (default: fail at once)
	objectid, ulid, uuidv4, uuidv7, xid and ksuid take no flags (uuid4 and
	uuid7 name uuidv4 and uuidv7 too). --etcd-prefix P names the
	key prefix in etcd (default "idkit/"). A claimed node is released when
	the command ends.

With --log (or --etcd) a traceid or snowflake call returns at once: it
reserves exactly the IDs it prints in the launch log, which keeps the node's
last issued ID, and writes it there before printing anything. The next call
for the same node continues after it, in the same second or tick, and also
when the clock was stepped back in between; back-to-back calls never wait
and never repeat an ID.

With --log a traceid, snowflake or flake128 call holds its node in the
launch log while it runs, as 'idkit serve' does: a call for a node that
another process on the host holds (a parallel call, a server) fails at
once, naming that process, or waits for it with --wait DURATION. A holder
that dies frees its node at once. Without --log or --etcd nothing can tell
two processes with the same node apart: on a terminal the call says so.

Without a store a traceid or snowflake call issues nothing in the tick it
starts in, so that it cannot repeat an ID of an earlier call: a traceid call
waits up to a second before its first ID, a snowflake call up to a tick, and
says so in one line on stderr when the wait is 10 ms or more. That holds only
while the clock is not stepped back between calls.

Each decimalid call takes a fresh generator id from the launch log; a launch
has 100,000 of them. Record a launch first with 'idkit launch begin'.

Examples:

	idkit new traceid --node 7 -n 3
	idkit new traceid --node 7 --log idkit.db
	idkit launch begin --ticket REL-42 && idkit new decimalid -n 5
	idkit new snowflake --datacenter 1 --worker 3
	idkit new snowflake --preset sonyflake --machine 42 -n 10
	idkit new traceid --etcd 10.0.0.5:2379 -n 3
	idkit new snowflake --etcd 10.0.0.5:2379 --datacenter 2
	idkit new objectid -n 2
	idkit new flake128 --worker 42 -n 3
	idkit new uuidv7
	idkit new xid -n 3
`,
	Run: runNew,
}

// maxNew bounds -n.
const maxNew = 100_000_000

func runNew(c *Console, args []string) error {
	s, err := schemeArg(args)
	if err != nil {
		return err
	}
	fs := NewFlags("new")
	n := fs.Int("n", 1, "how many IDs to print")
	start := s.newFlags(c, fs)
	if err := ParseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	if *n < 0 || *n > maxNew {
		return Usagef("-n %d out of range, want 0 to %d", *n, maxNew)
	}
	next, err := start()
	if err != nil {
		return err
	}
	// Ctrl-C or SIGTERM ends the call after a whole line, never in the
	// middle of one.
	interrupted := c.Interrupted
	if interrupted == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		interrupted = ctx
	}
	w := bufio.NewWriter(c.Stdout)
	for i := range *n {
		if i%1024 == 0 && interrupted.Err() != nil {
			w.Flush()
			if c.Interrupted != nil {
				return fmt.Errorf("interrupted after %d IDs; the claimed node is released", i)
			}
			return fmt.Errorf("interrupted after %d IDs", i)
		}
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

func newTraceID(c *Console, fs *flag.FlagSet) func() (func() (string, error), error) {
	node := fs.Int("node", 0, "node number, 0 to 65535 (required without --etcd)")
	threadBits := fs.Int("thread-bits", 0, "thread bits T, 0 to 16")
	where := AddStoreFlags(fs, "")
	where.addWait()
	return func() (func() (string, error), error) {
		claimed := !IsSet(fs, "node") && IsSet(fs, "etcd")
		if !IsSet(fs, "node") && !claimed {
			return nil, Usagef("traceid needs --node (0 to %d), or --etcd to claim one", traceid.MaxNode)
		}
		if *node < 0 || *node > traceid.MaxNode {
			return nil, Usagef("--node %d out of range, want 0 to %d", *node, traceid.MaxNode)
		}
		if *threadBits < 0 || *threadBits > traceid.MaxThreadBits {
			return nil, Usagef("--thread-bits %d out of range, want 0 to %d", *threadBits, traceid.MaxThreadBits)
		}
		o := traceid.Options{Node: *node, ThreadBits: *threadBits, Clock: c.Clock}
		l, err := where.Open(c)
		if err != nil {
			return nil, err
		}
		switch {
		case claimed: // the claim keeps the node's marks, fenced by it
			if o.Claim, err = where.Claim(c, "traceid", 0, traceid.MaxNode); err != nil {
				return nil, err
			}
		case l != nil:
			o.Store = l
		}
		if o.Store != nil || o.Claim != nil {
			return reserved(fs, func(ids []traceid.ID) error { return traceid.Reserve(context.Background(), o, ids) }), nil
		}
		g, err := traceid.New(context.Background(), o)
		if err != nil {
			return nil, err
		}
		c.AtExit(func() { g.Close() })
		warnUnheld(c, fmt.Sprintf("node %d", *node))
		now := c.Clock.Now()
		sayWait(c, time.Second-time.Duration(now.Nanosecond()), "second")
		return func() (string, error) {
			id, err := g.Next()
			return id.String(), err
		}, nil
	}
}

// maxBatch is the most IDs a call with a store reserves at a time. Each
// batch is reserved (written to the store) before any of its IDs is
// printed.
const maxBatch = 1 << 16

// reserved returns a next function for the -n IDs of fs: it hands out the
// IDs of batches that reserve fills, each as large as what is left to
// print, up to maxBatch.
func reserved[ID interface{ String() string }](fs *flag.FlagSet, reserve func([]ID) error) func() (string, error) {
	left, _ := fs.Lookup("n").Value.(flag.Getter).Get().(int)
	buf := make([]ID, min(left, maxBatch))
	var batch []ID
	return func() (string, error) {
		if len(batch) == 0 {
			batch = buf[:min(left, len(buf))]
			if err := reserve(batch); err != nil {
				return "", err
			}
			left -= len(batch)
		}
		id := batch[0]
		batch = batch[1:]
		return id.String(), nil
	}
}

// sayWait tells on stderr why a call without a store waits before its
// first ID, when the wait is long enough to notice.
func sayWait(c *Console, wait time.Duration, tick string) {
	if wait < noticeableWait {
		return
	}
	fmt.Fprintf(c.Stderr, "idkit new: waiting %v for a fresh %s, so that no earlier call's IDs repeat; --log FILE makes calls instant\n",
		wait.Round(time.Millisecond), tick)
}

// warnUnheld warns on a terminal that a call without a store cannot see
// another process that issues under the same node at the same time.
func warnUnheld(c *Console, node string) {
	if IsTerminal(c.Stderr) {
		fmt.Fprintf(c.Stderr, "idkit new: warning: without --log, nothing stops another process from issuing %s's IDs at the same time; --log FILE holds the node on this host, --etcd claims nodes across hosts\n", node)
	}
}

// noticeableWait is the shortest wait that sayWait reports.
const noticeableWait = 10 * time.Millisecond

func newDecimalID(c *Console, fs *flag.FlagSet) func() (func() (string, error), error) {
	where := AddStoreFlags(fs, DefaultLog)
	launch := fs.Int("launch", 0, "launch id, 1 to 99999 (default the current launch)")
	split := fs.Bool("split", false, "print the split form counter-ggggg-lllll")
	return func() (func() (string, error), error) {
		if IsSet(fs, "launch") && (*launch < 1 || *launch > decimalid.MaxLaunch) {
			return nil, Usagef("--launch %d out of range, want 1 to %d", *launch, decimalid.MaxLaunch)
		}
		l, err := where.Open(c)
		if err != nil {
			return nil, err
		}
		if !IsSet(fs, "launch") {
			cur, err := l.Current(context.Background())
			if errors.Is(err, launchlog.ErrNoLaunch) {
				return nil, fmt.Errorf("no launch in %s yet; record one with 'idkit launch begin %s', or give --launch N", where.Name(), where.Hint())
			}
			if err != nil {
				return nil, err
			}
			*launch = cur.ID
		}
		g, err := decimalid.New(context.Background(), decimalid.Options{Launch: *launch, Source: l})
		if err != nil {
			return nil, err
		}
		c.AtExit(func() { g.Close() })
		return func() (string, error) {
			id, err := g.Next()
			if *split {
				return id.SplitString(), err
			}
			return id.String(), err
		}, nil
	}
}

func newSnowflake(c *Console, fs *flag.FlagSet) func() (func() (string, error), error) {
	preset := fs.String("preset", "twitter", "layout: "+strings.Join(snowflake.PresetNames(), ", "))
	node := fs.Int64("node", 0, "all node fields as one number")
	fields := make(map[string]*int64)
	for _, name := range SnowflakeFieldNames() {
		if fs.Lookup(name) == nil {
			fields[name] = fs.Int64(name, 0, "node field "+name+" of the preset")
		}
	}
	where := AddStoreFlags(fs, "")
	where.addWait()
	return func() (func() (string, error), error) {
		layout, err := PresetFlag(*preset)
		if err != nil {
			return nil, err
		}
		o := snowflake.Options{Layout: layout, Clock: c.Clock}
		if IsSet(fs, "etcd") && !IsSet(fs, "node") {
			if o.Claim, err = ClaimSnowflake(c, where, fs, layout, fields); err != nil {
				return nil, err
			}
		} else if o.Node, err = snowflakeNode(fs, layout, *node, fields); err != nil {
			return nil, err
		}
		l, err := where.Open(c)
		if err != nil {
			return nil, err
		}
		if l != nil {
			if o.Claim == nil { // a claim keeps the node's marks, fenced by it
				o.Store = l
			}
			return reserved(fs, func(ids []snowflake.ID) error { return snowflake.Reserve(context.Background(), o, ids) }), nil
		}
		g, err := snowflake.New(context.Background(), o)
		if err != nil {
			return nil, err
		}
		c.AtExit(func() { g.Close() })
		if len(layout.Fields) > 0 && o.Claim == nil {
			warnUnheld(c, "node "+describeNode(layout, o.Node))
		}
		if now := c.Clock.Now(); !now.Before(layout.Epoch) {
			sayWait(c, layout.Unit-now.Sub(layout.Epoch)%layout.Unit, "tick")
		}
		return func() (string, error) {
			id, err := g.Next()
			return id.String(), err
		}, nil
	}
}

// PresetFlag returns the snowflake preset called name.
func PresetFlag(name string) (snowflake.Layout, error) {
	l, err := snowflake.Preset(name)
	if err != nil {
		return l, Usagef("unknown --preset %q (want one of %s)", name, strings.Join(snowflake.PresetNames(), ", "))
	}
	return l, nil
}

// SnowflakeFieldNames returns the names of the node fields of all presets,
// each once, which "idkit new snowflake" accepts as flags.
func SnowflakeFieldNames() []string {
	var names []string
	seen := make(map[string]bool)
	for _, p := range snowflake.PresetNames() {
		l, _ := snowflake.Preset(p)
		for _, f := range l.Fields {
			if !seen[f.Name] {
				seen[f.Name] = true
				names = append(names, f.Name)
			}
		}
	}
	return names
}

// ClaimSnowflake claims a node of layout through --etcd, with the node
// fields given as flags fixed: they must be the leading fields, such as
// Twitter's datacenter.
func ClaimSnowflake(c *Console, where *StoreFlags, fs *flag.FlagSet, layout snowflake.Layout, fields map[string]*int64) (store.Claim, error) {
	fixed := make(map[string]int64)
	for name, v := range fields {
		if IsSet(fs, name) {
			if _, ok := fieldOf(layout, name); !ok {
				return nil, Usagef("--%s: preset %s has no field %s (%s)", name, layout.Name, name, DescribeFields(layout))
			}
			fixed[name] = *v
		}
	}
	lo, hi, err := layout.NodeRange(fixed)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return where.Claim(c, "snowflake/"+layout.Name, int(lo), int(hi))
}

// snowflakeNode returns the node field values of layout that the flags
// give: --node for all fields at once, or the fields by name.
func snowflakeNode(fs *flag.FlagSet, layout snowflake.Layout, node int64, fields map[string]*int64) (map[string]int64, error) {
	values, named, err := NamedFields(fs, layout, fields)
	if err != nil {
		return nil, err
	}
	switch {
	case IsSet(fs, "node") && len(named) > 0:
		return nil, Usagef("give either --node or %s, not both", strings.Join(named, " "))
	case len(layout.Fields) == 0:
		if IsSet(fs, "node") {
			return nil, Usagef("--node: preset %s has no node fields", layout.Name)
		}
		return nil, nil
	case IsSet(fs, "node"):
		if max := int64(1)<<layout.NodeBits() - 1; node < 0 || node > max {
			return nil, Usagef("--node %d out of range for preset %s, want 0 to %d", node, layout.Name, max)
		}
		return layout.SplitNode(node)
	case len(named) == 0:
		return nil, Usagef("snowflake needs --node (0 to %d) or the preset's fields: %s",
			int64(1)<<layout.NodeBits()-1, DescribeFields(layout))
	}
	return values, nil
}

// NamedFields returns the node fields of layout given as flags, checked
// against their widths, and the flags that gave them.
func NamedFields(fs *flag.FlagSet, layout snowflake.Layout, fields map[string]*int64) (map[string]int64, []string, error) {
	values := make(map[string]int64)
	var named []string
	for _, name := range SnowflakeFieldNames() {
		if fields[name] == nil || !IsSet(fs, name) {
			continue
		}
		named = append(named, "--"+name)
		f, ok := fieldOf(layout, name)
		if !ok {
			return nil, nil, Usagef("--%s: preset %s has no field %s (%s)", name, layout.Name, name, DescribeFields(layout))
		}
		if v, max := *fields[name], int64(1)<<f.Bits-1; v < 0 || v > max {
			return nil, nil, Usagef("--%s %d out of range for preset %s, want 0 to %d", name, v, layout.Name, max)
		}
		values[name] = *fields[name]
	}
	return values, named, nil
}

func fieldOf(l snowflake.Layout, name string) (snowflake.Field, bool) {
	for _, f := range l.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return snowflake.Field{}, false
}

// describeNode names the node fields' values, such as "datacenter 0
// worker 7".
func describeNode(l snowflake.Layout, node map[string]int64) string {
	parts := make([]string, len(l.Fields))
	for i, f := range l.Fields {
		parts[i] = fmt.Sprintf("%s %d", f.Name, node[f.Name])
	}
	return strings.Join(parts, " ")
}

// DescribeFields lists the node fields of l as flags with their ranges.
func DescribeFields(l snowflake.Layout) string {
	if len(l.Fields) == 0 {
		return "it has none"
	}
	parts := make([]string, len(l.Fields))
	for i, f := range l.Fields {
		parts[i] = fmt.Sprintf("--%s (0 to %d)", f.Name, int64(1)<<f.Bits-1)
	}
	return strings.Join(parts, " ")
}

// flake128Lease is the lease of a flake128 call with a store: the next
// call for the worker waits until the clock passes it.
const flake128Lease = 50 * time.Millisecond

func newFlake128(c *Console, fs *flag.FlagSet) func() (func() (string, error), error) {
	worker := fs.Uint64("worker", 0, "worker, 1 to 2^48-1 (default: the MAC address of --interface)")
	iface := fs.String("interface", "", "network interface whose MAC address is the worker")
	asHex := fs.Bool("hex", false, "print the 32-digit hexadecimal form")
	where := AddStoreFlags(fs, "")
	where.addWait()
	return func() (func() (string, error), error) {
		if IsSet(fs, "worker") && (*worker < 1 || *worker > flake128.MaxWorker) {
			return nil, Usagef("--worker %d out of range, want 1 to %d", *worker, uint64(flake128.MaxWorker))
		}
		if IsSet(fs, "worker") && IsSet(fs, "interface") {
			return nil, Usagef("give either --worker or --interface, not both")
		}
		o := flake128.Options{Worker: *worker, Interface: *iface, Clock: c.Clock}
		l, err := where.Open(c)
		if err != nil {
			return nil, err
		}
		if l != nil {
			o.Store, o.Lease = l, flake128Lease
		}
		g, err := flake128.New(context.Background(), o)
		if err != nil {
			return nil, err
		}
		c.AtExit(func() { g.Close() })
		if o.Store == nil {
			warnUnheld(c, fmt.Sprintf("worker %012x", g.Worker()))
		}
		return func() (string, error) {
			id, err := g.Next()
			if *asHex {
				return id.Hex(), err
			}
			return id.String(), err
		}, nil
	}
}

func newObjectID(c *Console, fs *flag.FlagSet) func() (func() (string, error), error) {
	return func() (func() (string, error), error) {
		g, err := objectid.New(objectid.Options{Clock: c.Clock})
		if err != nil {
			return nil, err
		}
		c.AtExit(func() { g.Close() })
		return func() (string, error) {
			id, err := g.Next()
			return id.String(), err
		}, nil
	}
}

func newULID(c *Console, fs *flag.FlagSet) func() (func() (string, error), error) {
	return func() (func() (string, error), error) {
		entropy := ulid.Monotonic(rand.Reader, 0)
		return func() (string, error) {
			id, err := ulid.New(ulid.Timestamp(c.Clock.Now()), entropy)
			return id.String(), err
		}, nil
	}
}

func newUUID4(*Console, *flag.FlagSet) func() (func() (string, error), error) {
	return func() (func() (string, error), error) {
		return func() (string, error) {
			id, err := uuid.NewRandom()
			return id.String(), err
		}, nil
	}
}

func newXID(*Console, *flag.FlagSet) func() (func() (string, error), error) {
	return func() (func() (string, error), error) {
		return func() (string, error) { return xid.New().String(), nil }, nil
	}
}

func newKSUID(*Console, *flag.FlagSet) func() (func() (string, error), error) {
	return func() (func() (string, error), error) {
		return func() (string, error) {
			id, err := ksuid.NewRandom()
			return id.String(), err
		}, nil
	}
}

func newUUID7(*Console, *flag.FlagSet) func() (func() (string, error), error) {
	return func() (func() (string, error), error) {
		return func() (string, error) {
			id, err := uuid.NewV7()
			return id.String(), err
		}, nil
	}
}
