package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
	idstore "github.com/idkit/idkit/store"
)

// store is a launch log: the bbolt file (--log) or etcd (--etcd). Both
// backends have the same methods and errors.
type store interface {
	Begin(ctx context.Context, info launchlog.Info) (launchlog.Launch, error)
	Get(ctx context.Context, id int) (launchlog.Launch, error)
	Current(ctx context.Context) (launchlog.Launch, error)
	List(ctx context.Context) ([]launchlog.Launch, error)
	idstore.HighWater
	idstore.Generators
	segment.BlockStore
}

// etcdTimeout bounds each request to etcd from the command line, and is
// the default of --etcd-dial-timeout.
const etcdTimeout = 5 * time.Second

// storeFlags are --log FILE and --etcd ENDPOINTS, of which a command takes
// one: where launches, generator ids and high-water marks live. With
// --etcd come the flags that say how to reach it (etcdFlags).
type storeFlags struct {
	fs         *flag.FlagSet
	log        *string
	etcd       *string
	prefix     *string
	conn       *etcdFlags
	wait       *time.Duration // --wait, for the commands that hold nodes
	defaultLog string         // "" if the command uses no store unless asked

	mu  sync.Mutex
	cli *clientv3.Client // the client of --etcd, once dialled
}

func addStoreFlags(fs *flag.FlagSet, defaultLog string) *storeFlags {
	what := "launch log file that keeps the high-water mark"
	if defaultLog != "" {
		what = "the launch log file"
	}
	f := &storeFlags{
		fs:         fs,
		log:        fs.String("log", defaultLog, what),
		etcd:       fs.String("etcd", "", "etcd endpoints, comma-separated: keep the launch log in etcd and claim nodes there (or $"+envEtcdEndpoints+")"),
		prefix:     fs.String("etcd-prefix", fleet.DefaultPrefix, "prefix of idkit's keys in etcd"),
		conn:       addEtcdFlags(fs),
		defaultLog: defaultLog,
	}
	// $IDKIT_ETCD_ENDPOINTS counts as --etcd given before the arguments:
	// the command's checks of --etcd see it, and --etcd replaces it.
	if env := os.Getenv(envEtcdEndpoints); env != "" {
		fs.Set("etcd", env)
	}
	return f
}

// addWait adds --wait, which waits for a node that another process holds
// in the launch log.
func (f *storeFlags) addWait() {
	f.wait = f.fs.Duration("wait", 0, "wait up to this long for a node that another process holds in the launch log, instead of failing at once")
}

// wanted reports whether the command line asks for a store, or the
// command uses one by default.
func (f *storeFlags) wanted() bool {
	return f.defaultLog != "" || isSet(f.fs, "log") || isSet(f.fs, "etcd")
}

// name says where the store is, for messages.
func (f *storeFlags) name() string {
	if isSet(f.fs, "etcd") {
		return "etcd " + *f.etcd
	}
	return *f.log
}

// hint is the flag that names the store again, for messages that suggest
// another command.
func (f *storeFlags) hint() string {
	if isSet(f.fs, "etcd") {
		return "--etcd " + *f.etcd
	}
	return "--log " + *f.log
}

// open returns the store the flags name, or nil if the command uses none.
func (f *storeFlags) open(c *console) (store, error) {
	if isSet(f.fs, "etcd") {
		if isSet(f.fs, "log") {
			if os.Getenv(envEtcdEndpoints) != "" {
				return nil, usagef("give either --log or --etcd ($%s gives --etcd), not both", envEtcdEndpoints)
			}
			return nil, usagef("give either --log or --etcd, not both")
		}
		if f.wait != nil && isSet(f.fs, "wait") {
			return nil, usagef("--wait waits for a node held in the launch log (--log); an etcd claim (--etcd without --node) takes a free node instead")
		}
		cli, err := f.client(c)
		if err != nil {
			return nil, err
		}
		return fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: *f.prefix, Timeout: etcdTimeout, Clock: c.clock})
	}
	var wait time.Duration
	if f.wait != nil {
		if wait = *f.wait; wait < 0 {
			return nil, usagef("--wait %v is negative", wait)
		}
		if isSet(f.fs, "wait") && !f.wanted() {
			return nil, usagef("--wait waits for a node held in the launch log: give --log FILE too")
		}
	}
	if !f.wanted() {
		return nil, nil
	}
	if *f.log == "" {
		return nil, usagef("--log is empty, want a file path")
	}
	l, err := launchlog.New(launchlog.Options{Path: *f.log, HoldWait: wait, Clock: c.clock})
	if err != nil {
		return nil, err
	}
	return &commandHolds{store: l, c: c, held: make(map[string]bool)}, nil
}

// claim claims a node in space from lo to hi through --etcd, released when
// the command ends.
func (f *storeFlags) claim(c *console, space string, lo, hi int) (*fleet.Claim, error) {
	cli, err := f.client(c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	claim, err := fleet.ClaimNode(ctx, fleet.ClaimOptions{
		Client: cli, Prefix: *f.prefix, Space: space, Min: lo, Max: hi, Timeout: etcdTimeout, Clock: c.clock,
	})
	if err != nil {
		return nil, err
	}
	c.atExit(func() { claim.Close() })
	interrupted, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	c.interrupted = interrupted
	c.atExit(stop)
	return claim, nil
}

// client returns the client of --etcd, dialled at the first call, closed
// when the command ends.
func (f *storeFlags) client(c *console) (*clientv3.Client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cli == nil {
		cli, err := c.dialEtcd(*f.etcd, f.conn)
		if err != nil {
			return nil, err
		}
		f.cli = cli
	}
	return f.cli, nil
}

// commandHolds is a launch log whose holds last until the command ends:
// a call that reserves its IDs in several batches holds its node from the
// first batch to the last, so that no other process takes the node in
// between. A hold of a key the command holds already does nothing.
type commandHolds struct {
	store
	c    *console
	mu   sync.Mutex
	held map[string]bool
}

func (h *commandHolds) Hold(ctx context.Context, key string) (io.Closer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held[key] {
		return nopCloser{}, nil
	}
	held, err := h.store.(idstore.Holder).Hold(ctx, key)
	if err != nil {
		return nil, err
	}
	h.held[key] = true
	h.c.atExit(func() { held.Close() })
	return nopCloser{}, nil
}

// nopCloser is a hold that the command releases when it ends, not when its
// user closes it.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }
