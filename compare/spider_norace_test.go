//go:build !race

package compare

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/report"
	"github.com/idkit/idkit/compare/internal/scheme"
	"github.com/idkit/idkit/internal/testkit/testenv"
)

// TestShardedDirections runs the schemes of the issue on Spider tables
// over four shards the run starts: on ranges, the counter and TraceId put
// more than 90% of their inserts on one shard, and UUIDv4 and the schemes
// made for shards (added to the run by Spider) less than 40%; on hash
// buckets every scheme less than 40%. The model of a store that splits
// ranges by size agrees on which keys go to one place, and the verdicts
// per topology reject the time-ordered keys on ranges only.
func TestShardedDirections(t *testing.T) {
	picked, err := Select("counter,traceid,uuidv4,uuidv7")
	require.NoError(t, err)
	r, err := RunContext(context.Background(), Options{
		N: 10_000, Writers: 1, Schemes: picked, Engine: Spider, BatchSize: 500,
		SpeedTime: time.Millisecond, Dir: t.TempDir(), NoPebble: true,
	})
	if errors.Is(err, ErrSpiderMissing) {
		testenv.Missing(t, err.Error()+" (.ci/servers.sh need_spider does it)")
	}
	require.NoError(t, err)
	var names []string
	for _, s := range r.Schemes {
		names = append(names, s.Name)
	}
	for _, s := range scheme.ForShards() {
		assert.Contains(t, names, s.Name, "a run with shards adds the schemes made for them")
	}
	ordered := []string{"counter", "traceid", "uuidv7"}
	for si := range r.Schemes {
		s := &r.Schemes[si]
		for ri, run := range s.Runs {
			rangeShare, ok := report.Figure(s, engine.SpiderRange, ri, "busiest_share")
			require.True(t, ok, "%s: a range figure", s.Name)
			hashShare, ok := report.Figure(s, engine.SpiderHash, ri, "busiest_share")
			require.True(t, ok, "%s: a hash figure", s.Name)
			assert.Less(t, hashShare, 0.4, "%s, %d writer(s): the busiest hash shard's share", s.Name, run.Writers)
			if slices.Contains(ordered, s.Name) {
				assert.Greater(t, rangeShare, 0.9, "%s: the busiest range shard's share", s.Name)
				assert.Greater(t, run.Ranges.BusiestNow, 0.85, "%s: the model's busiest node now", s.Name)
			}
			if !slices.Contains(ordered, s.Name) {
				assert.Less(t, rangeShare, 0.4, "%s, %d writer(s): the busiest range shard's share", s.Name, run.Writers)
				assert.Less(t, run.Ranges.BusiestNow, 0.7, "%s, %d writer(s): the model's busiest node now (windows of 19 rows at this N)", s.Name, run.Writers)
			}
		}
	}
	require.NotNil(t, r.Topologies, "a verdict per topology")
	var engines []string
	for _, v := range r.Topologies.Verdicts {
		engines = append(engines, v.Engine)
	}
	assert.Equal(t, []string{engine.SQLite, engine.SpiderRange, engine.SpiderHash}, engines, "one server, then each topology")
	rejected := func(v *report.Verdict, name string) bool {
		return slices.ContainsFunc(v.Rejected, func(x report.Rejection) bool { return x.Scheme == name })
	}
	rangeV, hashV := r.Topologies.Verdicts[1], r.Topologies.Verdicts[2]
	for _, name := range []string{"traceid", "uuidv7"} {
		assert.True(t, rejected(rangeV, name), "%s is rejected on ranges: %v", name, rangeV.Rejected)
		assert.False(t, rejected(hashV, name), "%s is not rejected on hash buckets: %v", name, hashV.Rejected)
	}
	for _, name := range []string{"uuidv4", "bitreversed", "shardbits", "hashprefix"} {
		assert.False(t, rejected(rangeV, name), "%s is ranked on ranges: %v", name, rangeV.Rejected)
	}
	assert.NotEmpty(t, r.Topologies.Changes)
}
