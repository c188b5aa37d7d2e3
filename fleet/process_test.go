package fleet_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

// The child process of the tests below: this test binary run again with
// IDKIT_FLEET_CHILD set to "issue" or "hold".
const childEnv = "IDKIT_FLEET_CHILD"

// childTTL is the lease of the children's claims: the default, whose
// renewals have room to be late on a machine loaded by many processes.
const childTTL = fleet.DefaultTTL

// TestFleetChild is not a test: it is the child process's body.
func TestFleetChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("the body of a child process of TestProcessesShareOneEtcd and TestKilledHolderFreesNodeAfterTTL")
	}
	if err := runChild(mode); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runChild claims a node on the etcd named by the environment and then
// issues IDs ("issue") or holds the node until killed ("hold").
func runChild(mode string) error {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{os.Getenv("IDKIT_FLEET_ENDPOINT")}, DialTimeout: 10 * time.Second, Logger: zap.NewNop(),
	})
	if err != nil {
		return err
	}
	defer cli.Close()
	prefix := os.Getenv("IDKIT_FLEET_PREFIX")
	claim, err := fleet.ClaimNode(context.Background(), fleet.ClaimOptions{
		Client: cli, Prefix: prefix, Space: "traceid", Max: traceid.MaxNode, TTL: childTTL, Timeout: 10 * time.Second,
	})
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fmt.Fprintf(out, "claimed %d\n", claim.Node())
	out.Flush()
	if mode == "hold" {
		select {} // until SIGKILL
	}
	// Issue once the parent says every child holds its node.
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("wait for the parent: %w", err)
	}
	log, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: prefix, Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	tg, err := traceid.New(context.Background(), traceid.Options{Claim: claim})
	if err != nil {
		return err
	}
	launch, _ := strconv.Atoi(os.Getenv("IDKIT_FLEET_LAUNCH"))
	dg, err := decimalid.New(context.Background(), decimalid.Options{Launch: launch, Source: log})
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(os.Getenv("IDKIT_FLEET_N"))
	for range n {
		t, err := tg.Next()
		if err != nil {
			return err
		}
		d, err := dg.Next()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "t %d\nd %d\n", t, d)
	}
	return claim.Close()
}

// child starts this test binary as a child process in mode. Its standard
// input is the returned writer: an "issue" child waits for a line there
// after it has claimed its node.
func child(t *testing.T, mode, endpoint, prefix string, env ...string) (*exec.Cmd, *bufio.Scanner, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFleetChild$")
	cmd.Env = append(os.Environ(), append(env, childEnv+"="+mode, "IDKIT_FLEET_ENDPOINT="+endpoint, "IDKIT_FLEET_PREFIX="+prefix)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(stdout), stdin
}

// Four processes claim nodes, all four held at once, then issue TraceIds
// on them and DecimalIds in one launch, through one etcd: four distinct
// nodes, and no ID twice.
func TestProcessesShareOneEtcd(t *testing.T) {
	t.Parallel()
	const procs, perProc = 4, 20_000
	cluster := fleettest.Start(t, 1)
	cli := cluster.Client()
	prefix := fleettest.Prefix(t, cli)
	log, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: prefix})
	require.NoError(t, err)
	launch, err := log.Begin(context.Background(), store.Info{Ticket: "REL-1"})
	require.NoError(t, err)

	type result struct {
		node        int
		trace, decs []int64
		err         error
	}
	results := make([]result, procs)
	var wg sync.WaitGroup
	var goes []io.WriteCloser
	for i := range procs {
		cmd, lines, stdin := child(t, "issue", cluster.Endpoint(0), prefix,
			"IDKIT_FLEET_LAUNCH="+strconv.Itoa(launch.ID), "IDKIT_FLEET_N="+strconv.Itoa(perProc))
		claimed := make(chan error, 1)
		go func() {
			if !lines.Scan() {
				claimed <- fmt.Errorf("no line: %w", errors.Join(lines.Err(), cmd.Wait()))
				return
			}
			_, err := fmt.Sscanf(lines.Text(), "claimed %d", &results[i].node)
			claimed <- err
		}()
		require.NoError(t, testwait.Recv(t, claimed, fmt.Sprintf("process %d's claim", i)), "process %d", i)
		goes = append(goes, stdin)
		wg.Go(func() {
			r := &results[i]
			for lines.Scan() {
				kind, v, _ := strings.Cut(lines.Text(), " ")
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					r.err = fmt.Errorf("line %q", lines.Text())
					return
				}
				switch kind {
				case "claimed":
					r.node = int(n)
				case "t":
					r.trace = append(r.trace, n)
				case "d":
					r.decs = append(r.decs, n)
				}
			}
			r.err = errors.Join(lines.Err(), cmd.Wait())
		})
	}
	for _, stdin := range goes { // every process holds its node: issue
		_, err := io.WriteString(stdin, "go\n")
		require.NoError(t, err)
	}
	waitFor(t, &wg, 5*time.Minute, "the processes' IDs")
	seen := map[int64]int{}
	nodes := map[int]bool{}
	for i, r := range results {
		require.NoError(t, r.err, "process %d", i)
		require.Len(t, r.trace, perProc)
		require.Len(t, r.decs, perProc)
		require.False(t, nodes[r.node], "node %d claimed by two processes", r.node)
		nodes[r.node] = true
		for j, id := range append(r.trace, r.decs...) {
			if p, dup := seen[id]; dup {
				t.Fatalf("ID %d issued by process %d and %d", id, p, i)
			}
			seen[id] = i
			if j < perProc {
				assert.Equal(t, r.node, traceid.ID(id).Node())
			}
		}
	}
	assert.Len(t, seen, 2*procs*perProc)
}

