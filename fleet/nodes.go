package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// NodeInfo describes one claimed node, as Nodes lists it.
type NodeInfo struct {
	Space string `json:"space"`
	Record
	// LeaseLeft is the time left on the holder's lease as etcd counts it.
	LeaseLeft time.Duration `json:"lease_left"`
}

// Nodes lists the claimed nodes of every space under prefix (empty means
// DefaultPrefix), ordered by space and node, with each holder's lease time
// left. timeout bounds each request; zero means DefaultTimeout.
func Nodes(ctx context.Context, cli *clientv3.Client, prefix string, timeout time.Duration) ([]NodeInfo, error) {
	dir := cmp.Or(prefix, DefaultPrefix) + "nodes/"
	timeout = cmp.Or(timeout, DefaultTimeout)
	resp, err := request(ctx, timeout, "list claimed nodes", func(ctx context.Context) (*clientv3.GetResponse, error) {
		return cli.Get(ctx, dir, clientv3.WithPrefix())
	})
	if err != nil {
		return nil, err
	}
	var nodes []NodeInfo
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		slash := strings.LastIndexByte(key, '/')
		n, err := strconv.Atoi(key[slash+1:])
		var info NodeInfo
		if err != nil || slash < len(dir) || json.Unmarshal(kv.Value, &info.Record) != nil || info.Node != n {
			return nil, fmt.Errorf("%w: key %q holds no claim record", ErrCorrupt, key)
		}
		info.Space = key[len(dir):slash]
		ttl, err := request(ctx, timeout, "read the lease of "+key, func(ctx context.Context) (*clientv3.LeaseTimeToLiveResponse, error) {
			return cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
		})
		if err != nil {
			return nil, err
		}
		info.LeaseLeft = time.Duration(max(ttl.TTL, 0)) * time.Second
		nodes = append(nodes, info)
	}
	return nodes, nil
}
