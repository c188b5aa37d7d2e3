// Command scale measures what one etcd cluster carries for a fleet of
// node holders: the etcd requests a second they send, by kind, the
// latency of the writes, the leader's CPU, the database's size, how long
// claims take, and how long a killed holder's nodes take to come free.
//
// It builds etcd's own server (or takes -etcd), runs three members as
// local processes with deploy/etcd.env's settings, and starts holder
// processes (this binary again) over -ramp, each claiming -per-process
// nodes with fleet.ClaimNode and running a traceid generator on each that
// issues one ID every -every and keeps its high-water mark in the claim.
// Each holder process counts the etcd requests that its client sends, by
// wrapping the client's KV and Lease, and prints its counters; the
// harness merges them over a window of -measure that starts 10s after the
// last claim, then SIGKILLs one holder process and times how long until
// etcd deletes its node keys. Run it from within idkit's workspace, on
// Linux:
//
//	go run ./internal/testkit/campaigns/scale -holders 4096 -measure 60s -json report.json
//
// It prints a readable report and a Markdown table row. The cluster and
// the holders share the host, so its CPU bounds what the figures can
// show: the report gives the load average with them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// settle is how long the harness waits after the last claim before the
// window starts, for the claims' first renewals and marks to spread.
const settle = 10 * time.Second

// config is the command line, of the harness and of a holder process.
type config struct {
	holders    int
	perProcess int
	ttl        time.Duration
	markLease  time.Duration
	interval   time.Duration
	every      time.Duration
	ramp       time.Duration
	measure    time.Duration
	claimWait  time.Duration
	lease      string
	dir        string
	jsonFile   string
	etcd       string

	// A holder process's own flags, which the harness passes.
	holderProcess bool
	endpoints     string
}

// hidden are the flags that only the harness passes, to a holder process.
var hidden = map[string]bool{"holder-process": true, "endpoints": true}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run runs the harness, or a holder process, with args and returns the
// exit status: 2 for a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.holderProcess {
		if err := runHolder(ctx, cfg, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "scale: holder process %d: %v\n", os.Getpid(), err)
			return 1
		}
		return 0
	}
	if err := harness(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "scale:", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.holders, "holders", 1024, "node holders in all, each a claim and a traceid generator")
	fs.IntVar(&cfg.perProcess, "per-process", 64, "holders per holder process")
	fs.DurationVar(&cfg.ttl, "ttl", 10*time.Second, "each claim's lease TTL, whole seconds (ClaimOptions.TTL); claims renew every min(TTL/3, 3s)")
	fs.DurationVar(&cfg.interval, "interval", 0, "how often leases are renewed and clocks recorded (ClaimOptions.Interval; 0: min(TTL/3, 3s))")
	fs.DurationVar(&cfg.markLease, "mark-lease", time.Second, "how far ahead each generator moves its high-water mark (traceid Options.Lease; 0: the claim's suggestion)")
	fs.DurationVar(&cfg.every, "every", time.Second, "each holder issues one ID this often, the first at a random offset within it")
	fs.DurationVar(&cfg.ramp, "ramp", 30*time.Second, "start the holder processes spread evenly over this time (0: all at once)")
	fs.DurationVar(&cfg.measure, "measure", 60*time.Second, "the measuring window, which starts 10s after the last claim")
	fs.DurationVar(&cfg.claimWait, "claim-wait", 2*time.Minute, "how long after the ramp every holder process may take to claim its nodes")
	fs.StringVar(&cfg.lease, "lease", "per-claim", "lease mode: per-claim (a lease per claim) or per-process (one lease per holder process)")
	fs.StringVar(&cfg.dir, "dir", "", "work directory for etcd's data and the logs (default: a temporary directory, removed after a run that succeeds)")
	fs.StringVar(&cfg.jsonFile, "json", "", "also write the report to this file as JSON")
	fs.StringVar(&cfg.etcd, "etcd", "", "etcd server binary to run (default: build internal/testkit/campaigns/deploy/etcd into the work directory)")
	fs.BoolVar(&cfg.holderProcess, "holder-process", false, "run as a holder process")
	fs.StringVar(&cfg.endpoints, "endpoints", "", "a holder process's etcd endpoints, comma-separated")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./internal/testkit/campaigns/scale [flags]\n\n")
		fmt.Fprintf(fs.Output(), "Runs a 3-member etcd cluster and -holders node holders against it, and reports the load they put on it.\n\nflags:\n")
		fs.VisitAll(func(f *flag.Flag) {
			if hidden[f.Name] {
				return
			}
			fmt.Fprintf(fs.Output(), "  -%s %s\n    \t%s", f.Name, flagType(f), f.Usage)
			if f.DefValue != "" {
				fmt.Fprintf(fs.Output(), " (default %s)", f.DefValue)
			}
			fmt.Fprintln(fs.Output())
		})
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if err := cfg.check(fs.NArg()); err != nil {
		fmt.Fprintln(stderr, "scale:", err)
		fs.Usage()
		return cfg, err
	}
	return cfg, nil
}

// flagType names the kind of value a flag takes, for the usage text.
func flagType(f *flag.Flag) string {
	name, _ := flag.UnquoteUsage(f)
	return name
}

