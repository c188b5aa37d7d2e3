package compare

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	pebbledb "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/idkit/idkit/compare/internal/engine/pebble"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pebbleOnly returns options that run the embedded bbolt (which every run
// has) at one fill and Pebble.
func pebbleOnly(t *testing.T, n, writers int, schemes string) Options {
	t.Helper()
	s, err := scheme.Select(schemes)
	require.NoError(t, err)
	return Options{N: n, Writers: writers, Schemes: s, NoSQLite: true, SpeedTime: time.Millisecond, Dir: t.TempDir(),
		Fills: []float64{0.9}, Engine: engine.Pebble}
}

// TestPebbleEveryScheme loads every scheme's keys into Pebble and reads
// them back: every row is there, and every point lookup (which checks
// the value it reads) and range scan finds its rows. It loads 50,000
// keys per scheme, 40,000 under -short: more than Pebble's 4 MiB memtable
// either way, so that the load flushes and settles; under the race
// detector, three schemes'.
func TestPebbleEveryScheme(t *testing.T) {
	t.Parallel()
	n := 50_000
	if testing.Short() {
		n = 40_000
	}
	r, err := Run(pebbleOnly(t, n, 2, everySchemeUnlessRace()))
	require.NoError(t, err)
	require.Equal(t, engine.Pebble, r.Engine(engine.Pebble).Name)
	require.Empty(t, r.Engine(engine.Pebble).Skipped)
	for _, s := range r.Schemes {
		for _, run := range s.Runs {
			l, ok := run.EngineLoad(engine.Pebble)
			require.True(t, ok, "%s: no pebble load", s.Name)
			want := float64(n - run.Order.Duplicates)
			assert.Equal(t, want, l.Metrics["rows"], "%s, %d writers: rows read back", s.Name, run.Writers)
			assert.GreaterOrEqual(t, l.Metrics["newest_scan_rows"], 1.0, "%s: the scan reads the newest rows at least", s.Name)
			assert.Equal(t, float64(n/10), l.Metrics["expiry_rows"], "%s: a tenth of the rows expired", s.Name)
			assert.GreaterOrEqual(t, l.Metrics["expiry_reclaimed"], engine.ReclaimedShare, "%s: the expired rows' space is reclaimed", s.Name)
		}
	}
}

// TestPebbleDirection checks, at N = 200,000 with one writer, what follows
// from how an LSM tree with Pebble's defaults takes ordered and random
// keys: the counter's and TraceId's tables overlap nothing, so that no
// compaction rewrites them, while UUIDv4's are rewritten (at least twice
// the counter's write amplification); the newest 1% of random keys lie
// all over the tree; a range deletion expires the oldest tenth of
// time-ordered keys, where random keys delete row by row and write at
// least 10 times the bytes to reclaim the space.
func TestPebbleDirection(t *testing.T) {
	skipUnderRace(t)
	t.Parallel()
	r, err := Run(pebbleOnly(t, 200_000, 1, "counter,traceid,decimalid,uuidv4"))
	require.NoError(t, err)
	f := map[string]map[string]float64{}
	for _, s := range r.Schemes {
		f[s.Name] = loadFigures(t, s.Runs[0], engine.Pebble)
		t.Logf("%s: %v", s.Name, f[s.Name])
	}
	c, u := f["counter"], f["uuidv4"]
	assert.Less(t, c["write_amp"], 1.2, "the counter's tables are flushed once")
	assert.Zero(t, c["bytes_compacted"], "no compaction rewrites the counter's tables")
	assert.Greater(t, u["bytes_compacted"], u["bytes_in"], "compactions rewrite uuidv4's tables")
	assert.Greater(t, u["write_amp"], 2*c["write_amp"], "uuidv4's are rewritten")
	assert.Greater(t, u["newest_scan_blocks"], 10*c["newest_scan_blocks"])
	assert.Equal(t, 1.0, c["newest_scan_rows"])

	for name, ranged := range map[string]float64{"counter": 1, "traceid": 1, "decimalid": 0, "uuidv4": 0} {
		assert.Equal(t, ranged, f[name]["expiry_range"], "%s: a range deletion iff the keys sort rows by age", name)
	}
	assert.GreaterOrEqual(t, u["expiry_bytes"], 10*c["expiry_bytes"], "the counter's expiry writes at least 10x fewer bytes than uuidv4's")
	assert.Equal(t, 1.0, u["expiry_manual"], "uuidv4's tombstones wait for a compaction")
	assert.Greater(t, u["expiry_scan_skipped"], 2_000.0, "a scan over uuidv4's expired range steps over its tombstones")

	// The verdict ranks on each family and says what changes, from
	// these figures.
	require.NotNil(t, r.Families)
	require.Len(t, r.Families.Verdicts, 2)
	bt, lsm := r.Families.Verdicts[0], r.Families.Verdicts[1]
	assert.Equal(t, [2]string{report.FamilyBTree, engine.Bbolt}, [2]string{bt.Family, bt.Engine})
	assert.Equal(t, [2]string{report.FamilyLSM, engine.Pebble}, [2]string{lsm.Family, lsm.Engine})
	assert.Same(t, r.Verdict, lsm, "the run's verdict is on --engine pebble")
	for _, v := range r.Families.Verdicts {
		assert.NotEmpty(t, v.Ranked, "%s ranks schemes", v.Family)
		assert.Contains(t, report.RankedNames(v), "traceid", v.Family)
	}
	rejected := func(v *report.Verdict) []string {
		var out []string
		for _, x := range v.Rejected {
			out = append(out, x.Scheme)
		}
		return out
	}
	assert.Contains(t, rejected(bt), "uuidv4")
	assert.Contains(t, rejected(lsm), "uuidv4")
	changes := strings.Join(r.Families.Changes, "\n")
	t.Log(changes)
	assert.Regexp(t, `uuidv4, the costliest on bbolt \(pages written \d+\.\dx the counter's\), writes \d+\.\dx the counter's bytes to tables on pebble: random keys cost an LSM tree less than a B-tree`, changes)
	assert.Regexp(t, `by a range deletion \(2 schemes whose keys sort rows by age\) .* row by row \(2 schemes\) .*: only keys that sort rows by age expire cheaply`, changes)
	var text bytes.Buffer
	require.NoError(t, r.WriteTable(&text))
	for _, want := range []string{"engine bbolt, 1 writer(s), a B-tree", "engine pebble, 1 writer(s), an LSM tree", report.FamiliesTitle, "LSM TREE: WRITES, READS AND EXPIRY IN PEBBLE"} {
		assert.Contains(t, text.String(), want)
	}
}

// TestPebbleCannotJudgeWithoutCompactions loads 10,000 keys a scheme, which
// Pebble's 4 MiB memtable holds until the load's last flush: no compaction
// moves or rewrites a byte, every scheme writes its rows once, and the
// LSM verdict ranks nothing and asks for a larger -n instead of ranking
// UUIDv4 beside the ordered keys.
func TestPebbleCannotJudgeWithoutCompactions(t *testing.T) {
	t.Parallel()
	r, err := Run(pebbleOnly(t, 10_000, 1, "counter,traceid,uuidv4"))
	require.NoError(t, err)
	for _, s := range r.Schemes {
		f := loadFigures(t, s.Runs[0], engine.Pebble)
		require.Zero(t, f["bytes_compacted"]+f["bytes_moved"], "%s: a compaction ran at 10,000 keys", s.Name)
	}
	require.NotNil(t, r.Verdict)
	assert.Equal(t, engine.Pebble, r.Verdict.Engine)
	assert.Empty(t, r.Verdict.Ranked)
	assert.Contains(t, r.Verdict.CannotJudge, "no compaction moved or rewrote a byte in any load")
	assert.Contains(t, r.Verdict.CannotJudge, "run with a larger -n (now 10,000)")
	assert.Contains(t, unjudged(r.Verdict), "uuidv4")
}

func minBytes(a, b []byte) []byte {
	if bytes.Compare(b, a) < 0 {
		return b
	}
	return a
}

func maxBytes(a, b []byte) []byte {
	if bytes.Compare(b, a) > 0 {
		return b
	}
	return a
}

// TestPebbleAgreesWithMetrics loads the same keys through the engine and
// through a plain program that writes them to Pebble with the options the
// engine states (Pebble's defaults, bloom filters of 10 bits per key on
// every level, no compression, no read-triggered compactions, in memory)
// in batches of 1,000, waits out the flushes and compactions each batch
// starts, looks up the same keys, expires the same rows, and reads what
// Pebble reports in Metrics(). The figures must agree within 5%.
// IDKIT_PEBBLE_AGREE_N loads another N than 100,000 (BENCHMARKS.md:
// 1,000,000).
func TestPebbleAgreesWithMetrics(t *testing.T) {
	skipUnderRace(t)
	t.Parallel()
	n := 100_000
	if v := os.Getenv("IDKIT_PEBBLE_AGREE_N"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err, "IDKIT_PEBBLE_AGREE_N")
	}
	for _, name := range []string{"counter", "uuidv4"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := scheme.Lookup(name)
			require.NoError(t, err)
			gens, err := s.New(1)
			require.NoError(t, err)
			keys, err := scheme.Generate(gens, s.KeyLen, n, nil)
			require.NoError(t, err)
			require.NoError(t, scheme.CloseGenerators(gens))
			value := make([]byte, DefaultValueSize)
			for i := range value {
				value[i] = byte(i)
			}
			l := engine.Load{Keys: keys, Int63: s.Design().Int63, ByAge: scheme.SortsByAge(s.Design()), Value: value, Batch: 1000, Table: "plain"}
			e, err := pebble.Open(t.TempDir(), false)
			require.NoError(t, err)
			got, err := e.Load(context.Background(), l)
			require.NoError(t, err)
			want := plainPebble(t, l)
			t.Logf("engine %v", got.Metrics)
			t.Logf("plain  %v", want)
			for key, w := range want {
				g, ok := got.Metrics[key]
				require.True(t, ok, "the engine has no %s", key)
				if w == 0 {
					assert.Zero(t, g, key)
					continue
				}
				assert.InEpsilon(t, w, g, 0.05, key)
			}
		})
	}
}

