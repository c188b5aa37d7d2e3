package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdPackage is etcd's own server (etcdmain.Main), at the version of
// idkit's client.
const etcdPackage = "github.com/idkit/idkit/internal/testkit/campaigns/deploy/etcd"

// memberSettings are deploy/etcd.env's settings of a member, beyond its
// name and addresses: every member of the harness's cluster runs with
// them, so that the figures are those of the deployed cluster's tuning
// (TestMemberSettingsAreDeploys holds them to the file).
var memberSettings = map[string]string{
	"ETCD_HEARTBEAT_INTERVAL":        "100",
	"ETCD_ELECTION_TIMEOUT":          "1000",
	"ETCD_SNAPSHOT_COUNT":            "10000",
	"ETCD_AUTO_COMPACTION_MODE":      "revision",
	"ETCD_AUTO_COMPACTION_RETENTION": "1000",
	"ETCD_QUOTA_BACKEND_BYTES":       "2147483648",
	"ETCD_LOG_LEVEL":                 "warn",
}

// buildEtcd builds etcd's server into dir and returns its path. It runs
// the go command in the working directory, which must lie in idkit's
// workspace.
func buildEtcd(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "etcd")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, etcdPackage).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s(run the harness from within idkit's workspace, or pass -etcd)", etcdPackage, err, out)
	}
	return bin, nil
}

// member is one etcd member process.
type member struct {
	name      string
	clientURL string
	logPath   string
	cmd       *exec.Cmd
	exited    chan struct{}
	waitErr   error
}

// cluster is the three etcd members, on 127.0.0.1.
type cluster struct {
	members []*member
}

// startCluster starts three members of a new cluster from the etcd binary
// bin, with their data and logs in dir.
func startCluster(bin, dir string) (*cluster, error) {
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	names := []string{"e1", "e2", "e3"}
	var initial []string
	for i, name := range names {
		initial = append(initial, fmt.Sprintf("%s=http://127.0.0.1:%d", name, ports[2*i+1]))
	}
	c := &cluster{}
	for i, name := range names {
		clientURL := fmt.Sprintf("http://127.0.0.1:%d", ports[2*i])
		env := memberEnv(name, dir, clientURL, fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]), strings.Join(initial, ","))
		m, err := startMember(bin, name, clientURL, filepath.Join(dir, name+".log"), env)
		if err != nil {
			c.stop()
			return nil, err
		}
		c.members = append(c.members, m)
	}
	return c, nil
}

// memberEnv returns the environment of member name of a new cluster:
// memberSettings, and its name, data directory and URLs.
func memberEnv(name, dir, clientURL, peerURL, initialCluster string) map[string]string {
	env := map[string]string{
		"ETCD_NAME":                        name,
		"ETCD_DATA_DIR":                    filepath.Join(dir, name+".etcd"),
		"ETCD_LISTEN_CLIENT_URLS":          clientURL,
		"ETCD_ADVERTISE_CLIENT_URLS":       clientURL,
		"ETCD_LISTEN_PEER_URLS":            peerURL,
		"ETCD_INITIAL_ADVERTISE_PEER_URLS": peerURL,
		"ETCD_INITIAL_CLUSTER":             initialCluster,
		"ETCD_INITIAL_CLUSTER_STATE":       "new",
		"ETCD_INITIAL_CLUSTER_TOKEN":       "idkit-scale",
	}
	for k, v := range memberSettings {
		env[k] = v
	}
	return env
}

// startMember starts one member with env added to the harness's
// environment, less any ETCD_ setting of the harness's own.
func startMember(bin, name, clientURL, logPath string, env map[string]string) (*member, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close() // the child has its own copy
	m := &member{name: name, clientURL: clientURL, logPath: logPath, exited: make(chan struct{})}
	m.cmd = exec.Command(bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			m.cmd.Env = append(m.cmd.Env, kv)
		}
	}
	for k, v := range env {
		m.cmd.Env = append(m.cmd.Env, k+"="+v)
	}
	m.cmd.Stdout, m.cmd.Stderr = log, log
	m.cmd.SysProcAttr = childAttr()
	if err := m.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start etcd member %s: %w", name, err)
	}
	go func() {
		m.waitErr = m.cmd.Wait()
		close(m.exited)
	}()
	return m, nil
}

