package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/logutil"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap/zapcore"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/traceid"
)

// space is the fleet space every holder claims its node in: traceid's.
const space = "traceid"

// countsEvery is how often a holder process prints its counters.
const countsEvery = 2 * time.Second

// holderLine is one line that a holder process prints on stdout: Claimed
// once, when every claim is made, then Counts every countsEvery.
type holderLine struct {
	Claimed *claimedLine `json:"claimed,omitempty"`
	Counts  *countsLine  `json:"counts,omitempty"`
}

// claimedLine says which nodes a holder process holds, how long each
// fleet.ClaimNode call that took them took, in order, and how many
// attempts to start a holder failed and were tried again.
type claimedLine struct {
	PID     int     `json:"pid"`
	Nodes   []int   `json:"nodes"`
	ClaimNS []int64 `json:"claim_ns"`
	Retries int     `json:"retries"`
}

// countsLine holds a holder process's cumulative counters at Time (Unix
// nanoseconds): etcd requests by kind, the failed ones among them, the
// latency histograms of writes and of keep-alives, the IDs issued, the
// errors issuing them, the claims lost, and the last such error.
type countsLine struct {
	PID       int               `json:"pid"`
	Time      int64             `json:"t"`
	Requests  map[string]uint64 `json:"requests"`
	Failed    map[string]uint64 `json:"failed,omitempty"`
	Writes    histogram         `json:"writes"`
	KeepAlive histogram         `json:"keep_alive"`
	IDs       uint64            `json:"ids"`
	IDErrors  uint64            `json:"id_errors"`
	IDUnavail uint64            `json:"id_unavailable"` // of IDErrors, those of idkit.ErrUnavailable
	Lost      uint64            `json:"lost"`
	LastError string            `json:"last_error,omitempty"`
}

// checkLeaseMode checks -lease for a mode that claimSetup builds.
func checkLeaseMode(mode string) error {
	switch mode {
	case "per-claim", "per-process":
		return nil
	}
	return fmt.Errorf("-lease %q: want per-claim or per-process", mode)
}

// claimSetup returns the options that each claim of a holder process is
// made with under lease mode mode, given the options common to both
// modes, and a function that ends what it set up, called once all the
// process's claims are closed. per-claim: each claim has a lease of its
// own, renewed on its own. per-process: one lease for all of the
// process's claims, renewed once.
func claimSetup(ctx context.Context, mode string, o fleet.ClaimOptions) (fleet.ClaimOptions, func() error, error) {
	switch mode {
	case "per-claim":
		return o, func() error { return nil }, nil
	case "per-process":
		s, err := fleet.NewSession(ctx, fleet.SessionOptions{Client: o.Client, TTL: o.TTL, Interval: o.Interval, Logger: o.Logger})
		if err != nil {
			return o, nil, err
		}
		return fleet.ClaimOptions{Session: s, Space: o.Space, Min: o.Min, Max: o.Max}, s.Close, nil
	}
	return o, nil, checkLeaseMode(mode)
}

// newClient returns an etcd client of endpoints that logs errors only:
// the retries that it would log as warnings show in the counters, as
// latency and failures, or in the harness's waits.
func newClient(endpoints []string) (*clientv3.Client, error) {
	log, err := logutil.CreateDefaultZapLogger(zapcore.ErrorLevel)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	return cli, nil
}

// holder is one claimed node and the generator that issues on it.
type holder struct {
	claim *fleet.Claim
	gen   *traceid.Generator
}

// newHolder claims a node and starts a generator on it. It returns how
// long the fleet.ClaimNode call took.
func newHolder(ctx context.Context, o fleet.ClaimOptions, markLease time.Duration) (holder, time.Duration, error) {
	start := time.Now()
	c, err := fleet.ClaimNode(ctx, o)
	d := time.Since(start)
	if err != nil {
		return holder{}, d, fmt.Errorf("claim: %w", err)
	}
	g, err := traceid.New(ctx, traceid.Options{Claim: c, Lease: markLease})
	if err != nil {
		c.Close()
		return holder{}, d, fmt.Errorf("traceid generator on node %d: %w", c.Node(), err)
	}
	return holder{claim: c, gen: g}, d, nil
}

