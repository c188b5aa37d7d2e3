package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// The launch log and node claims on a real etcd, from the command
// line.
func TestFleetCommands(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	cli := cluster.Client()
	ep := cluster.Endpoint(0)
	prefix := fleettest.Prefix(t, cli)
	etcd := []string{"--etcd", ep, "--etcd-prefix", prefix}
	with := func(args ...string) []string { return append(args, etcd...) }

	code, _, stderr := clitest.Run(with("launch", "current")...)
	require.Equal(t, 1, code)
	assert.Contains(t, stderr, "no launch in etcd "+ep+" yet; record one with 'idkit launch begin --etcd "+ep+"'")

	code, stdout, stderr := clitest.Run(with("launch", "begin", "--ticket", "REL-7")...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "1\n", stdout)
	code, stdout, stderr = clitest.Run(with("launch", "current", "--json")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"ticket":"REL-7"`)

	code, stdout, stderr = clitest.Run(with("new", "decimalid", "-n", "2")...)
	require.Equal(t, 0, code, stderr)
	code2, stdout2, stderr := clitest.Run(with("new", "decimalid", "-n", "2")...)
	require.Equal(t, 0, code2, stderr)
	gens := map[int]bool{}
	for _, line := range strings.Fields(stdout + stdout2) {
		id, err := decimalid.Parse(line)
		require.NoError(t, err)
		assert.Equal(t, 1, id.Launch())
		gens[id.Generator()] = true
	}
	assert.Len(t, gens, 2, "each call takes its own generator id from etcd")
	code, stdout, stderr = clitest.Run(with("inspect", "decimalid", strings.Fields(stdout2)[0])...)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `ticket\s+REL-7`, stdout, "the launch's record from etcd")

	// A node held elsewhere: the command claims the next one, and nodes
	// lists both while the command runs.
	held, err := fleet.ClaimNode(context.Background(), fleet.ClaimOptions{Client: cli, Prefix: prefix, Space: "traceid", Max: traceid.MaxNode})
	require.NoError(t, err)
	defer held.Close()
	fake := clock.NewFake(time.Now())
	code, stdout, stderr = clitest.RunOn(fake, 100*time.Millisecond, with("new", "traceid", "-n", "3")...)
	require.Equal(t, 0, code, stderr)
	for _, line := range strings.Fields(stdout) {
		id, err := traceid.Parse(line)
		require.NoError(t, err)
		assert.Equal(t, 1, id.Node(), "node 0 is held, so the command claims node 1")
	}

	code, stdout, stderr = clitest.RunOn(fake, 100*time.Millisecond, with("new", "snowflake", "--datacenter", "2")...)
	require.Equal(t, 0, code, stderr)
	id, err := snowflake.Parse(strings.TrimSpace(stdout))
	require.NoError(t, err)
	p, err := snowflake.Twitter().Decode(id)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"datacenter": 2, "worker": 0}, p.Node, "datacenter fixed, worker claimed")

	code, stdout, stderr = clitest.Run("nodes", "--etcd", ep, "--etcd-prefix", prefix, "--json")
	require.Equal(t, 0, code, stderr)
	var nodes []fleet.NodeInfo
	require.NoError(t, json.Unmarshal([]byte(stdout), &nodes))
	require.Len(t, nodes, 1, "the commands released their claims: %s", stdout)
	assert.Equal(t, "traceid", nodes[0].Space)
	assert.Equal(t, 0, nodes[0].Node)
	code, stdout, stderr = clitest.Run("nodes", "--etcd", ep, "--etcd-prefix", prefix)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "SPACE")
	assert.Contains(t, stdout, "traceid")
}

func TestFleetUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"nodes"},
		{"new", "traceid"},
		{"launch", "begin", "--log", "x.db", "--etcd", "127.0.0.1:1"},
		{"new", "traceid", "--etcd", " , "},
		{"new", "snowflake", "--etcd", "127.0.0.1:1", "--worker", "3"},
	} {
		code, _, stderr := clitest.Run(args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		clitest.AssertOneLine(t, stderr, args)
	}
}

// idkit names the fleet's default prefix without linking the fleet.
func TestDefaultEtcdPrefixIsTheFleets(t *testing.T) {
	assert.Equal(t, fleet.DefaultPrefix, cli.DefaultEtcdPrefix)
}
