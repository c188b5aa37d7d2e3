// Package fleettest runs real etcd clusters for the tests of code on
// package fleet: one member or a small cluster of etcd processes on free
// loopback ports, with their data in the test's temporary directory,
// stopped when the test ends. StartWith starts a protected cluster: one
// that serves its clients over TLS and requires client certificates, or
// one whose users need a password, or both. Members can be stopped,
// crashed and restarted, to test what a client does through an outage.
//
// The members are processes of an etcd binary (version 3.5 or later): the
// file that $IDKIT_ETCD_BIN names, else etcd on $PATH; inside idkit's own
// workspace, the etcd server that idkit pins, built on first use. Where
// there is none, a test that starts a cluster skips, saying how to get
// one (under CI=true it fails instead). The server's code is never linked
// into a test, so that a module that tests with fleettest does not carry
// etcd's server in its module graph.
//
// Where the etcd binary is missing, a test skips, or fails when the
// environment has CI=true, so that a suite cannot pass in CI by skipping
// its clusters. The harness needs only the standard library and etcd's
// client: a test outside idkit's repository uses it as idkit's own tests
// do. Nothing in the library imports it.
package fleettest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Cluster is a running set of etcd members.
type Cluster struct {
	t       testing.TB
	bin     string
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
	// CA, when set, is a certificate authority: its certificate (Leaf, or
	// else the first of Certificate) and its private key, a
	// crypto.Signer. It makes the members serve their clients over TLS
	// only, on https URLs, with a server certificate that CA issued for
	// 127.0.0.1 and localhost, and require a client certificate that CA
	// signed (etcd's --client-cert-auth with --trusted-ca-file). The
	// harness issues its certificates with serial numbers from
	// HarnessSerial up, so that a test's own serials stay below it.
	CA *tls.Certificate
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

// readyWithin bounds how long a member may take to serve once started.
const readyWithin = 30 * time.Second

type member struct {
	name   string
	client string // client URL
	peer   string // peer URL
	dir    string // the parent of its data directory

	mu   sync.Mutex // guards the fields below
	proc *process   // nil while stopped
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
	// first.
	c := &Cluster{t: t, bin: binary(t), fsync: fsync, dir: t.TempDir(), opts: o}
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
			t.Fatalf("fleettest: %v", err)
		}
		t.Logf("fleettest: %v; trying other ports", err)
	}
}

// startFresh starts n new members on fresh ports, in a fresh directory,
// and waits until they serve.
func (c *Cluster) startFresh(n int) error {
	c.members = nil
	addrs := freeAddrs(c.t, 2*n)
	var initial []string
	for i := range n {
		m := &member{name: fmt.Sprintf("m%d", i), client: c.clientScheme() + addrs[2*i], peer: "http://" + addrs[2*i+1]}
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
		if m.proc, err = c.launch(m); err != nil {
			return err
		}
	}
	ready := make(chan error, n)
	for _, m := range c.members {
		go func() { ready <- c.waitReady(m) }()
	}
	for range n {
		if err := <-ready; err != nil {
			return err
		}
	}
	return nil
}

// args returns the command line of member m, the same at every start: a
// member that restarts finds its data and ignores the initial cluster.
func (c *Cluster) args(m *member) []string {
	args := []string{
		"--name", m.name,
		"--data-dir", filepath.Join(m.dir, m.name),
		"--listen-client-urls", m.client, "--advertise-client-urls", m.client,
		"--listen-peer-urls", m.peer, "--initial-advertise-peer-urls", m.peer,
		"--initial-cluster", c.initial, "--initial-cluster-token", "idkit-test",
		"--initial-cluster-state", "new",
		"--log-level", "error",
	}
	if !c.fsync {
		args = append(args, "--unsafe-no-fsync")
	}
	if c.opts.CA != nil {
		args = append(args, "--cert-file", c.serverTLS.CertFile, "--key-file", c.serverTLS.KeyFile,
			"--trusted-ca-file", c.serverTLS.TrustedCAFile, "--client-cert-auth")
	}
	if len(c.opts.Users) > 0 {
		args = append(args, "--bcrypt-cost", "4") // bcrypt.MinCost: each authentication costs a test little
	}
	return args
}

// launch starts member m's process.
func (c *Cluster) launch(m *member) (*process, error) {
	p, err := startProcess(c.bin, c.args(m))
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", m.name, err)
	}
	return p, nil
}

// waitReady waits until member m answers a linearizable read, which needs
// the cluster's leader, or its process ends.
func (c *Cluster) waitReady(m *member) error {
	cli := c.newClient(false, m.client)
	defer cli.Close()
	m.mu.Lock()
	p := m.proc
	m.mu.Unlock()
	deadline := time.Now().Add(readyWithin)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Get(ctx, "idkit-test-ready")
		cancel()
		if err == nil || (len(c.opts.Users) > 0 && strings.Contains(err.Error(), "user name is empty")) {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited: %s", m.name, p.output())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v: %v; %s", m.name, readyWithin, err, p.output())
		}
	}
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
		c.t.Fatalf("fleettest: %v", err)
	}
	ca, err := parseCA(c.opts.CA)
	if err != nil {
		c.t.Fatalf("fleettest: Options.CA: %v", err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o600); err != nil {
		c.t.Fatalf("fleettest: %v", err)
	}
	cert, key, err := ca.issue(dir, "etcd-server", HarnessSerial, true)
	if err != nil {
		c.t.Fatalf("fleettest: %v", err)
	}
	c.serverTLS = transport.TLSInfo{CertFile: cert, KeyFile: key, TrustedCAFile: caFile, ClientCertAuth: true}
	if cert, key, err = ca.issue(dir, "etcd-root", HarnessSerial+1, false); err != nil {
		c.t.Fatalf("fleettest: %v", err)
	}
	c.rootTLS = transport.TLSInfo{CertFile: cert, KeyFile: key, TrustedCAFile: caFile}
}

