package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
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
	Begin(launchlog.Info) (launchlog.Launch, error)
	Get(id int) (launchlog.Launch, error)
	Current() (launchlog.Launch, error)
	List() ([]launchlog.Launch, error)
	idstore.HighWater
	idstore.Generators
	segment.BlockStore
}

// etcdTimeout bounds each request to etcd from the command line.
const etcdTimeout = 5 * time.Second

// storeFlags are --log FILE and --etcd ENDPOINTS, of which a command takes
// one: where launches, generator ids and high-water marks live.
type storeFlags struct {
	fs         *flag.FlagSet
	log        *string
	etcd       *string
	prefix     *string
	defaultLog string // "" if the command uses no store unless asked
}

func addStoreFlags(fs *flag.FlagSet, defaultLog string) *storeFlags {
	what := "launch log file that keeps the high-water mark"
	if defaultLog != "" {
		what = "the launch log file"
	}
	return &storeFlags{
		fs:         fs,
		log:        fs.String("log", defaultLog, what),
		etcd:       fs.String("etcd", "", "etcd endpoints, comma-separated: keep the launch log in etcd and claim nodes there"),
		prefix:     fs.String("etcd-prefix", fleet.DefaultPrefix, "prefix of idkit's keys in etcd"),
		defaultLog: defaultLog,
	}
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
			return nil, usagef("give either --log or --etcd, not both")
		}
		cli, err := c.etcd(*f.etcd)
		if err != nil {
			return nil, err
		}
		return fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: *f.prefix, Timeout: etcdTimeout, Clock: c.clock})
	}
	if !f.wanted() {
		return nil, nil
	}
	if *f.log == "" {
		return nil, usagef("--log is empty, want a file path")
	}
	return launchlog.New(launchlog.Options{Path: *f.log, Clock: c.clock})
}

// claim claims a node in space from lo to hi through --etcd, released when
// the command ends.
func (f *storeFlags) claim(c *console, space string, lo, hi int) (*fleet.Claim, error) {
	cli, err := c.etcd(*f.etcd)
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

// etcd returns a client of endpoints, closed when the command ends.
func (c *console) etcd(endpoints string) (*clientv3.Client, error) {
	var eps []string
	for _, ep := range strings.Split(endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			eps = append(eps, ep)
		}
	}
	if len(eps) == 0 {
		return nil, usagef("--etcd %q names no endpoint, want host:port[,host:port...]", endpoints)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: etcdTimeout, Logger: quietLogger()})
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", endpoints, err)
	}
	c.atExit(func() { cli.Close() })
	return cli, nil
}
