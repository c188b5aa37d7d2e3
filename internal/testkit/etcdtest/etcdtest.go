// Package etcdtest starts real etcd servers inside a test process: one
// member or a small cluster on free loopback ports, with data in the test's
// temporary directory, and a loopback proxy that a test can cut to model a
// client cut off from etcd. StartWith starts a protected cluster: one that
// serves its clients over TLS and requires client certificates, or one
// whose users need a password, or both.
//
// It is for tests only; nothing in the library imports it.
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/idkit/idkit/internal/testkit/testcert"
)

// Cluster is a running set of embedded etcd members.
type Cluster struct {
	t       testing.TB
	dir     string // the test's directory; each start attempt makes its own in it
	fsync   bool
	initial string // the initial cluster, name=peer URL, comma-separated
	members []*member

	opts       Options
	serverTLS  transport.TLSInfo // the members' client TLS, when opts.CA is set
	rootTLS    transport.TLSInfo // the client certificate of Client, when opts.CA is set
	rootPasswd string            // root's password, when opts.Users is set
}

// Options describe a cluster that StartWith starts.
type Options struct {
	// Members is the number of members; 0 means 1.
	Members int
	// CA, when set, makes the members serve their clients over TLS only,
	// on https URLs, with a server certificate that CA issued for
	// 127.0.0.1 and localhost, and require a client certificate that CA
	// signed (etcd's --client-cert-auth with --trusted-ca-file). The
	// harness issues its certificates with serial numbers from
	// HarnessSerial up, so that a test's own serials stay below it.
	CA *testcert.CA
	// Users, when set, turns authentication on: each user (name to
	// password) is added with a role that may read and write the keys
	// under KeyRoot, where Prefix puts a test's keys; user root is added
	// with a password of its own and the root role, and Client
	// authenticates as root.
	Users map[string]string
}

// KeyRoot is the prefix of every key a test of this harness writes:
// Prefix returns prefixes under it.
const KeyRoot = "idkit-test/"

// HarnessSerial is the first serial number of the certificates that
// StartWith issues with Options.CA.
const HarnessSerial = 1 << 32

// UserRole is the role that StartWith grants each user of Options.Users:
// read and write on the keys under KeyRoot.
const UserRole = "idkit-test"

type member struct {
	name   string
	client string // client URL
	peer   string // peer URL
	dir    string // the parent of its data directory

	mu   sync.Mutex // guards etcd
	etcd *embed.Etcd
}

// Start starts a cluster of n members and stops it when the test ends.
// It fails the test if the cluster has no leader within 30 seconds. The
// members skip fsync: their data lives only as long as the test, and on a
// shared disk fsync makes every commit wait for unrelated work.
func Start(t testing.TB, n int) *Cluster { return start(t, n, false, Options{}) }

// StartDurable is Start with members that fsync their write-ahead log as
// production members do, for benchmarks of durable writes.
func StartDurable(t testing.TB, n int) *Cluster { return start(t, n, true, Options{}) }

// StartWith starts a cluster as o describes, as Start does, and stops it
// when the test ends. With o.Users it enables authentication before it
// returns.
func StartWith(t testing.TB, o Options) *Cluster {
	t.Helper()
	if o.Members == 0 {
		o.Members = 1
	}
	return start(t, o.Members, false, o)
}

// startAttempts bounds the starts of a new cluster on fresh ports: a
// member's port is picked free, closed and bound again by etcd, and
// another process may bind it in between.
const startAttempts = 5

func start(t testing.TB, n int, fsync bool, o Options) *Cluster {
	t.Helper()
	// The members stop before their directory goes: cleanups run last
	// first, and a member whose files vanish under it exits the process.
	c := &Cluster{t: t, fsync: fsync, dir: t.TempDir(), opts: o}
	if o.CA != nil {
		c.issue()
	}
	t.Cleanup(c.Close)
	for attempt := 1; ; attempt++ {
		err := c.startFresh(n)
		if err == nil {
			if len(o.Users) > 0 {
				c.enableAuth()
			}
			return c
		}
		c.Close()
		if !inUse(err) || attempt == startAttempts {
			t.Fatalf("etcdtest: %v", err)
		}
		t.Logf("etcdtest: %v; trying other ports", err)
	}
}