// freePorts returns n distinct ports on 127.0.0.1 that were free a moment
// ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// endpoints returns the members' client URLs.
func (c *cluster) endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.clientURL)
	}
	return eps
}

// exitedMember returns an error naming a member that exited, if one did.
func (c *cluster) exitedMember() error {
	for _, m := range c.members {
		select {
		case <-m.exited:
			return fmt.Errorf("etcd member %s exited (%v); the end of its log (%s):\n%s", m.name, m.waitErr, m.logPath, tail(m.logPath, 20))
		default:
		}
	}
	return nil
}

// leaderBound is how long the harness waits for the members to agree on
// a leader.
const leaderBound = 30 * time.Second

// waitLeader waits, for at most bound, until every member answers and
// all name the same leader, and returns it. An election in progress, as
// a busy host can cause at any time, is waited out.
func (c *cluster) waitLeader(ctx context.Context, cli *clientv3.Client, bound time.Duration) (*member, error) {
	deadline := time.Now().Add(bound)
	for {
		m, err := c.leader(ctx, cli)
		if err == nil {
			return m, nil
		}
		if merr := c.exitedMember(); merr != nil {
			return nil, merr
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the etcd cluster had no leader that every member names within %v: %w (member logs: %s)",
				bound, err, filepath.Dir(c.members[0].logPath))
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// leader asks every member for its status and returns the member that all
// of them name as leader.
func (c *cluster) leader(ctx context.Context, cli *clientv3.Client) (*member, error) {
	byID := make(map[uint64]*member)
	var leader uint64
	for _, m := range c.members {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := cli.Status(sctx, m.clientURL)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("status of %s: %w", m.name, err)
		}
		switch {
		case st.Leader == 0:
			return nil, fmt.Errorf("%s knows no leader", m.name)
		case leader != 0 && st.Leader != leader:
			return nil, fmt.Errorf("%s names leader %x, another member %x", m.name, st.Leader, leader)
		}
		leader = st.Leader
		byID[st.Header.MemberId] = m
	}
	if m := byID[leader]; m != nil {
		return m, nil
	}
	return nil, fmt.Errorf("the leader %x is none of the members", leader)
}

// status returns m's status.
func (c *cluster) status(ctx context.Context, cli *clientv3.Client, m *member) (*clientv3.StatusResponse, error) {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := cli.Status(sctx, m.clientURL)
	if err != nil {
		return nil, fmt.Errorf("status of etcd member %s: %w", m.name, err)
	}
	return st, nil
}

// cpuTimes returns each member's CPU time so far, user and system.
func (c *cluster) cpuTimes() ([]time.Duration, error) {
	var ts []time.Duration
	for _, m := range c.members {
		t, err := cpuTime(m.cmd.Process.Pid)
		if err != nil {
			return nil, fmt.Errorf("CPU time of etcd member %s: %w", m.name, err)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// clockTicks is the unit of the CPU times in /proc/PID/stat: USER_HZ,
// which Linux fixes at 100 a second for user space.
const clockTicks = 100

// cpuTime returns the CPU time, user and system, that process pid has
// used: utime and stime of /proc/PID/stat.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: count fields
	// from after it. utime and stime are fields 14 and 15 of the line,
	// 12 and 13 after the name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name in %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want 13 or more", pid, len(f))
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// stop ends every member: SIGTERM, and SIGKILL after 10s.
func (c *cluster) stop() error {
	var errs []error
	for _, m := range c.members {
		m.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, m := range c.members {
		select {
		case <-m.exited:
		case <-time.After(10 * time.Second):
			m.cmd.Process.Kill()
			<-m.exited
			errs = append(errs, fmt.Errorf("etcd member %s did not exit within 10s of SIGTERM; killed", m.name))
		}
	}
	return errors.Join(errs...)
}