// A holder killed with SIGKILL frees its node when its lease runs out,
// and not before: no earlier than a TTL after its last keep-alive. The
// test kills the holder just after it rewrote its clock record, which it
// does right after each acknowledged keep-alive. The holder's TTL is the
// default, 10s, so that its record outlives MaxSkew: the successor, in
// this process, checks its clock against the holders' as every claimer
// does, and is told only that the node is not free until it is, never
// that its clock is off.
func TestKilledHolderFreesNodeAfterTTL(t *testing.T) {
	t.Parallel()
	const ttl = childTTL
	cluster := fleettest.Start(t, 1)
	cli := cluster.Client()
	prefix := fleettest.Prefix(t, cli)
	cmd, lines, _ := child(t, "hold", cluster.Endpoint(0), prefix)
	scanned := make(chan bool, 1)
	go func() { scanned <- lines.Scan() }()
	require.True(t, testwait.Recv(t, scanned, "line of the child's claim"), "the child claims a node")
	node, err := strconv.Atoi(strings.TrimPrefix(lines.Text(), "claimed "))
	require.NoError(t, err, lines.Text())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watch := cli.Watch(ctx, prefix+"holders/", clientv3.WithPrefix())
	for renewed := false; !renewed; {
		resp, ok := <-watch
		require.True(t, ok, "no renewal of node %d within 30s", node)
		require.NoError(t, resp.Err())
		for _, ev := range resp.Events {
			renewed = renewed || ev.Type == mvccpb.PUT
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	killed := time.Now()

	o := fleet.ClaimOptions{Client: cli, Prefix: prefix, Space: "traceid", Min: node, Max: node}
	for attempts := 1; ; attempts++ {
		c, err := fleet.ClaimNode(ctx, o)
		if errors.Is(err, fleet.ErrNoFreeNode) {
			// etcd expires leases on a timer of its own, up to about a
			// second late on a loaded machine: 5s more is ample.
			require.Less(t, time.Since(killed), ttl+5*time.Second, "node %d still held well after the TTL", node)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		require.NoError(t, err, "attempt %d, %v after SIGKILL", attempts, time.Since(killed))
		freed := time.Since(killed)
		c.Close()
		t.Logf("node %d free %v after SIGKILL (TTL %v), claimed at attempt %d", node, freed, ttl, attempts)
		assert.GreaterOrEqual(t, freed, ttl-250*time.Millisecond, "freed sooner than a TTL after the last keep-alive")
		return
	}
}