// authority is the certificate authority of Options.CA.
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func parseCA(c *tls.Certificate) (authority, error) {
	cert := c.Leaf
	if cert == nil {
		if len(c.Certificate) == 0 {
			return authority{}, errors.New("no certificate")
		}
		var err error
		if cert, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return authority{}, err
		}
	}
	key, ok := c.PrivateKey.(crypto.Signer)
	if !ok {
		return authority{}, fmt.Errorf("the private key, a %T, is not a crypto.Signer", c.PrivateKey)
	}
	return authority{cert, key}, nil
}

// issue writes a certificate for name (its common name) with serial,
// signed by the authority, and its key, to dir/name.crt and dir/name.key,
// and returns their paths. A server certificate is for 127.0.0.1 and
// localhost and for client authentication too, as an etcd member's is
// towards its peers; a client certificate is for client authentication.
// Each is valid for an hour around now.
func (a authority) issue(dir, name string, serial int64, server bool) (certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return "", "", fmt.Errorf("issue %s: %w", name, err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
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
			c.t.Fatalf("fleettest: enable auth: %v", err)
		}
	}
}

func inUse(err error) bool {
	return err != nil && strings.Contains(err.Error(), "address already in use")
}

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
	cfg := clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	if c.opts.CA != nil {
		tlsCfg, err := c.rootTLS.ClientConfig()
		if err != nil {
			c.t.Fatalf("fleettest: client TLS: %v", err)
		}
		cfg.TLS = tlsCfg
	}
	if asRoot && c.rootPasswd != "" {
		cfg.Username, cfg.Password = "root", c.rootPasswd
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		c.t.Fatalf("fleettest: client: %v", err)
	}
	return cli
}

// Stop stops member i gracefully (SIGTERM): a leader hands its leadership
// over first. Stopping a stopped member is harmless.
func (c *Cluster) Stop(i int) { c.halt(i, syscall.SIGTERM) }

// Crash stops member i at once (SIGKILL), as a crash would, without
// handing its leadership over. Crashing a stopped member is harmless.
func (c *Cluster) Crash(i int) { c.halt(i, syscall.SIGKILL) }

func (c *Cluster) halt(i int, sig syscall.Signal) {
	m := c.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil {
		return
	}
	m.proc.stop(sig)
	m.proc = nil
}

// Restart starts stopped member i again, on its ports and with its data,
// and waits until it serves. A port that another process took meanwhile
// is tried again for up to 10 seconds before the test fails.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	m := c.members[i]
	m.mu.Lock()
	if m.proc != nil {
		m.mu.Unlock()
		c.t.Fatalf("fleettest: restart %s: it is running", m.name)
	}
	m.mu.Unlock()
	giveUp := time.Now().Add(10 * time.Second)
	for {
		p, err := c.launch(m)
		if err != nil {
			c.t.Fatalf("fleettest: restart: %v", err)
		}
		m.mu.Lock()
		m.proc = p
		m.mu.Unlock()
		err = c.waitReady(m)
		if err == nil {
			return
		}
		c.halt(i, syscall.SIGKILL)
		if !inUse(err) || time.Now().After(giveUp) {
			c.t.Fatalf("fleettest: restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
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
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("fleettest: client: %v", err)
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

// freeAddrs returns n distinct loopback host:ports that were free a moment
// ago: each is held until all are picked, as a port just closed may be
// handed out again by the next pick.
func freeAddrs(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("fleettest: free port: %v", err)
		}
		defer l.Close()
		addrs[i] = l.Addr().String()
	}
	return addrs
}

// binary returns the etcd binary the members run, or skips t (fails it
// under CI=true) where there is none.
func binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("IDKIT_ETCD_BIN"); bin != "" {
		return bin
	}
	if bin, err := exec.LookPath("etcd"); err == nil {
		return bin
	}
	bin, err := pinnedEtcd()
	if err != nil {
		msg := "no etcd server: set IDKIT_ETCD_BIN to an etcd binary (3.5 or later), or put etcd on $PATH (" + err.Error() + ")"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true makes this a failure)")
		}
		t.Skip(msg)
	}
	return bin
}

// pinned is the etcd server that idkit's workspace pins, built once per
// process by pinnedEtcd.
var pinned struct {
	once sync.Once
	bin  string
	err  error
}

// pinnedEtcdPackage is the main package of the etcd server that idkit
// pins, in a module of idkit's workspace.
const pinnedEtcdPackage = "github.com/idkit/idkit/internal/testkit/campaigns/deploy/etcd"

// pinnedEtcd builds pinnedEtcdPackage, which only idkit's own workspace
// has, into the user's cache directory.
func pinnedEtcd() (string, error) {
	pinned.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			pinned.err = err
			return
		}
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		dir := filepath.Join(cache, "idkit-test")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			pinned.err = err
			return
		}
		tmp, err := os.CreateTemp(dir, "etcd-*")
		if err != nil {
			pinned.err = err
			return
		}
		tmp.Close()
		out, err := exec.Command(goTool, "build", "-o", tmp.Name(), pinnedEtcdPackage).CombinedOutput()
		if err != nil {
			os.Remove(tmp.Name())
			pinned.err = fmt.Errorf("go build %s: %v: %s", pinnedEtcdPackage, err, strings.TrimSpace(string(out)))
			return
		}
		pinned.bin = filepath.Join(dir, "etcd")
		pinned.err = os.Rename(tmp.Name(), pinned.bin) // whole, for the test processes beside this one
	})
	return pinned.bin, pinned.err
}