// plainPebble writes l's keys to Pebble as a plain program would, with
// the options the engine states spelled out, and returns Pebble's own
// figures under the engine's names.
func plainPebble(t *testing.T, l engine.Load) map[string]float64 {
	t.Helper()
	wake := make(chan struct{}, 1)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	o := &pebbledb.Options{
		FS:            vfs.NewMem(),
		Logger:        quietLogger{},
		EventListener: &pebbledb.EventListener{FlushEnd: func(pebbledb.FlushInfo) { poke() }, CompactionEnd: func(pebbledb.CompactionInfo) { poke() }},
	}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		o.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	o.Experimental.ReadSamplingMultiplier = -1
	db, err := pebbledb.Open("plain", o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	quiet := func() {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			m := db.Metrics()
			waiting, _ := db.GetWaitingCompaction()
			if m.Flush.NumInProgress == 0 && m.Compact.NumInProgress == 0 && !waiting {
				return
			}
			require.True(t, time.Now().Before(deadline), "Pebble's flushes and compactions did not end within 2 minutes")
			select {
			case <-wake:
			case <-time.After(time.Millisecond):
			}
		}
	}
	n := l.Keys.N()
	for lo := 0; lo < n; lo += 1000 {
		b := db.NewBatch()
		for i := lo; i < min(lo+1000, n); i++ {
			require.NoError(t, b.Set(l.Keys.At(i), l.Value, nil))
		}
		require.NoError(t, b.Commit(pebbledb.NoSync))
		require.NoError(t, b.Close())
		quiet()
	}
	require.NoError(t, db.Flush())
	quiet()
	m := db.Metrics()
	total := m.Total()
	out := map[string]float64{
		"write_amp":   total.WriteAmp() - 1, // Total counts the log's bytes as flushed
		"bytes_moved": float64(total.TableBytesMoved),
		"table_bytes": float64(total.TablesSize),
		"read_amp":    float64(m.ReadAmp()),
	}
	spread, newest := engine.LookupKeys(n)
	for _, q := range []struct {
		key  string
		keys []int
	}{{"lookup", spread}, {"lookup_newest", newest}} {
		before := db.Metrics()
		for _, i := range q.keys {
			v, closer, err := db.Get(l.Keys.At(i))
			require.NoError(t, err)
			require.Equal(t, l.Value, v)
			require.NoError(t, closer.Close())
		}
		after := db.Metrics()
		k := float64(len(q.keys))
		out[q.key+"_blocks"] = float64(after.BlockCache.Hits+after.BlockCache.Misses-before.BlockCache.Hits-before.BlockCache.Misses) / k
		out[q.key+"_filter_hits"] = float64(after.Filter.Hits-before.Filter.Hits) / k
	}
	// The oldest tenth: by one range deletion of the least keys when they
	// sort rows by age, else the first rows one by one, then Pebble's own
	// compactions, and one of the range when they leave the space.
	written := func(m *pebbledb.Metrics) float64 {
		tot := m.Total()
		return float64(m.WAL.BytesWritten + tot.TableBytesFlushed - tot.TableBytesIn + tot.TableBytesCompacted)
	}
	// From a tree compacted into its last level, as the engine does.
	require.NoError(t, db.Compact(context.Background(), []byte{}, bytes.Repeat([]byte{0xff}, l.Keys.Len+1), false))
	quiet()
	before := db.Metrics()
	d := n / 10
	var lower, upper []byte
	if l.ByAge {
		sorted := make([][]byte, n)
		for i := range sorted {
			sorted[i] = l.Keys.At(i)
		}
		slices.SortFunc(sorted, bytes.Compare)
		lower, upper = sorted[0], sorted[d]
		require.NoError(t, db.DeleteRange(lower, upper, pebbledb.NoSync))
	} else {
		lower, upper = slices.Clone(l.Keys.At(0)), slices.Clone(l.Keys.At(0))
		for lo := 0; lo < d; lo += 1000 {
			b := db.NewBatch()
			for i := lo; i < min(lo+1000, d); i++ {
				lower, upper = minBytes(lower, l.Keys.At(i)), maxBytes(upper, l.Keys.At(i))
				require.NoError(t, b.Delete(l.Keys.At(i), nil))
			}
			require.NoError(t, b.Commit(pebbledb.NoSync))
			require.NoError(t, b.Close())
			quiet()
		}
		upper = append(upper, 0)
	}
	require.NoError(t, db.Flush())
	quiet()
	expired := float64(before.Total().TablesSize) / 10
	if float64(before.Total().TablesSize-db.Metrics().Total().TablesSize) < 0.9*expired {
		require.NoError(t, db.Compact(context.Background(), lower, upper, false))
		quiet()
	}
	out["expiry_bytes"] = written(db.Metrics()) - written(before)
	return out
}

// quietLogger keeps Pebble's log lines out of the test's output.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}
