package spider

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/innodb"
)

// Topology is how a Spider table spreads its rows over the shards.
type Topology int

const (
	// Range partitions the key's space into equal ranges, one per shard,
	// as a store pre-split evenly over the key's space is (TiDB's
	// PRE_SPLIT_REGIONS, a Vitess range-sharded keyspace on the key):
	// BIGINT keys by RANGE on 0 to 2^63, binary keys by RANGE COLUMNS on
	// their leading bytes.
	Range Topology = iota
	// Hash puts each row in one of BucketsPerShard x N buckets, from a hash
	// of its key, as CockroachDB's hash-sharded indexes do: a shard column
	// (FNV-1a 32 of the key's bytes, modulo the buckets) leads the primary
	// key and the table is partitioned by LIST on it, shard i holding the
	// buckets b with b mod N = i. MariaDB's own PARTITION BY KEY is not
	// used: its hash of a BIGINT is uneven (on 4 partitions, 39.5% of
	// 100,000 random keys and 42% of a counter's went to one).
	Hash
)

// BucketsPerShard is how many hash buckets each shard holds.
const BucketsPerShard = 4

// Name is the engine's name for the topology.
func (t Topology) Name() string {
	if t == Hash {
		return engine.SpiderHash
	}
	return engine.SpiderRange
}

// windows is how many parts of a load the busiest shard's share is
// measured over, besides the whole load.
const windows = 10

// flushTimeout bounds the wait for a backend's dirty pages.
const flushTimeout = time.Minute

// Engine loads each key set into a Spider table of one topology on a
// cluster, through the front server, and measures on the backends where
// the inserts went: each shard's share of the rows, over the whole load
// and over each tenth of it; the pages each shard wrote; and the insert
// rate and batch latency through one connection and through writers at
// once. Two Engines, one per topology, share a cluster, which one of
// them closes.
type Engine struct {
	c            *Cluster
	topo         Topology
	writers      int
	closeCluster bool
}

// New returns the engine of topology t on c; writers > 1 adds a load
// through that many connections at once. With closeCluster, Close closes
// the cluster.
func New(c *Cluster, t Topology, writers int, closeCluster bool) *Engine {
	return &Engine{c: c, topo: t, writers: writers, closeCluster: closeCluster}
}

// Info names the engine and the cluster.
func (e *Engine) Info() engine.Info {
	how := "range partitions over the key's space"
	if e.topo == Hash {
		how = fmt.Sprintf("LIST partitions of %d hash buckets (FNV-1a 32 of the key)", BucketsPerShard*e.c.Shards())
	}
	return engine.Info{
		Name: e.topo.Name(), Version: "MariaDB " + e.c.Version() + " Spider",
		Settings: fmt.Sprintf("%d InnoDB backends started by the run, %s", e.c.Shards(), how),
	}
}

// Close closes the cluster if New was asked to.
func (e *Engine) Close(ctx context.Context) error {
	if !e.closeCluster {
		return nil
	}
	return e.c.Close(ctx)
}

