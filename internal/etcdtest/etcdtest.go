// Package etcdtest starts real etcd servers inside a test process: one
// member or a small cluster on free loopback ports, with data in the test's
// temporary directory, and a loopback proxy that a test can cut to model a
// client cut off from etcd.
//
// It is for tests only; nothing in the library imports it.
package etcdtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// Cluster is a running set of embedded etcd members.
type Cluster struct {
	t       testing.TB
	members []*member
}

type member struct {
	name   string
	client string // client URL
	peer   string // peer URL
	etcd   *embed.Etcd
	once   sync.Once
}

// Start starts a cluster of n members and stops it when the test ends.
// It fails the test if the cluster has no leader within 30 seconds. The
// members skip fsync: their data lives only as long as the test, and on a
// shared disk fsync makes every commit wait for unrelated work.
func Start(t testing.TB, n int) *Cluster { return start(t, n, false) }

// StartDurable is Start with members that fsync their write-ahead log as
// production members do, for benchmarks of durable writes.
func StartDurable(t testing.TB, n int) *Cluster { return start(t, n, true) }

func start(t testing.TB, n int, fsync bool) *Cluster {
	t.Helper()
	c := &Cluster{t: t}
	var initial []string
	for i := range n {
		m := &member{name: fmt.Sprintf("m%d", i), client: freeURL(t), peer: freeURL(t)}
		c.members = append(c.members, m)
		initial = append(initial, m.name+"="+m.peer)
	}
	dir := t.TempDir()
	errs := make(chan error, n)
	for _, m := range c.members {
		cfg := embed.NewConfig()
		cfg.Name = m.name
		cfg.Dir = filepath.Join(dir, m.name)
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(nopLogger())
		cfg.UnsafeNoFsync = !fsync
		cfg.ListenClientUrls = []url.URL{mustURL(m.client)}
		cfg.AdvertiseClientUrls = cfg.ListenClientUrls
		cfg.ListenPeerUrls = []url.URL{mustURL(m.peer)}
		cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = "idkit-test"
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			c.Close()
			t.Fatalf("etcdtest: start %s: %v", m.name, err)
		}
		m.etcd = e
		go func() {
			select {
			case <-e.Server.ReadyNotify():
				errs <- nil
			case err := <-e.Err():
				errs <- err
			case <-time.After(30 * time.Second):
				errs <- fmt.Errorf("etcdtest: %s not ready after 30s", m.name)
			}
		}()
	}
	t.Cleanup(c.Close)
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("etcdtest: %v", err)
		}
	}
	return c
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

// Client returns a client of every member, closed when the test ends.
func (c *Cluster) Client() *clientv3.Client { return NewClient(c.t, c.Endpoints()...) }

// Stop stops member i. Stopping a member twice is harmless.
func (c *Cluster) Stop(i int) {
	m := c.members[i]
	m.once.Do(func() { m.etcd.Close() })
}

// Close stops every member.
func (c *Cluster) Close() {
	for i, m := range c.members {
		if m.etcd != nil {
			c.Stop(i)
		}
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
	p := fmt.Sprintf("idkit-test/%s/%d/", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cli.Delete(ctx, p, clientv3.WithPrefix())
	})
	return p
}

func freeURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("etcdtest: free port: %v", err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return *u
}