// startFresh starts n new members on fresh ports, in a fresh directory,
// and waits until they are ready.
func (c *Cluster) startFresh(n int) error {
	c.members = nil
	var initial []string
	for i := range n {
		m := &member{name: fmt.Sprintf("m%d", i), client: c.clientScheme() + freeAddr(c.t), peer: "http://" + freeAddr(c.t)}
		c.members = append(c.members, m)
		initial = append(initial, m.name+"="+m.peer)
	}
	c.initial = strings.Join(initial, ",")
	dir, err := os.MkdirTemp(c.dir, "cluster")
	if err != nil {
		return err
	}
	for _, m := range c.members {
		m.dir = dir
	}
	ready := make(chan error, n)
	for _, m := range c.members {
		e, err := embed.StartEtcd(c.config(m))
		if err != nil {
			return fmt.Errorf("start %s: %w", m.name, err)
		}
		m.etcd = e
		go func() { ready <- waitReady(m.name, e) }()
	}
	for range n {
		if err := <-ready; err != nil {
			return err
		}
	}
	return nil
}

// config returns the configuration of member m, the same at every start.
func (c *Cluster) config(m *member) *embed.Config {
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = filepath.Join(m.dir, m.name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(serverLogger())
	cfg.UnsafeNoFsync = !c.fsync
	cfg.ListenClientUrls = []url.URL{mustURL(m.client)}
	cfg.AdvertiseClientUrls = cfg.ListenClientUrls
	cfg.ListenPeerUrls = []url.URL{mustURL(m.peer)}
	cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
	cfg.InitialCluster = c.initial
	cfg.InitialClusterToken = "idkit-test"
	if c.opts.CA != nil {
		cfg.ClientTLSInfo = c.serverTLS
	}
	if len(c.opts.Users) > 0 {
		cfg.BcryptCost = 4 // bcrypt.MinCost: each authentication costs a test little
	}
	return cfg
}

func (c *Cluster) clientScheme() string {
	if c.opts.CA != nil {
		return "https://"
	}
	return "http://"
}

// issue writes the members' server certificate and Client's client
// certificate, both from c.opts.CA.
func (c *Cluster) issue() {
	c.t.Helper()
	dir := filepath.Join(c.dir, "tls")
	if err := os.Mkdir(dir, 0o700); err != nil {
		c.t.Fatalf("etcdtest: %v", err)
	}
	ca := c.opts.CA.WriteCA(c.t, dir, "ca")
	cert, key := c.opts.CA.Issue(c.t, dir, "etcd-server", HarnessSerial, true)
	c.serverTLS = transport.TLSInfo{CertFile: cert, KeyFile: key, TrustedCAFile: ca, ClientCertAuth: true}
	cert, key = c.opts.CA.Issue(c.t, dir, "etcd-root", HarnessSerial+1, false)
	c.rootTLS = transport.TLSInfo{CertFile: cert, KeyFile: key, TrustedCAFile: ca}
}

// enableAuth adds root and the users of c.opts, and turns authentication
// on.
func (c *Cluster) enableAuth() {
	c.t.Helper()
	cli := c.newClient(false, c.Endpoints()...)
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.rootPasswd = fmt.Sprintf("root-%d", time.Now().UnixNano())
	steps := []func() error{
		func() error { _, err := cli.UserAdd(ctx, "root", c.rootPasswd); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.RoleAdd(ctx, UserRole); return err },
		func() error {
			_, err := cli.RoleGrantPermission(ctx, UserRole, KeyRoot, clientv3.GetPrefixRangeEnd(KeyRoot),
				clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
	}
	for name, password := range c.opts.Users {
		steps = append(steps,
			func() error { _, err := cli.UserAdd(ctx, name, password); return err },
			func() error { _, err := cli.UserGrantRole(ctx, name, UserRole); return err })
	}
	steps = append(steps, func() error { _, err := cli.AuthEnable(ctx); return err })
	for _, step := range steps {
		if err := step(); err != nil {
			c.t.Fatalf("etcdtest: enable auth: %v", err)
		}
	}
}

// waitReady waits until e serves, for 30 seconds at most.
func waitReady(name string, e *embed.Etcd) error {
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("%s: %w", name, err)
	case <-t.C:
		return fmt.Errorf("%s not ready after 30s", name)
	}
}

func inUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }

// Endpoints returns the client URLs of the members, running or not.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.client)
	}
	return eps
}

