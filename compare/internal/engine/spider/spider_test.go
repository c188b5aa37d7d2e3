package spider

import (
	"context"
	"errors"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/internal/testkit/testenv"
)

// startCluster starts a cluster of four shards for the test, or skips
// (fails under CI) without MariaDB's server and Spider plugin.
func startCluster(t *testing.T) *Cluster {
	t.Helper()
	ctx := context.Background()
	c, err := Start(ctx, t.TempDir()+"/spider", DefaultShards)
	if errors.Is(err, ErrMissing) {
		testenv.Missing(t, err.Error()+" (.ci/servers.sh need_spider does it)")
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close(ctx)) })
	return c
}

// TestWhereInsertsGo loads ordered, random and spread keys into both
// topologies over four shards: on ranges, the ordered keys all go to one
// shard and the others spread; on hash buckets, all spread. Every load
// also checks that the shards hold what the partition function says.
func TestWhereInsertsGo(t *testing.T) {
	c := startCluster(t)
	const n = 20_000
	rnd := rand.New(rand.NewPCG(1, 2))
	var counter, random, reversed []uint64
	for i := range uint64(n) {
		counter = append(counter, i+1)
		random = append(random, rnd.Uint64()>>1)
		reversed = append(reversed, bits.Reverse64(i+1)>>1) // 63-bit reversal
	}
	uuidv7 := engine.KeySet{Len: 16}
	uuidv4 := engine.KeySet{Len: 16}
	for i := range n {
		k := make([]byte, 16)
		k[0], k[1], k[5], k[14], k[15] = 0x01, 0x93, byte(i>>8), byte(i>>8), byte(i) // a millisecond timestamp's leading bytes
		uuidv7.Data = append(uuidv7.Data, k...)
		for j := range k {
			k[j] = byte(rnd.Uint32())
		}
		uuidv4.Data = append(uuidv4.Data, k...)
	}
	sets := []struct {
		name    string
		keys    engine.KeySet
		int63   bool
		ordered bool
	}{
		{"counter", engine.Uint64Keys(counter...), true, true},
		{"uuidv7", uuidv7, false, true},
		{"random", engine.Uint64Keys(random...), true, false},
		{"reversed", engine.Uint64Keys(reversed...), true, false},
		{"uuidv4", uuidv4, false, false},
	}
	ctx := context.Background()
	for _, topo := range []Topology{Range, Hash} {
		e := New(c, topo, 2, false)
		for _, s := range sets {
			if topo == Hash && s.name != "counter" && s.name != "uuidv4" {
				continue // the others spread on ranges already
			}
			t.Run(topo.Name()+"/"+s.name, func(t *testing.T) {
				f, err := e.Load(ctx, engine.Load{Keys: s.keys, Int63: s.int63, Value: make([]byte, 16), Batch: 500, Table: "t_" + s.name})
				require.NoError(t, err)
				share := f.Metrics["busiest_share"]
				if topo == Range && s.ordered {
					assert.Greater(t, share, 0.9, "ordered keys on ranges: the busiest shard's share")
					assert.Greater(t, f.Metrics["split_busiest_share_after"], 0.9, "a split of the hot range leaves the later inserts on one half")
				} else {
					assert.Less(t, share, 0.4, "the busiest shard's share")
					assert.Less(t, f.Metrics["busiest_share_window"], 0.4, "the busiest shard's share in any tenth of the load")
				}
				assert.Equal(t, share, f.Metrics["model_busiest_share"])
				assert.Greater(t, f.Metrics["inserts_per_second"], 0.0)
				assert.Greater(t, f.Metrics["concurrent_inserts_per_second"], 0.0)
				assert.Greater(t, f.Metrics["pages_written_per_1000"], 0.0)
				assert.Greater(t, f.Metrics["add_shard_moves"], 0.0)
			})
		}
	}
}