// Load creates the table on every backend and the Spider table over them
// on the front, inserts l's keys through the front in batches, and
// returns the figures; the tables are dropped at the end.
func (e *Engine) Load(ctx context.Context, l engine.Load) (engine.Figures, error) {
	table := l.Table + "_" + strings.TrimPrefix(e.topo.Name(), "spider-")
	fig := engine.Figures{Engine: e.topo.Name(), ColumnType: innodb.Column(l), Metrics: map[string]float64{}}
	fail := func(what string, err error) (engine.Figures, error) {
		return fig, fmt.Errorf("compare: %s: %s %s: %w", e.topo.Name(), what, table, err)
	}
	if err := e.create(ctx, table, l); err != nil {
		return fail("create", err)
	}
	defer e.drop(context.WithoutCancel(ctx), table)
	n, shards := l.Keys.N(), e.c.Shards()
	if err := e.flush(ctx); err != nil {
		return fail("flush before", err)
	}
	pagesBefore, err := e.counters(ctx, "Innodb_pages_written")
	if err != nil {
		return fail("read", err)
	}
	writesBefore, err := e.counters(ctx, "Handler_write")
	if err != nil {
		return fail("read", err)
	}
	conn, err := e.c.front.db.Conn(ctx)
	if err != nil {
		return fail("connect to the front", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET @idkit_payload = ?", l.Value); err != nil {
		return fail("set payload", err)
	}
	insert := e.inserter(conn, table, l)
	var latencies []time.Duration
	var idx []int
	busiestWindow, windowEnd, last := 0.0, (n+windows-1)/windows, writesBefore
	spent, err := l.Batches(func(lo, hi int) error {
		idx = idx[:0]
		for i := lo; i < hi; i++ {
			idx = append(idx, i)
		}
		began := time.Now()
		if err := insert(ctx, idx); err != nil {
			return err
		}
		latencies = append(latencies, time.Since(began))
		if hi >= windowEnd || hi == n {
			now, err := e.counters(ctx, "Handler_write")
			if err != nil {
				return err
			}
			busiestWindow = max(busiestWindow, busiest(diff(now, last)))
			last, windowEnd = now, hi+(n+windows-1)/windows
		}
		return nil
	}, nil)
	if err != nil {
		return fail("load", err)
	}
	if err := e.flush(ctx); err != nil {
		return fail("flush after", err)
	}
	pagesAfter, err := e.counters(ctx, "Innodb_pages_written")
	if err != nil {
		return fail("read", err)
	}
	rows, err := e.rows(ctx, table)
	if err != nil {
		return fail("count rows of", err)
	}
	if total := sum(rows); total != int64(n) {
		return fail("count rows of", fmt.Errorf("%d rows on the shards after inserting %d keys", total, n))
	}
	if writes := sum(diff(last, writesBefore)); writes != int64(n) {
		return fail("count writes to", fmt.Errorf("the backends wrote %d rows for %d keys", writes, n))
	}
	pages := diff(pagesAfter, pagesBefore)
	m := fig.Metrics
	m["busiest_share"] = busiest(rows)
	m["busiest_share_window"] = busiestWindow
	m["inserts_per_second"] = engine.Rate(n, spent)
	slices.Sort(latencies)
	m["batch_p99_ms"] = engine.Ms(engine.Quantile(latencies, 0.99))
	m["pages_written_per_1000"] = engine.PerThousand(float64(sum(pages)), n)
	m["busiest_pages_share"] = busiest(pages)
	for i := range shards {
		m["shard"+strconv.Itoa(i)+"_share"] = float64(rows[i]) / float64(n)
		m["shard"+strconv.Itoa(i)+"_pages_per_1000"] = engine.PerThousand(float64(pages[i]), n)
	}
	model := Model(l, e.topo, shards)
	m["model_busiest_share"] = busiest(model)
	if !slices.Equal(model, rows) {
		return fail("check", fmt.Errorf("the shards hold %v rows, and the key's partition function puts %v on them", rows, model))
	}
	for k, v := range Moves(l, e.topo, shards) {
		m[k] = v
	}
	if e.writers > 1 {
		c, err := e.loadConcurrent(ctx, table+"_c", l)
		if err != nil {
			return fail("load at once", err)
		}
		m["concurrent_inserts_per_second"] = c.InsertsPerSecond
		m["concurrent_batch_p99_ms"] = c.BatchP99Ms
	}
	return fig, nil
}

// loadConcurrent inserts l's keys into a new table through e.writers
// connections at once, writer w inserting keys w, w+K, ...
func (e *Engine) loadConcurrent(ctx context.Context, table string, l engine.Load) (*engine.ConcurrentLoad, error) {
	if err := e.create(ctx, table, l); err != nil {
		return nil, err
	}
	defer e.drop(context.WithoutCancel(ctx), table)
	sessions := make([]engine.Session, e.writers)
	for w := range sessions {
		conn, err := e.c.front.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET @idkit_payload = ?", l.Value); err != nil {
			return nil, err
		}
		sessions[w] = engine.Session{ID: "writer " + strconv.Itoa(w), Insert: e.inserter(conn, table, l)}
	}
	none := func(context.Context) ([]string, []string, error) { return nil, nil, nil }
	return engine.RunConcurrent(ctx, l, sessions, none)
}

// create creates table on every backend and the Spider table over them on
// the front.
func (e *Engine) create(ctx context.Context, table string, l engine.Load) error {
	col := innodb.Column(l)
	cols, key := "id "+col+" NOT NULL, payload BINARY("+strconv.Itoa(len(l.Value))+") NOT NULL", "id"
	if e.topo == Hash {
		cols, key = "shard SMALLINT UNSIGNED NOT NULL, "+cols, "shard, id"
	}
	for _, b := range e.c.backends {
		if _, err := b.conn.ExecContext(ctx, fmt.Sprintf("CREATE TABLE idkit.%s (%s, PRIMARY KEY (%s)) ENGINE=InnoDB", table, cols, key)); err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
	}
	var parts []string
	shards := e.c.Shards()
	for i := range shards {
		srv := fmt.Sprintf(`COMMENT = 'srv "s%d"'`, i)
		switch {
		case e.topo == Hash:
			var buckets []string
			for b := i; b < BucketsPerShard*shards; b += shards {
				buckets = append(buckets, strconv.Itoa(b))
			}
			parts = append(parts, fmt.Sprintf("PARTITION p%d VALUES IN (%s) %s", i, strings.Join(buckets, ", "), srv))
		case i == shards-1:
			parts = append(parts, fmt.Sprintf("PARTITION p%d VALUES LESS THAN (MAXVALUE) %s", i, srv))
		default:
			parts = append(parts, fmt.Sprintf("PARTITION p%d VALUES LESS THAN (%s) %s", i, rangeBound(l, i+1, shards), srv))
		}
	}
	by := "LIST (shard)"
	if e.topo == Range {
		by = "RANGE (id)"
		if !l.Bigint() {
			by = "RANGE COLUMNS (id)"
		}
	}
	_, err := e.c.front.conn.ExecContext(ctx, fmt.Sprintf(
		`CREATE TABLE idkit.%s (%s, PRIMARY KEY (%s)) ENGINE=SPIDER COMMENT='wrapper "mysql", table "%s"' PARTITION BY %s (%s)`,
		table, cols, key, table, by, strings.Join(parts, ", ")))
	if err != nil {
		return fmt.Errorf("front: %w", err)
	}
	return nil
}