// runHolder is a holder process: it claims cfg.perProcess nodes, one after
// another, runs a traceid generator on each that issues one ID every
// cfg.every, and prints its lines on stdout until ctx is done. Then it
// closes every generator and claim.
func runHolder(ctx context.Context, cfg config, stdout, stderr io.Writer) (err error) {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cli, err := newClient(strings.Split(cfg.endpoints, ","))
	if err != nil {
		return err
	}
	defer cli.Close()
	reqs := newCounter()
	countRequests(cli, reqs, fleet.DefaultPrefix)

	o, endSetup, err := claimSetup(ctx, cfg.lease, fleet.ClaimOptions{
		Client: cli, Space: space, Max: traceid.MaxNode, TTL: cfg.ttl, Interval: cfg.interval, Logger: log,
	})
	if err != nil {
		return err
	}
	var holders []holder
	defer func() {
		for _, h := range holders {
			h.gen.Close()
			if cerr := h.claim.Close(); cerr != nil {
				log.Warn("close claim", "node", h.claim.Node(), "err", cerr)
			}
		}
		if eerr := endSetup(); eerr != nil && err == nil {
			err = eerr
		}
	}()

	// Claims are spread over one renewal interval, so that their renewals
	// are spread as those of independent holders would be, not bunched.
	// A holder that fails to start for want of an answer from etcd, or
	// loses its claim meanwhile, is tried again, as a process that wants
	// its node would.
	claimed := claimedLine{PID: os.Getpid()}
	pace := renewInterval(cfg.ttl, cfg.interval) / time.Duration(cfg.perProcess)
	start := time.Now()
	for k := range cfg.perProcess {
		if err := sleep(ctx, time.Until(start.Add(time.Duration(k)*pace))); err != nil {
			return err
		}
		for {
			h, d, err := newHolder(ctx, o, cfg.markLease)
			if err == nil {
				holders = append(holders, h)
				claimed.Nodes = append(claimed.Nodes, h.claim.Node())
				claimed.ClaimNS = append(claimed.ClaimNS, int64(d))
				break
			}
			if !errors.Is(err, idkit.ErrUnavailable) && !errors.Is(err, idkit.ErrNodeLost) {
				return fmt.Errorf("holder %d of %d: %w", k+1, cfg.perProcess, err)
			}
			claimed.Retries++
			log.Warn("holder failed to start; trying again in a second", "holder", k+1, "err", err)
			if err := sleep(ctx, time.Second); err != nil {
				return err
			}
		}
	}
	enc := json.NewEncoder(stdout)
	if err := enc.Encode(holderLine{Claimed: &claimed}); err != nil {
		return err
	}

	var ids idCounter
	var wg sync.WaitGroup
	for _, h := range holders {
		wg.Go(func() { issue(ctx, h.gen, cfg.every, &ids) })
		wg.Go(func() { watchLoss(ctx, h.claim, &ids) })
	}
	defer wg.Wait() // before the generators and claims close
	tick := time.NewTicker(countsEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		requests, failed, writes, keepAlive := reqs.snapshot()
		line := countsLine{
			PID: claimed.PID, Time: time.Now().UnixNano(),
			Requests: requests, Failed: failed, Writes: writes, KeepAlive: keepAlive,
			IDs: ids.issued.Load(), IDErrors: ids.errors.Load(), IDUnavail: ids.unavailable.Load(), Lost: ids.lost.Load(), LastError: ids.last(),
		}
		if err := enc.Encode(holderLine{Counts: &line}); err != nil {
			return err
		}
	}
}

// issue takes one ID from g every period, the first at a random offset
// within it, until ctx is done, and counts them in ids.
func issue(ctx context.Context, g *traceid.Generator, every time.Duration, ids *idCounter) {
	next := time.Now().Add(rand.N(every))
	for sleep(ctx, time.Until(next)) == nil {
		if _, err := g.NextContext(ctx); err == nil {
			ids.issued.Add(1)
		} else if ctx.Err() == nil {
			ids.fail(err)
		}
		next = next.Add(every)
	}
}

// watchLoss counts c in ids if it is lost before ctx is done.
func watchLoss(ctx context.Context, c *fleet.Claim, ids *idCounter) {
	select {
	case <-ctx.Done():
	case <-c.Done():
		if ctx.Err() == nil {
			ids.lose(c.Check(time.Now()))
		}
	}
}

// sleep waits for d, or until ctx is done, and returns ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
