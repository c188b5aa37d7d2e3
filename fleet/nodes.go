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
// left and last recorded clock. timeout bounds each request; zero means
// DefaultTimeout.
func Nodes(ctx context.Context, cli *clientv3.Client, prefix string, timeout time.Duration) ([]NodeInfo, error) {
	prefix = cmp.Or(prefix, DefaultPrefix)
	dir := prefix + "nodes/"
	timeout = cmp.Or(timeout, DefaultTimeout)
	resp, err := request(ctx, timeout, "list claimed nodes", func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return cli.Txn(ctx).Then(clientv3.OpGet(dir, clientv3.WithPrefix()), clientv3.OpGet(prefix+"holders/", clientv3.WithPrefix())).Commit()
	})
	if err != nil {
		return nil, err
	}
	clocks := make(map[int64]time.Time) // by lease: the sessions' clock records
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		if rec, ok := decodeRecord(kv.Value); ok {
			clocks[kv.Lease] = rec.Clock
		}
	}
	left := make(map[int64]time.Duration) // by lease
	var nodes []NodeInfo
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		key := string(kv.Key)
		slash := strings.LastIndexByte(key, '/')
		n, err := strconv.Atoi(key[slash+1:])
		var info NodeInfo
		if err != nil || slash < len(dir) || json.Unmarshal(kv.Value, &info.Record) != nil || info.Node != n {
			return nil, fmt.Errorf("%w: key %q holds no claim record", ErrCorrupt, key)
		}
		info.Space = key[len(dir):slash]
		if c, ok := clocks[kv.Lease]; ok && c.After(info.Clock) {
			info.Clock = c
		}
		if _, ok := left[kv.Lease]; !ok {
			ttl, err := request(ctx, timeout, "read the lease of "+key, func(ctx context.Context) (*clientv3.LeaseTimeToLiveResponse, error) {
				return cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
			})
			if err != nil {
				return nil, err
			}
			left[kv.Lease] = time.Duration(max(ttl.TTL, 0)) * time.Second
		}
		info.LeaseLeft = left[kv.Lease]
		nodes = append(nodes, info)
	}
	return nodes, nil
}