// drop drops table on the front and on every backend.
func (e *Engine) drop(ctx context.Context, table string) {
	e.c.front.conn.ExecContext(ctx, "DROP TABLE IF EXISTS idkit."+table)
	for _, b := range e.c.backends {
		b.conn.ExecContext(ctx, "DROP TABLE IF EXISTS idkit."+table)
	}
}

// inserter returns a function that inserts the keys of the given indices
// in one statement through conn; a statement is built once per batch size.
func (e *Engine) inserter(conn *sql.Conn, table string, l engine.Load) func(ctx context.Context, idx []int) error {
	row, cols := "(?, @idkit_payload),", "id, payload"
	if e.topo == Hash {
		row, cols = "(?, ?, @idkit_payload),", "shard, id, payload"
	}
	stmts := map[int]string{}
	buckets := BucketsPerShard * e.c.Shards()
	var args []any
	return func(ctx context.Context, idx []int) error {
		args = args[:0]
		for _, i := range idx {
			if e.topo == Hash {
				args = append(args, Bucket(l.Keys.At(i), buckets))
			}
			args = append(args, innodb.Arg(l, i))
		}
		q, ok := stmts[len(idx)]
		if !ok {
			q = "INSERT INTO idkit." + table + " (" + cols + ") VALUES " + strings.TrimSuffix(strings.Repeat(row, len(idx)), ",")
			stmts[len(idx)] = q
		}
		_, err := conn.ExecContext(ctx, q, args...)
		return err
	}
}

// flush flushes every backend at once (server.flush).
func (e *Engine) flush(ctx context.Context) error {
	errs := make([]error, len(e.c.backends))
	var wg sync.WaitGroup
	for i, b := range e.c.backends {
		wg.Go(func() { errs[i] = b.flush(ctx, flushTimeout) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// counters reads a global status counter of every backend.
func (e *Engine) counters(ctx context.Context, name string) ([]int64, error) {
	out := make([]int64, len(e.c.backends))
	for i, b := range e.c.backends {
		v, err := b.status(ctx, name)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// rows counts table's rows on each backend.
func (e *Engine) rows(ctx context.Context, table string) ([]int64, error) {
	out := make([]int64, len(e.c.backends))
	for i, b := range e.c.backends {
		if err := b.conn.QueryRowContext(ctx, "SELECT count(*) FROM idkit."+table).Scan(&out[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", b.name, err)
		}
	}
	return out, nil
}

// rangeBound is the lower bound of range i of shards over l's key space:
// i/shards of 2^63 for BIGINT keys, of the leading 8 bytes for binary
// keys, as SQL.
func rangeBound(l engine.Load, i, shards int) string {
	if l.Bigint() {
		return strconv.FormatUint(bigintBound(i, shards), 10)
	}
	b := make([]byte, l.Keys.Len)
	var lead [8]byte
	binary.BigEndian.PutUint64(lead[:], binaryBound(i, shards))
	copy(b, lead[:])
	return "X'" + hex.EncodeToString(b) + "'"
}

// bigintBound and binaryBound are the lower bounds of range i of shards
// over 0..2^63 and over the leading 8 bytes (0..2^64).
func bigintBound(i, shards int) uint64 { return uint64(i) * (1 << 63 / uint64(shards)) }
func binaryBound(i, shards int) uint64 { return uint64(i) * (math.MaxUint64 / uint64(shards)) }

func diff(a, b []int64) []int64 {
	out := make([]int64, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// busiest is the largest share of v's total, 0 when it is 0.
func busiest(v []int64) float64 {
	total := sum(v)
	if total == 0 {
		return 0
	}
	return float64(slices.Max(v)) / float64(total)
}
