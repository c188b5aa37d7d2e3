package cli

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/store"
)

// Store is a launch log: the bbolt file (--log) or etcd (--etcd). Both
// backends have the same methods and errors.
type Store interface {
	store.LaunchLog
	segment.BlockStore
}

// EtcdTimeout bounds each request to etcd from the command line, and is
// the default of --etcd-dial-timeout.
const EtcdTimeout = 5 * time.Second

// StoreFlags are --log FILE and --etcd ENDPOINTS, of which a command takes
// one: where launches, generator ids and high-water marks live. With
// --etcd come the flags that say how to reach it (EtcdFlags).
type StoreFlags struct {
	fs         *flag.FlagSet
	log        *string
	Endpoints  *string // --etcd
	Prefix     *string // --etcd-prefix
	Conn       *EtcdFlags
	wait       *time.Duration // --wait, for the commands that hold nodes
	defaultLog string         // "" if the command uses no store unless asked
}

// Etcd reaches what --etcd names. idkit-full sets it; idkit hands every
// command line that names etcd to idkit-full instead (see handOver).
var Etcd interface {
	// Log opens the launch log in etcd that f names.
	Log(c *Console, f *StoreFlags) (Store, error)
	// Claim claims a node of space from lo to hi in etcd, released when
	// the command ends.
	Claim(c *Console, f *StoreFlags, space string, lo, hi int) (store.Claim, error)
}

// errNoEtcd is what --etcd gives where Etcd is not set.
var errNoEtcd = errors.New("--etcd is served by idkit-full, which this build does not hand over to")

// AddStoreFlags defines --log, with defaultLog its default ("" for none),
// --etcd and the flags that go with it on fs.
func AddStoreFlags(fs *flag.FlagSet, defaultLog string) *StoreFlags {
	what := "launch log file that keeps the high-water mark"
	if defaultLog != "" {
		what = "the launch log file"
	}
	f := &StoreFlags{
		fs:         fs,
		log:        fs.String("log", defaultLog, what),
		Endpoints:  fs.String("etcd", "", "etcd endpoints, comma-separated: keep the launch log in etcd and claim nodes there (or $"+EnvEtcdEndpoints+")"),
		Prefix:     fs.String("etcd-prefix", DefaultEtcdPrefix, "prefix of idkit's keys in etcd"),
		Conn:       AddEtcdFlags(fs),
		defaultLog: defaultLog,
	}
	// $IDKIT_ETCD_ENDPOINTS counts as --etcd given before the arguments:
	// the command's checks of --etcd see it, and --etcd replaces it.
	if env := os.Getenv(EnvEtcdEndpoints); env != "" {
		fs.Set("etcd", env)
	}
	return f
}

// addWait adds --wait, which waits for a node that another process holds
// in the launch log.
func (f *StoreFlags) addWait() {
	f.wait = f.fs.Duration("wait", 0, "wait up to this long for a node that another process holds in the launch log, instead of failing at once")
}

// wanted reports whether the command line asks for a store, or the
// command uses one by default.
func (f *StoreFlags) wanted() bool {
	return f.defaultLog != "" || IsSet(f.fs, "log") || IsSet(f.fs, "etcd")
}

// Name says where the store is, for messages.
func (f *StoreFlags) Name() string {
	if IsSet(f.fs, "etcd") {
		return "etcd " + *f.Endpoints
	}
	return *f.log
}

// Hint is the flag that names the store again, for messages that suggest
// another command.
func (f *StoreFlags) Hint() string {
	if IsSet(f.fs, "etcd") {
		return "--etcd " + *f.Endpoints
	}
	return "--log " + *f.log
}

