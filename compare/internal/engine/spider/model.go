package spider

import (
	"encoding/binary"
	"slices"

	"github.com/idkit/idkit/compare/internal/engine"
)

// Bucket is the hash bucket of a key, 0..buckets-1: FNV-1a 32 of its
// bytes (a BIGINT's 8 big-endian bytes), modulo buckets, as CockroachDB
// computes a hash-sharded index's shard column.
func Bucket(key []byte, buckets int) int {
	h := uint32(2166136261)
	for _, b := range key {
		h ^= uint32(b)
		h *= 16777619
	}
	return int(h % uint32(buckets))
}

// Shard is the shard of topology t over shards that key goes to.
func Shard(key []byte, bigint bool, t Topology, shards int) int {
	if t == Hash {
		return Bucket(key, BucketsPerShard*shards) % shards
	}
	v := lead(key)
	bound := binaryBound
	if bigint {
		bound = bigintBound
	}
	s := 0
	for s+1 < shards && v >= bound(s+1, shards) {
		s++
	}
	return s
}

// Model returns how many of l's keys each shard of topology t holds, from
// the partition function alone: what the Spider table must hold. On
// ranges it is engine.RangeModel with the shards as ranges that never
// split, the model a report gives for stores this run cannot start.
func Model(l engine.Load, t Topology, shards int) []int64 {
	if t == Range {
		return engine.RangeModel{Nodes: shards, PreSplit: shards}.Run(l.Keys, l.Bigint()).PerNode
	}
	out := make([]int64, shards)
	for i := range l.Keys.N() {
		out[Shard(l.Keys.At(i), l.Bigint(), t, shards)]++
	}
	return out
}

// Moves returns what growing the table would move, from l's keys:
//
//   - add_shard_moves: the share of the rows a new shard takes. On
//     ranges, the upper half of the busiest range (a split at its median
//     row); on hash buckets, whole buckets, a shard's last in turn, until
//     it holds its 1/(N+1) share of them.
//   - split_busiest_share_after (ranges): split the busiest range at the
//     median of the rows it holds halfway through the load; the share of
//     the later half of the inserts that land on the busier of its two
//     halves. Near the busiest share before the split when the keys grow
//     with time (the split moves rows and not the inserts), half of it
//     when they are spread.
func Moves(l engine.Load, t Topology, shards int) map[string]float64 {
	n := l.Keys.N()
	out := map[string]float64{}
	if n == 0 {
		return out
	}
	if t == Hash {
		buckets := BucketsPerShard * shards
		rows := make([]int64, buckets)
		for i := range n {
			rows[Bucket(l.Keys.At(i), buckets)]++
		}
		var moved int64
		take := buckets / (shards + 1)
		for k := range take {
			// shard k%shards gives up its last bucket not yet given
			s, nth := k%shards, k/shards
			b := buckets - shards + s - nth*shards
			moved += rows[b]
		}
		out["add_shard_moves"] = float64(moved) / float64(n)
		return out
	}
	counts := Model(l, t, shards)
	hot := slices.Index(counts, slices.Max(counts))
	var early, all []uint64
	for i := range n {
		k := l.Keys.At(i)
		if Shard(k, l.Bigint(), t, shards) != hot {
			continue
		}
		v := lead(k)
		all = append(all, v)
		if i < n/2 {
			early = append(early, v)
		}
	}
	out["add_shard_moves"] = float64(len(all)/2) / float64(n)
	if len(early) == 0 || n-n/2 == 0 {
		return out
	}
	slices.Sort(early)
	median := early[len(early)/2]
	var below, above int
	for i := n / 2; i < n; i++ {
		k := l.Keys.At(i)
		if Shard(k, l.Bigint(), t, shards) != hot {
			continue
		}
		if v := lead(k); v < median {
			below++
		} else {
			above++
		}
	}
	out["split_busiest_share_after"] = float64(max(below, above)) / float64(n-n/2)
	return out
}

// lead is the leading 8 bytes of a key, big-endian.
func lead(k []byte) uint64 {
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}