// check validates the flags, so that a run fails before it starts
// anything.
func (cfg *config) check(extra int) error {
	switch {
	case extra > 0:
		return errors.New("no arguments expected, only flags")
	case cfg.holders < 1:
		return fmt.Errorf("-holders %d: want at least 1", cfg.holders)
	case cfg.perProcess < 1:
		return fmt.Errorf("-per-process %d: want at least 1", cfg.perProcess)
	case cfg.ttl < 2*time.Second || cfg.ttl > time.Hour || cfg.ttl%time.Second != 0:
		return fmt.Errorf("-ttl %v: want whole seconds from 2s to 1h", cfg.ttl)
	case cfg.interval < 0 || cfg.interval >= cfg.ttl:
		return fmt.Errorf("-interval %v: want 0 or less than -ttl", cfg.interval)
	case cfg.markLease != 0 && (cfg.markLease < time.Second || cfg.markLease > time.Hour):
		return fmt.Errorf("-mark-lease %v: want 1s to 1h, or 0 for the claim's suggestion", cfg.markLease)
	case cfg.every <= 0:
		return fmt.Errorf("-every %v: want more than 0", cfg.every)
	case cfg.ramp < 0:
		return fmt.Errorf("-ramp %v: want 0 or more", cfg.ramp)
	case cfg.measure < 2*countsEvery+time.Second:
		return fmt.Errorf("-measure %v: want at least %v, to hold two of every holder process's counter lines", cfg.measure, 2*countsEvery+time.Second)
	case cfg.claimWait <= 0:
		return fmt.Errorf("-claim-wait %v: want more than 0", cfg.claimWait)
	case cfg.holderProcess && cfg.endpoints == "":
		return errors.New("-holder-process needs -endpoints")
	}
	return checkLeaseMode(cfg.lease)
}

// renewInterval is how often a claim with this TTL renews its lease and
// rewrites its record: fleet's default ClaimOptions.Interval.
func renewInterval(ttl, interval time.Duration) time.Duration {
	if interval != 0 {
		return interval
	}
	return min(ttl/3, 3*time.Second)
}

// harness runs the cluster and the holder processes, measures, reports,
// and stops everything it started.
func harness(ctx context.Context, cfg config, stdout, stderr io.Writer) (err error) {
	if runtime.GOOS != "linux" {
		return errors.New("the harness runs on Linux only: it reads CPU times from /proc and ties its processes' lives to its own")
	}
	progress := func(format string, args ...any) {
		fmt.Fprintf(stderr, "scale: %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
	dir := cfg.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "idkit-scale-"); err != nil {
			return err
		}
		defer func() {
			if err == nil {
				os.RemoveAll(dir)
			} else {
				fmt.Fprintf(stderr, "scale: etcd's data and every process's log are kept in %s\n", dir)
			}
		}()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	etcdBin := cfg.etcd
	if etcdBin == "" {
		progress("building etcd's server")
		if etcdBin, err = buildEtcd(ctx, dir); err != nil {
			return err
		}
	}
	progress("starting 3 etcd members in %s", dir)
	cl, err := startCluster(etcdBin, dir)
	if err != nil {
		return err
	}
	defer cl.stop()
	cli, err := newClient(cl.endpoints())
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cl.waitLeader(ctx, cli, leaderBound); err != nil {
		return err
	}

	self, err := os.Executable()
	if err != nil {
		return err
	}
	fl := &holderFleet{cfg: cfg, bin: self, endpoints: strings.Join(cl.endpoints(), ","), dir: filepath.Join(dir, "holders")}
	defer fl.stop(30 * time.Second)
	progress("starting %d holders in %d processes over %v", cfg.holders, len(fl.sizes()), cfg.ramp)
	if err := fl.start(ctx, cfg.ramp+cfg.claimWait); err != nil {
		return err
	}
	progress("all %d claims made; settling for %v", cfg.holders, settle)
	if err := fl.sleepAlive(ctx, settle); err != nil {
		return err
	}

	progress("measuring for %v", cfg.measure)
	w, err := openWindow(ctx, cli, cl, fl)
	if err != nil {
		return err
	}
	if err := fl.sleepAlive(ctx, cfg.measure); err != nil {
		return err
	}
	if err := w.close(ctx, cli, cl, fl); err != nil {
		return err
	}
	if err := fl.waitLinesAfter(ctx, w.end, 2*countsEvery+5*time.Second); err != nil {
		return err
	}
	rep, err := buildReport(cfg, fl, cl, w)
	if err != nil {
		return err
	}

	victim := fl.procs[0]
	progress("killing holder process %d (%d nodes) and waiting for etcd to free its nodes", victim.pid(), len(victim.claimedLine().Nodes))
	k, err := freeAfterKill(ctx, cli, victim, 3*cfg.ttl+10*time.Second)
	if err != nil {
		rep.writeText(stdout) // what the window measured, without the free time
		return err
	}
	rep.setKill(k)

	rep.writeText(stdout)
	if cfg.jsonFile != "" {
		if err := rep.writeJSON(cfg.jsonFile); err != nil {
			return err
		}
	}
	progress("stopping the holder processes and the cluster")
	if err := fl.stop(30 * time.Second); err != nil {
		return err
	}
	return nil
}
