//go:build linux

package deploy

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/internal/testkit/testcert"
)

// The environment of TestDeployedFleet: how long its fault schedule runs,
// the seed that draws it, a file for its report, and a directory for the
// processes' data and logs that outlives the run, and the fault kinds to
// draw from (a comma-separated list of parts of their names; all of them
// by default).
const (
	envDuration = "IDKIT_DEPLOY_DURATION"
	envSeed     = "IDKIT_DEPLOY_SEED"
	envReport   = "IDKIT_DEPLOY_REPORT"
	envLogs     = "IDKIT_DEPLOY_DIR"
	envFaults   = "IDKIT_DEPLOY_FAULTS"
)

// claimTTL is the serve processes' claim TTL: the fleet's default.
const claimTTL = 10 * time.Second

// TestDeployedFleet runs the deployed topology (see the package comment)
// under a fault schedule drawn from a printed seed, with clients over
// HTTP/JSON and gRPC through HAProxy. It fails on any ID given out twice,
// and on a 2/1 split in which the minority's serve processes do not stop
// within the claim TTL or the majority's do not stay ready.
func TestDeployedFleet(t *testing.T) {
	d := os.Getenv(envDuration)
	if d == "" {
		t.Skipf("set %s (such as 5m) to run the deployed fleet; .ci/run runs it as a step of its own", envDuration)
	}
	duration, err := time.ParseDuration(d)
	require.NoError(t, err, envDuration)
	require.NoError(t, Available(), "the deployed fleet cannot run here")
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(envSeed); s != "" {
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, envSeed)
	}
	t.Logf("seed %d (%s=%d repeats the schedule), %v", seed, envSeed, seed, duration)

	dir := t.TempDir()
	if logs := os.Getenv(envLogs); logs != "" {
		dir = logs // kept after the run, for a look at every process's log
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	bin := programs(t)
	token := make([]byte, 16)
	rand.Read(token)

	ctx := t.Context()
	f, err := Start(ctx, Config{
		Dir: dir, DeployDir: deployDir,
		Etcd: filepath.Join(bin, "etcd"), Etcdctl: filepath.Join(bin, "etcdctl"), Idkit: filepath.Join(bin, "idkit-full"),
		CA: testcert.NewCA(t), Token: hex.EncodeToString(token), UID: dynamicUID,
	})
	require.NoError(t, err, "starting the fleet")
	defer func() {
		if t.Failed() {
			for _, name := range []string{"e1", "e2", "e3", "s1", "s2", "s3", "s4", "lb1", "lb2"} {
				b, _ := os.ReadFile(filepath.Join(dir, name+".log"))
				t.Logf("%s's log, the end:\n%s", name, tail(string(b), 3000))
			}
		}
		assert.NoError(t, f.Close(), "stopping the fleet")
	}()

	checkEtcdAccess(t, f)

	rec := NewRecorder()
	clients, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i, grpc := range []bool{false, false, true, true} {
		c := &Client{
			Name:  fmt.Sprintf("client %d (%s)", i+1, map[bool]string{false: "HTTP", true: "gRPC"}[grpc]),
			Bases: f.Bases, First: i, GRPC: grpc, Token: f.Token, TLS: f.TLS(),
			N: 20, Pause: 5 * time.Millisecond, Timeout: 1500 * time.Millisecond, Recorder: rec,
		}
		wg.Go(func() { c.Run(clients) })
	}

	run, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	began := time.Now()
	sched := &Schedule{
		Seed: seed, Hold: 12 * time.Second, Settle: 5 * time.Second, Logf: t.Logf,
		During: func(ctx context.Context, w Window) error {
			if w.Kind != "2/1 split" {
				sleep(ctx, 12*time.Second)
				return nil
			}
			return CheckSplit(context.WithoutCancel(ctx), f, w.Start, claimTTL, 2*claimTTL+5*time.Second, f.Token)
		},
	}
	if only := os.Getenv(envFaults); only != "" {
		for _, fault := range Faults {
			for part := range strings.SplitSeq(only, ",") {
				if strings.Contains(fault.Kind, part) {
					sched.Faults = append(sched.Faults, fault)
					break
				}
			}
		}
		require.NotEmpty(t, sched.Faults, "%s=%s names no fault kind", envFaults, only)
	}
	windows, err := sched.Run(run, f)
	stop()
	wg.Wait()
	require.NoError(t, err, "the fault schedule")

	dups := rec.Duplicates()
	assert.Empty(t, dups, "IDs given out twice")
	total := rec.Requests(began, time.Now())
	share, p99 := Availability(total)
	t.Logf("%d IDs in %d requests, %.2f%% answered, p99 %v; %d fault windows", rec.IDs(), len(total), 100*share, p99, len(windows))
	assert.Greater(t, rec.IDs(), 10_000, "the clients were given IDs")

	for _, w := range windows {
		share, p99 := Availability(rec.Requests(w.Start, w.Settled))
		t.Logf("%s to %s: %s on %s: %.2f%% answered, p99 %v", w.Start.UTC().Format("15:04:05"), w.Settled.UTC().Format("15:04:05"),
			w.Kind, w.Target, 100*share, p99.Round(time.Millisecond))
	}
	report := reportTable(seed, duration, rec, windows, began)
	t.Log("\n" + report)
	if path := os.Getenv(envReport); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(report), 0o644))
	}
	for _, w := range windows {
		if strings.HasPrefix(w.Kind, "load balancer") {
			// Clients that know both load balancers ask the other one.
			share, _ := Availability(rec.Requests(w.Start, w.Settled))
			assert.GreaterOrEqual(t, share, 0.99, "availability with %s on %s, the clients retrying on the other", w.Kind, w.Target)
		}
		if w.Kind == "2/1 split" {
			// After the TTL the minority has left the rotation: requests
			// through the load balancer reach the majority.
			share, _ := Availability(rec.Requests(w.Start.Add(claimTTL+2*time.Second), w.Healed))
			assert.GreaterOrEqual(t, share, 0.99, "availability during the 2/1 split after the claim TTL")
		}
	}
}

