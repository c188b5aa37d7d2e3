package fleet

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/store"
)

// sentinels are the errors package fleet promises to wrap (errors.go): its
// own, and launchlog's for the launch log.
var sentinels = []error{
	ErrInvalid, ErrUnavailable, ErrRefused, ErrNoFreeNode, ErrNodeLost, ErrClockSkew, ErrCorrupt, ErrClosed,
	launchlog.ErrInvalid, launchlog.ErrNoLaunch, launchlog.ErrLaunchesExhausted, launchlog.ErrGeneratorsExhausted,
}

func wrapsSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// TestErrorsWrapASentinel walks every exported call of the package through
// the ways it can fail here (a bad argument or option, an ended context,
// a closed client, a lost claim) and checks that each error wraps one of
// the package's sentinels, as errors.go promises.
func TestErrorsWrapASentinel(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 1)
	prefix := fleettest.Prefix(t, c.Client())
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()})
	require.NoError(t, err)
	l, err := NewLog(LogOptions{Client: cli, Prefix: prefix})
	require.NoError(t, err)
	co := ClaimOptions{Client: cli, Prefix: prefix, Max: 3}
	held, err := ClaimNode(context.Background(), co)
	require.NoError(t, err)
	lost, err := ClaimNode(context.Background(), co)
	require.NoError(t, err)
	require.NoError(t, lost.Close())
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	bg := context.Background()

	calls := map[string]func() error{
		"NewLog without a client": func() error { _, err := NewLog(LogOptions{}); return err },
		"NewLog negative timeout": func() error { _, err := NewLog(LogOptions{Client: cli, Timeout: -1}); return err },
		"ClaimNode bad options":   func() error { _, err := ClaimNode(bg, ClaimOptions{Client: cli, Min: 2, Max: 1}); return err },
		"ClaimNode ended context": func() error { _, err := ClaimNode(ended, co); return err },
		"ClaimNode range full": func() error {
			_, err := ClaimNode(bg, ClaimOptions{Client: cli, Prefix: prefix, Min: held.Node(), Max: held.Node()})
			return err
		},
		"Get no launch": func() error { _, err := l.Get(context.Background(), 99999); return err },
		"Get bad id":    func() error { _, err := l.Get(context.Background(), -1); return err },
		"Begin bad info": func() error {
			_, err := l.Begin(context.Background(), store.Info{Ticket: string(make([]byte, 1<<20))})
			return err
		},
		"NextGenerator bad launch": func() error { _, err := l.NextGenerator(bg, -1); return err },
		"NextGenerator ended":      func() error { _, err := l.NextGenerator(ended, 1); return err },
		"HighWater bad key":        func() error { _, err := l.HighWater(bg, ""); return err },
		"HighWater ended":          func() error { _, err := l.HighWater(ended, "k"); return err },
		"AdvanceHighWater bad time": func() error {
			_, err := l.AdvanceHighWater(bg, "k", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
			return err
		},
		"AdvanceHighWater ended":        func() error { _, err := l.AdvanceHighWater(ended, "k", time.Now()); return err },
		"ReserveBlock bad tag":          func() error { _, err := l.ReserveBlock(bg, "bad tag", 1); return err },
		"ReserveBlock bad step":         func() error { _, err := l.ReserveBlock(bg, "t", 0); return err },
		"ReserveBlock ended":            func() error { _, err := l.ReserveBlock(ended, "t", 1); return err },
		"Claim.HighWater closed":        func() error { _, err := lost.HighWater(bg, "k"); return err },
		"Claim.AdvanceHighWater closed": func() error { _, err := lost.AdvanceHighWater(bg, "k", time.Now()); return err },
		"Claim.HighWater bad key":       func() error { _, err := held.HighWater(bg, ""); return err },
		"Claim.HighWater ended":         func() error { _, err := held.HighWater(ended, "k"); return err },
		"Claim.Check closed":            func() error { return lost.Check(time.Now()) },
		"Nodes ended":                   func() error { _, err := Nodes(ended, cli, prefix, 0); return err },
	}
	run := func(name string, call func() error) {
		err := call()
		if assert.Error(t, err, name) {
			assert.True(t, wrapsSentinel(err), "%s: %v wraps no sentinel of fleet or launchlog", name, err)
			if strings.HasSuffix(name, " closed") {
				assert.ErrorIs(t, err, ErrClosed, "%s: every call of a closed claim", name)
			}
		}
	}
	for name, call := range calls {
		run(name, call)
	}

	// With the client closed, every call that talks to etcd.
	require.NoError(t, held.Close())
	require.NoError(t, cli.Close())
	for name, op := range logOps(l) {
		run("closed client: "+name, op)
	}
	run("closed client: ReserveBlock", func() error { _, err := l.ReserveBlock(bg, "t", 1); return err })
	run("closed client: ClaimNode", func() error { _, err := ClaimNode(bg, co); return err })
	run("closed client: Nodes", func() error { _, err := Nodes(bg, cli, prefix, 0); return err })
}
