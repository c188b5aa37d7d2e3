package compare

import (
	"bytes"
	"testing"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentWriters loads the 4-writer keys of the counter and uuidv4
// into each server through four real connections at once, and checks
// that four distinct sessions inserted, at least two of them seen in one
// sample, every key arrived (LoadConcurrent counts the rows), and the
// figures and the report's table are there. The 1-writer run has no
// concurrent load.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	for _, eng := range []string{engine.Postgres, engine.MySQL} {
		t.Run(eng, func(t *testing.T) {
			t.Parallel()
			o := engineOptions(t, eng)
			o.N, o.Writers, o.Concurrent = 40_000, 4, true
			var err error
			o.Schemes, err = scheme.Select("counter,uuidv4")
			require.NoError(t, err)
			r, err := Run(o)
			require.NoError(t, err)
			require.True(t, r.Config.Concurrent)
			for _, s := range r.Schemes {
				require.Len(t, s.Runs, 2)
				one, ok := s.Runs[0].EngineLoad(eng)
				require.True(t, ok)
				assert.Nil(t, one.Concurrent, "%s: the 1-writer run has no concurrent load", s.Name)
				four, ok := s.Runs[1].EngineLoad(eng)
				require.True(t, ok)
				c := four.Concurrent
				require.NotNil(t, c, "%s: the 4-writer run's concurrent load", s.Name)
				assert.Equal(t, 4, c.Connections)
				seen := map[string]bool{}
				for _, id := range c.Sessions {
					seen[id] = true
				}
				assert.Len(t, seen, 4, "%s: four distinct server sessions: %v", s.Name, c.Sessions)
				assert.GreaterOrEqual(t, c.MostAtOnce, 2, "%s: sessions ran statements at the same time", s.Name)
				assert.LessOrEqual(t, c.SessionsSeen, 4)
				assert.Positive(t, c.InsertsPerSecond)
				assert.Positive(t, c.BatchP50Ms)
				assert.GreaterOrEqual(t, c.BatchP99Ms, c.BatchP50Ms)
				require.NotEmpty(t, c.Waits)
				total := 0.0
				for _, w := range c.Waits {
					assert.NotEmpty(t, w.Event)
					total += w.Share
				}
				assert.InDelta(t, 1, total, 1e-9, "%s: wait shares add up to the samples", s.Name)
				if eng == engine.MySQL {
					assert.Contains(t, c.Server, "innodb_row_lock_waits")
					assert.Contains(t, c.Server, "innodb_log_waits")
				}
			}
			var b bytes.Buffer
			require.NoError(t, r.WriteTable(&b))
			assert.Contains(t, b.String(), "CONCURRENT WRITERS")
			assert.Regexp(t, `(?m)^\s+uuidv4\s+4\s+[\d,]+\s+[\d.]+\s`, b.String())
			b.Reset()
			require.NoError(t, r.WriteHTML(&b))
			assert.Contains(t, b.String(), "CONCURRENT WRITERS")
			assert.Contains(t, b.String(), `data-chart="reads-`+eng+`" data-figures="`+eng+`" data-keys="lookup_pages,lookup_pages_newest"`)
		})
	}
}

// TestConcurrentOptions: Concurrent needs K > 1 connections and a
// server, and is not for a --like run.
func TestConcurrentOptions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{Concurrent: true, Writers: 1, PostgresDSN: "postgres://x@127.0.0.1:1/x"}, "Concurrent needs Writers = 2..=1024, the connections that insert at once; have 1"},
		{Options{Concurrent: true}, "Concurrent loads into a server; want PostgresDSN or MySQLDSN"},
		{Options{Concurrent: true, PostgresDSN: "postgres://x@127.0.0.1:1/x", Like: "public.orders"}, "Concurrent is not for a --like run"},
	} {
		_, err := tt.opts.withDefaults()
		require.ErrorIs(t, err, ErrOptions)
		assert.Contains(t, err.Error(), tt.want)
	}
}