// reportTable summarises a run: per fault kind, the windows, requests,
// the share answered and the p99 latency, from a fault's start to the end
// of its settling time.
func reportTable(seed uint64, d time.Duration, rec *Recorder, windows []Window, began time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Seed %d, %v, %d IDs, %d duplicates.\n\n", seed, d.Round(time.Second), rec.IDs(), len(rec.Duplicates()))
	fmt.Fprintln(&b, "| fault | windows | requests | answered | p99 |")
	fmt.Fprintln(&b, "|---|---|---|---|---|")
	byKind := make(map[string][]Request)
	count := make(map[string]int)
	var kinds []string
	for _, w := range windows {
		if count[w.Kind] == 0 {
			kinds = append(kinds, w.Kind)
		}
		count[w.Kind]++
		byKind[w.Kind] = append(byKind[w.Kind], rec.Requests(w.Start, w.Settled)...)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		share, p99 := Availability(byKind[k])
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f%% | %v |\n", k, count[k], len(byKind[k]), 100*share, p99.Round(time.Millisecond))
	}
	all := rec.Requests(began, time.Now())
	share, p99 := Availability(all)
	fmt.Fprintf(&b, "| all of the run | | %d | %.2f%% | %v |\n", len(all), 100*share, p99.Round(time.Millisecond))
	return b.String()
}

// dynamicUID is the user the serve processes run as, as a DynamicUser
// service's (systemd picks one from 61184 to 65519).
const dynamicUID = 61234

// programs builds etcd, etcdctl and idkit-full into a directory that the
// serve processes' user may read, and returns it.
func programs(t *testing.T) string {
	bin, err := os.MkdirTemp("", "idkit-deploy-bin-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(bin) })
	require.NoError(t, os.Chmod(bin, 0o755))
	build(t, filepath.Join(bin, "etcd"), "./etcd")
	build(t, filepath.Join(bin, "etcdctl"), "./etcdctl")
	build(t, filepath.Join(bin, "idkit-full"), "github.com/idkit/idkit/cmd/idkit/idkit-full")
	return bin
}

// checkEtcdAccess checks what deploy/etcd.env and etcd-auth.sh promise:
// a client without a certificate of the fleet's CA is refused, and
// idkit's servers (CN=idkit) may write under idkit/ only, and may not
// read the users.
func checkEtcdAccess(t *testing.T, f *Fleet) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	idkit, err := f.EtcdClientAs("idkit")
	require.NoError(t, err)
	defer idkit.Close()
	_, err = idkit.Put(ctx, "idkit/deploy-check", "1")
	require.NoError(t, err, "idkit's certificate writes under idkit/")
	_, err = idkit.Put(ctx, "other/deploy-check", "1")
	assert.ErrorContains(t, err, "permission denied", "idkit's certificate writing outside idkit/")
	_, err = idkit.Get(ctx, "other/", clientv3.WithPrefix())
	assert.ErrorContains(t, err, "permission denied", "idkit's certificate reading outside idkit/")
	_, err = idkit.UserList(ctx)
	assert.ErrorContains(t, err, "permission denied", "idkit's certificate listing etcd's users")

	anon, err := f.EtcdClientAs("")
	require.NoError(t, err)
	defer anon.Close()
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort()
	_, err = anon.Get(short, "idkit/deploy-check")
	assert.Error(t, err, "a client without a certificate")

	// The peer port takes the members' certificates alone: idkit's,
	// signed by the same CA and without an address of its own for the
	// port to check the connection against, is refused by its name.
	pair, err := tls.LoadX509KeyPair(filepath.Join(f.secretsDir(), "etcd.crt"), filepath.Join(f.secretsDir(), "etcd.key"))
	require.NoError(t, err)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: f.CA.Pool(), Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(f.peerURL(f.Net.Host("e1")) + "/members")
	if err == nil {
		resp.Body.Close()
	}
	assert.Error(t, err, "idkit's certificate on a member's peer port, answered %v", resp)
	b, _ := os.ReadFile(filepath.Join(f.Dir, "e1.log"))
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, "peer endpoint") {
			t.Logf("e1: %s", line)
		}
	}
}

func build(t *testing.T, out, pkg string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the harness builds its programs with the go command")
	b, err := exec.Command(goTool, "build", "-o", out, pkg).CombinedOutput()
	require.NoError(t, err, "go build %s: %s", pkg, b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
