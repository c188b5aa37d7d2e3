package main

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/store"
)

func init() { cli.Etcd = &etcdBackend{clients: make(map[*cli.StoreFlags]*clientv3.Client)} }

// etcdBackend is what --etcd reaches in idkit-full: the fleet's launch log
// and node claims, through one client per command line, dialled at its
// first use and closed when the command ends.
type etcdBackend struct {
	mu      sync.Mutex
	clients map[*cli.StoreFlags]*clientv3.Client
}

func (b *etcdBackend) Log(c *cli.Console, f *cli.StoreFlags) (cli.Store, error) {
	client, err := b.client(c, f)
	if err != nil {
		return nil, err
	}
	return fleet.NewLog(fleet.LogOptions{Client: client, Prefix: *f.Prefix, Timeout: cli.EtcdTimeout, Clock: c.Clock})
}

func (b *etcdBackend) Claim(c *cli.Console, f *cli.StoreFlags, space string, lo, hi int) (store.Claim, error) {
	client, err := b.client(c, f)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cli.EtcdTimeout)
	defer cancel()
	claim, err := fleet.ClaimNode(ctx, fleet.ClaimOptions{
		Client: client, Prefix: *f.Prefix, Space: space, Min: lo, Max: hi, Timeout: cli.EtcdTimeout, Clock: c.Clock,
	})
	if err != nil {
		return nil, err
	}
	c.AtExit(func() { claim.Close() })
	return claim, nil
}

// client returns the client of f's --etcd, dialled at the first call.
func (b *etcdBackend) client(c *cli.Console, f *cli.StoreFlags) (*clientv3.Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if client := b.clients[f]; client != nil {
		return client, nil
	}
	client, err := dialEtcd(c, *f.Endpoints, etcdFlags{f.Conn})
	if err != nil {
		return nil, err
	}
	b.clients[f] = client
	c.AtExit(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.clients, f)
	})
	return client, nil
}