// Endpoint returns member i's client URL.
func (c *Cluster) Endpoint(i int) string { return c.members[i].client }

// Client returns a client of every member, closed when the test ends. On
// a cluster of StartWith it has a client certificate (with Options.CA) and
// is root (with Options.Users).
func (c *Cluster) Client() *clientv3.Client {
	c.t.Helper()
	cli := c.newClient(true, c.Endpoints()...)
	c.t.Cleanup(func() { cli.Close() })
	return cli
}

// newClient returns a client of endpoints as Client does, authenticated
// as root if asRoot and the cluster has users.
func (c *Cluster) newClient(asRoot bool, endpoints ...string) *clientv3.Client {
	c.t.Helper()
	cfg := clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: nopLogger()}
	if c.opts.CA != nil {
		tlsCfg, err := c.rootTLS.ClientConfig()
		if err != nil {
			c.t.Fatalf("etcdtest: client TLS: %v", err)
		}
		cfg.TLS = tlsCfg
	}
	if asRoot && c.rootPasswd != "" {
		cfg.Username, cfg.Password = "root", c.rootPasswd
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		c.t.Fatalf("etcdtest: client: %v", err)
	}
	return cli
}

// Stop stops member i gracefully: a leader hands its leadership over
// first. Stopping a stopped member is harmless.
func (c *Cluster) Stop(i int) { c.halt(i, false) }

// Crash stops member i at once, as a crash would, without handing its
// leadership over. Crashing a stopped member is harmless.
func (c *Cluster) Crash(i int) { c.halt(i, true) }

func (c *Cluster) halt(i int, hard bool) {
	m := c.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd == nil {
		return
	}
	if hard {
		m.etcd.Server.HardStop()
	}
	m.etcd.Close()
	m.etcd = nil
}

// Restart starts stopped member i again, on its ports and with its data,
// and waits until it serves. A port that another process took meanwhile
// is tried again for up to 10 seconds before the test fails.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	m := c.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd != nil {
		c.t.Fatalf("etcdtest: restart %s: it is running", m.name)
	}
	giveUp := time.Now().Add(10 * time.Second)
	for {
		e, err := embed.StartEtcd(c.config(m))
		if err == nil {
			m.etcd = e
			break
		}
		if !inUse(err) || time.Now().After(giveUp) {
			c.t.Fatalf("etcdtest: restart %s: %v", m.name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := waitReady(m.name, m.etcd); err != nil {
		c.t.Fatalf("etcdtest: restart: %v", err)
	}
}

// Close stops every member.
func (c *Cluster) Close() {
	for i := range c.members {
		c.Stop(i)
	}
}

// NewClient returns a client of endpoints, closed when the test ends.
func NewClient(t testing.TB, endpoints ...string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      nopLogger(),
	})
	if err != nil {
		t.Fatalf("etcdtest: client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Prefix returns a key prefix of its own for one test, and deletes every
// key under it when the test ends.
func Prefix(t testing.TB, cli *clientv3.Client) string {
	p := fmt.Sprintf("%s%s/%d/", KeyRoot, strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cli.Delete(ctx, p, clientv3.WithPrefix())
	})
	return p
}

// freeAddr returns a loopback host:port that was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("etcdtest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return *u
}