// Open returns the store the flags name, or nil if the command uses none.
func (f *StoreFlags) Open(c *Console) (Store, error) {
	if IsSet(f.fs, "etcd") {
		if IsSet(f.fs, "log") {
			if os.Getenv(EnvEtcdEndpoints) != "" {
				return nil, Usagef("give either --log or --etcd ($%s gives --etcd), not both", EnvEtcdEndpoints)
			}
			return nil, Usagef("give either --log or --etcd, not both")
		}
		if f.wait != nil && IsSet(f.fs, "wait") {
			return nil, Usagef("--wait waits for a node held in the launch log (--log); an etcd claim (--etcd without --node) takes a free node instead")
		}
		if Etcd == nil {
			return nil, errNoEtcd
		}
		return Etcd.Log(c, f)
	}
	var wait time.Duration
	if f.wait != nil {
		if wait = *f.wait; wait < 0 {
			return nil, Usagef("--wait %v is negative", wait)
		}
		if IsSet(f.fs, "wait") && !f.wanted() {
			return nil, Usagef("--wait waits for a node held in the launch log: give --log FILE too")
		}
	}
	if !f.wanted() {
		return nil, nil
	}
	if *f.log == "" {
		return nil, Usagef("--log is empty, want a file path")
	}
	l, err := launchlog.New(launchlog.Options{Path: *f.log, HoldWait: wait, Clock: c.Clock})
	if err != nil {
		return nil, err
	}
	return &commandHolds{Store: l, c: c, held: make(map[string]store.Held)}, nil
}

// Claim claims a node in space from lo to hi through --etcd, released when
// the command ends, which SIGINT and SIGTERM then interrupt.
func (f *StoreFlags) Claim(c *Console, space string, lo, hi int) (store.Claim, error) {
	if Etcd == nil {
		return nil, errNoEtcd
	}
	claim, err := Etcd.Claim(c, f, space, lo, hi)
	if err != nil {
		return nil, err
	}
	interrupted, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	c.Interrupted = interrupted
	c.AtExit(stop)
	return claim, nil
}

// commandHolds is a launch log whose holds last until the command ends:
// a call that reserves its IDs in several batches holds its node from the
// first batch to the last, so that no other process takes the node in
// between. A hold of a key the command holds already returns that hold.
type commandHolds struct {
	Store
	c    *Console
	mu   sync.Mutex
	held map[string]store.Held
}

func (h *commandHolds) Hold(ctx context.Context, key string) (store.Held, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if held, ok := h.held[key]; ok {
		return kept(held), nil
	}
	held, err := h.Store.(store.Holder).Hold(ctx, key)
	if err != nil {
		return nil, err
	}
	h.held[key] = held
	h.c.AtExit(func() { held.Close() })
	return kept(held), nil
}

// Check is the launch log's own (launchlog.Log.Check): whether the file
// this process writes it through is still at its path.
func (h *commandHolds) Check() error {
	if c, ok := h.Store.(interface{ Check() error }); ok {
		return c.Check()
	}
	return nil
}

// kept returns held as a hold that the command releases when it ends, not
// when its user closes it, and that moves several marks at once where
// held does.
func kept(held store.Held) store.Held {
	if b, ok := held.(batchHeld); ok {
		return keptBatch{b}
	}
	return keptHold{held}
}

type batchHeld interface {
	store.Held
	store.BatchAdvancer
}

type keptHold struct{ store.Held }

func (keptHold) Close() error              { return nil }
func (k keptHold) Check(t time.Time) error { return checkHeld(k.Held, t) }
func (k keptHold) Done() <-chan struct{}   { return heldDone(k.Held) }

type keptBatch struct{ batchHeld }

func (keptBatch) Close() error              { return nil }
func (k keptBatch) Check(t time.Time) error { return checkHeld(k.batchHeld, t) }
func (k keptBatch) Done() <-chan struct{}   { return heldDone(k.batchHeld) }

// checkHeld and heldDone pass on what held says of its loss
// (store.Revocable), so that a generator on a kept hold stops at once
// when the hold is lost; a hold that cannot tell is never lost.
func checkHeld(held store.Held, t time.Time) error {
	if r, ok := held.(store.Revocable); ok {
		return r.Check(t)
	}
	return nil
}

func heldDone(held store.Held) <-chan struct{} {
	if r, ok := held.(store.Revocable); ok {
		return r.Done()
	}
	return nil
}
