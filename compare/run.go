package compare

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/bbolt"
	"github.com/idkit/idkit/compare/internal/engine/spider"
)

// Defaults for Options fields left zero. DefaultN and DefaultWriters are
// chosen so that a run of every scheme on bbolt and SQLite takes about 90 s
// on a 2-core machine and still separates ordered from random keys by an
// order of magnitude in pages written.
const (
	DefaultN         = 200_000
	DefaultWriters   = 4
	DefaultBatchSize = 1_000
	DefaultValueSize = 100
	DefaultSpeedTime = 100 * time.Millisecond
)

// DefaultFills are the bucket fill settings each key set is loaded with:
// bbolt's default and a high one.
var DefaultFills = []float64{0.5, 0.9}

// Limits of the options, named in the errors for values outside them.
const (
	MaxN         = 50_000_000
	MaxWriters   = report.MaxWriters // the smallest node field measured: 10 bits
	MaxBatchSize = 1_000_000
	MaxValueSize = 1 << 16
	MinFill      = 0.1 // bbolt's own bounds on Bucket.FillPercent
	MaxFill      = 1.0
)

// Options configure a Run. The zero value of each field selects its
// default.
type Options struct {
	// N is the number of keys per load; 0 means DefaultN.
	N int
	// Writers is K, the number of interleaved writers of the second load
	// of each scheme (the first has one); 0 means DefaultWriters. With 1
	// there is only the one-writer load.
	Writers int
	// Schemes are the schemes to run; nil means all.
	Schemes []scheme.Scheme
	// Fills are the bucket FillPercent settings to load with; nil means
	// DefaultFills.
	Fills []float64
	// BatchSize is inserts per transaction; 0 means DefaultBatchSize.
	BatchSize int
	// ValueSize is the length of each value; 0 means DefaultValueSize.
	ValueSize int
	// PageSize is bbolt's page size; 0 means bbolt's default (the OS
	// page size).
	PageSize int
	// Sync makes every commit fsync, as bbolt does by default. Off, the
	// loads measure the B+tree and the writes to the page cache, which
	// keeps a shared machine's disk out of the figures.
	Sync bool
	// SpeedTime is how long each generation-speed round runs; 0 means
	// DefaultSpeedTime.
	SpeedTime time.Duration
	// Dir is where the bbolt files go (each is removed after its load);
	// empty means a new temporary directory.
	Dir string
	// Progress, if not nil, receives the run's progress: one line per
	// finished step, or with ProgressBar a bar redrawn in place with
	// carriage returns, which only a terminal shows as one line.
	Progress io.Writer
	// ProgressBar draws Progress as a bar; set it when Progress is a
	// terminal.
	ProgressBar bool

	// NoSQLite skips the SQLite loads, which run by default.
	NoSQLite bool
	// NoPebble skips the Pebble loads, which run by default.
	NoPebble bool
	// NoMyRocks skips the MyRocks loads, which run whenever MySQLDSN names
	// a MariaDB server that has the ROCKSDB engine.
	NoMyRocks bool
	// PostgresDSN and MySQLDSN name the PostgreSQL and MariaDB/MySQL
	// servers to load into; empty skips the engine. The run creates a
	// schema (database) of its own there and drops it at the end.
	PostgresDSN string
	MySQLDSN    string
	// CheckpointEvery is the interval, in inserts, at which the database
	// loads checkpoint (PostgreSQL), flush the table (InnoDB) or
	// checkpoint the WAL (SQLite); 0 means after every batch. A long-lived
	// table is far larger than the inserts between two checkpoints, so
	// nearly every page an insert changes is clean when it does: a
	// checkpoint per batch models that at a small N, and makes each batch
	// pay for every page it changes, as each bbolt commit does.
	CheckpointEvery int
	// Need are the constraints the verdict ranks schemes under, and
	// Engine the engine whose figures it uses; empty means the most
	// server-like engine measured (postgres, mysql, sqlite, bbolt).
	Need   report.Need
	Engine string

	// Like names a table of the user's, schema.table (see ParseLike): the
	// PostgreSQL and MariaDB/MySQL loads then go into copies of it, with
	// its columns and secondary indexes and the other columns of at most
	// Sample of its rows (0: enough that no row fills more than two rows
	// of a copy, within MaxSample and MaxSampleBytes). The run reads the
	// table in one read-only snapshot, with no lock, and never writes it.
	Like   string
	Sample int
	// ScratchPostgresDSN and ScratchMySQLDSN name the servers (or other
	// databases) where a --like run builds its copies, when the table's
	// server (PostgresDSN, MySQLDSN) should only be read: a replica as
	// the source and a staging server as the scratch. Empty puts the
	// copies in a schema of the run's own on the table's server, where
	// the run then does no server-wide work (no CHECKPOINT, FLUSH or
	// global setting) and reports the load it caused.
	ScratchPostgresDSN string
	ScratchMySQLDSN    string

	// Concurrent also loads the Writers-writer keys into PostgreSQL and
	// MariaDB/MySQL through Writers connections at once, each inserting
	// its own writer's keys, and reports the rate, the batches' latency
	// and what the sessions waited on (see ConcurrentLoad).
	Concurrent bool

	// MaxLoad and MaxLag throttle the PostgreSQL and MariaDB/MySQL loads,
	// as pt-online-schema-change's options of those names do: between two
	// batches a load waits, reading the server every ThrottlePoll, while
	// more than MaxLoad other sessions run a statement there (PostgreSQL's
	// active client sessions; MariaDB's Threads_running) or, on
	// PostgreSQL, a standby's replay lag is over MaxLag. 0 sets no limit.
	MaxLoad int
	MaxLag  time.Duration

	// Spider also loads every key set into MariaDB Spider tables over
	// Shards backends that the run starts on this machine (see package
	// doc), partitioned by range of the key and by its hash, and adds a
	// verdict per topology. It needs MariaDB's server and its Spider
	// plugin (Debian: mariadb-server, mariadb-plugin-spider), and touches
	// no server of the user's. Engine "spider", "spider-range" or
	// "spider-hash" sets it.
	Spider bool
	// Shards is how many backends the Spider tables spread over; 0 means
	// 4.
	Shards int
}

func (o Options) withDefaults() (Options, error) {
	if o.MaxLoad < 0 || o.MaxLoad > MaxMaxLoad {
		return o, fmt.Errorf("%w: MaxLoad = %d, want 0 (no limit) or 1..=%d sessions", ErrOptions, o.MaxLoad, MaxMaxLoad)
	}
	if o.MaxLag < 0 {
		return o, fmt.Errorf("%w: MaxLag = %s, want 0 (no limit) or more", ErrOptions, o.MaxLag)
	}
	if o.MaxLag > 0 && o.MySQLDSN != "" {
		return o, fmt.Errorf("%w: MaxLag reads the replay lag of PostgreSQL's standbys; a MariaDB/MySQL server does not know its replicas' lag: leave out the MariaDB/MySQL server, or MaxLag", ErrOptions)
	}
	if o.N == 0 {
		o.N = DefaultN
	}
	if o.Writers == 0 {
		o.Writers = DefaultWriters
	}
	if o.Schemes == nil {
		o.Schemes = scheme.Schemes()
	}
	if o.Fills == nil {
		o.Fills = DefaultFills
	}
	o.Fills = slices.Clone(o.Fills)
	o.Schemes = slices.Clone(o.Schemes)
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.ValueSize == 0 {
		o.ValueSize = DefaultValueSize
	}
	if o.SpeedTime == 0 {
		o.SpeedTime = DefaultSpeedTime
	}
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = o.BatchSize
	}
	checks := []struct {
		name     string
		v        int
		min, max int
	}{
		{"N", o.N, 1, MaxN},
		{"Writers", o.Writers, 1, MaxWriters},
		{"BatchSize", o.BatchSize, 1, MaxBatchSize},
		{"ValueSize", o.ValueSize, 1, MaxValueSize},
		{"CheckpointEvery", o.CheckpointEvery, 1, MaxN},
	}
	for _, c := range checks {
		if c.v < c.min || c.v > c.max {
			return o, fmt.Errorf("%w: %s = %d, want %d..=%d", ErrOptions, c.name, c.v, c.min, c.max)
		}
	}
	if o.PageSize != 0 && (o.PageSize < 1024 || o.PageSize > 1<<16 || o.PageSize&(o.PageSize-1) != 0) {
		return o, fmt.Errorf("%w: PageSize = %d, want 0 (the OS page size) or a power of two in 1024..=65536", ErrOptions, o.PageSize)
	}
	if len(o.Fills) == 0 {
		return o, fmt.Errorf("%w: Fills is empty, want at least one of %g..=%g", ErrOptions, MinFill, MaxFill)
	}
	for _, f := range o.Fills {
		if !(f >= MinFill && f <= MaxFill) {
			return o, fmt.Errorf("%w: fill %g, want %g..=%g", ErrOptions, f, MinFill, MaxFill)
		}
	}
	if len(o.Schemes) == 0 {
		return o, fmt.Errorf("%w: no schemes, want at least one of %s", ErrOptions, strings.Join(scheme.Names(), ", "))
	}
	switch o.Engine {
	case Spider:
		o.Spider, o.Engine = true, ""
	case engine.SpiderRange, engine.SpiderHash:
		o.Spider = true
	}
	if o.Engine != "" && !slices.Contains(EngineNames, o.Engine) {
		return o, fmt.Errorf("%w: Engine = %q, want one of %s, or %s for both Spider topologies", ErrOptions, o.Engine, strings.Join(EngineNames, ", "), Spider)
	}
	if o.Shards == 0 {
		o.Shards = spider.DefaultShards
	}
	if o.Shards < spider.MinShards || o.Shards > spider.MaxShards {
		return o, fmt.Errorf("%w: Shards = %d, want 0 (default %d) or %d..=%d", ErrOptions, o.Shards, spider.DefaultShards, spider.MinShards, spider.MaxShards)
	}
	if o.Spider {
		for _, s := range scheme.ForShards() {
			if !slices.ContainsFunc(o.Schemes, func(x scheme.Scheme) bool { return x.Name == s.Name }) {
				o.Schemes = append(o.Schemes, s)
			}
		}
	}
	if o.Spider && o.Like != "" {
		return o, fmt.Errorf("%w: Spider loads rows of a key and a payload, not copies of a --like table; leave out Spider or Like", ErrOptions)
	}
	if o.SpeedTime < 0 || o.SpeedTime > time.Minute {
		return o, fmt.Errorf("%w: SpeedTime = %v, want 0 (default %v) up to 1m", ErrOptions, o.SpeedTime, DefaultSpeedTime)
	}
	if o.Sample < 0 || o.Sample > engine.MaxSample {
		return o, fmt.Errorf("%w: Sample = %d, want 0 (the default) or 1..=%d", ErrOptions, o.Sample, engine.MaxSample)
	}
	if o.Like == "" && (o.ScratchPostgresDSN != "" || o.ScratchMySQLDSN != "") {
		return o, fmt.Errorf("%w: a scratch server is for the copies of a --like run; without Like the loads go to PostgresDSN and MySQLDSN", ErrOptions)
	}
	if (o.ScratchPostgresDSN != "" && o.PostgresDSN == "") || (o.ScratchMySQLDSN != "" && o.MySQLDSN == "") {
		return o, fmt.Errorf("%w: a scratch server without the server of the table to copy; want PostgresDSN with ScratchPostgresDSN and MySQLDSN with ScratchMySQLDSN", ErrOptions)
	}
	if o.Concurrent {
		switch {
		case o.Writers < 2:
			return o, fmt.Errorf("%w: Concurrent needs Writers = 2..=%d, the connections that insert at once; have %d", ErrOptions, MaxWriters, o.Writers)
		case o.PostgresDSN == "" && o.MySQLDSN == "":
			return o, fmt.Errorf("%w: Concurrent loads into a server; want PostgresDSN or MySQLDSN", ErrOptions)
		case o.Like != "":
			return o, fmt.Errorf("%w: Concurrent is not for a --like run, which must not load the source server with many sessions", ErrOptions)
		}
	}
	if o.Like != "" {
		if _, err := engine.ParseLike(o.Like); err != nil {
			return o, err
		}
		if o.PostgresDSN == "" && o.MySQLDSN == "" {
			return o, fmt.Errorf("%w %s: no server to read the table from; want --postgres DSN or --mysql DSN", engine.ErrLike, o.Like)
		}
	}
	return o, nil
}

// Run measures every scheme in opts and returns the report.
func Run(opts Options) (*report.Report, error) { return RunContext(context.Background(), opts) }

// RunContext is Run, stopped when ctx is done: between two steps, or in
// the middle of a database load. Whatever it created on a server is
// dropped either way.
func RunContext(ctx context.Context, opts Options) (_ *report.Report, err error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "idkit-compare-"); err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		defer os.RemoveAll(dir)
	}
	pageSize := o.PageSize
	if pageSize == 0 {
		pageSize = os.Getpagesize()
	}
	disk, err := EstimateDisk(o)
	if err != nil {
		return nil, err
	}
	if free, ok := freeSpace(dir); ok && free < disk.Peak {
		return nil, fmt.Errorf("%w: the run needs %s at once in %s, which has %s free; free some, point TMPDIR at a roomier directory, or lower -n",
			ErrNoSpace, engine.BytesText(disk.Peak), dir, engine.BytesText(free))
	}
	writerCounts := []int{1}
	if o.Writers > 1 {
		writerCounts = append(writerCounts, o.Writers)
	}

	r := &report.Report{
		Tool:    "idkit compare",
		Started: time.Now().UTC().Truncate(time.Second),
		Machine: machine(),
		Config: report.Config{
			N: o.N, Writers: o.Writers, Fills: o.Fills, BatchSize: o.BatchSize,
			ValueSize: o.ValueSize, PageSize: pageSize, Sync: o.Sync, SpeedTimeNs: o.SpeedTime.Nanoseconds(),
			CheckpointEvery: o.CheckpointEvery, Concurrent: o.Concurrent, Shards: shardsOf(o),
			Ranges: rangeModel(o),
		},
		Sources: map[string]string{
			"design":      "computed from each scheme's layout constants (or its library's own decoders), not measured",
			"design_text": "computed from design",
			"speed":       "measured in this run",
			"runs":        "measured in this run: keys generated back to back, their order and size, and their loads into every engine",
			"verdict":     "derived from the figures measured in this run and the design, under the stated constraints",
		},
	}
	engines, infos, likes, err := openEngines(ctx, o, dir)
	if err != nil {
		return nil, err
	}
	r.Engines, r.Like = infos, likes
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "disk: %s, in %s\n", disk, dir)
		for _, e := range engines {
			if s, ok := e.(engine.Server); ok {
				fmt.Fprintf(o.Progress, "%s: the run works in %s, which it drops at the end\n", e.Info().Name, s.Created())
			}
		}
	}
	defer func() {
		// Drop what the run created even when ctx ended it, within the
		// few seconds a user waits after Ctrl-C, and say what was dropped
		// and what, if anything, is left.
		if len(engines) == 0 {
			return
		}
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), engine.CleanupTime)
		defer cancel()
		var dropped []string
		var left []error
		for _, e := range engines {
			if err := e.Close(cleanup); err != nil {
				left = append(left, err)
			} else if s, ok := e.(engine.Server); ok {
				dropped = append(dropped, s.Created())
			}
		}
		if err == nil {
			return
		}
		if len(dropped) > 0 {
			err = fmt.Errorf("%w; dropped %s", err, strings.Join(dropped, " and "))
		}
		err = errors.Join(append([]error{err}, left...)...)
	}()
	if o.Like != "" {
		name, _ := engine.ParseLike(o.Like)
		r.Config.Like, r.Config.Sample = name.String(), o.Sample
		r.Sources["like"] = "read from the source servers' catalogs and statistics and a sample of the table's rows, in one read-only snapshot; the run never writes the table"
	}
	p := newProgress(o.Progress, o.ProgressBar, len(o.Schemes)*(1+len(writerCounts)*(1+len(o.Fills)+len(engines))))
	value := make([]byte, o.ValueSize)
	for i := range value {
		value[i] = byte(i)
	}
	start := time.Now()
	for _, s := range o.Schemes {
		if err := ctx.Err(); err != nil {
			p.finish()
			return nil, fmt.Errorf("compare: %w", err)
		}
		res, err := runScheme(ctx, s, o, writerCounts, pageSize, value, dir, engines, p)
		if err != nil {
			p.finish()
			return nil, fmt.Errorf("compare: %s: %w", s.Name, err)
		}
		r.Schemes = append(r.Schemes, res)
	}
	p.finish()
	for _, e := range engines {
		s, ok := e.(engine.Server)
		if !ok {
			continue
		}
		line, logBytes, err := s.ServerLoad(ctx)
		if err != nil {
			return nil, err
		}
		lt := r.LikeTable(e.Info().Name)
		if lt != nil && line != "" {
			lt.Notes = append(lt.Notes, line)
			lt.SourceLogBytes = logBytes
		}
		if t, ok := e.(engine.Throttled); ok && lt != nil {
			if note := t.Throttle().Note(); note != "" {
				lt.Notes = append(lt.Notes, note)
			}
		}
	}
	for _, e := range engines {
		if err := e.Close(ctx); err != nil {
			return nil, err
		}
	}
	engines = nil
	r.Seconds = time.Since(start).Seconds()
	r.Columns = r.FigureColumns()
	if r.Verdict, err = r.Decide(o.Need, o.Engine); err != nil {
		return nil, err
	}
	if r.Families, err = r.DecideFamilies(o.Need, r.Verdict); err != nil {
		return nil, err
	}
	if r.Topologies, err = r.DecideTopologies(o.Need, r.Verdict); err != nil {
		return nil, err
	}
	return r, nil
}

func runScheme(ctx context.Context, s scheme.Scheme, o Options, writerCounts []int, pageSize int, value []byte, dir string, engines []engine.Engine, p *progress) (report.Result, error) {
	d := s.Design()
	res := report.Result{
		Name: s.Name, Kind: s.Kind, Module: s.Module, Version: engine.ModuleVersion(s.Module),
		Summary: s.Summary, KeysNote: s.KeysNote,
		Design:     d,
		DesignText: report.DesignText{TimeOrder: d.TimeOrder(), Lifetime: d.Lifetime(), Rate: d.Rate()},
	}

	p.label(s.Name + ": generation speed")
	gens, err := s.New(1)
	if err != nil {
		return res, err
	}
	res.Speed, err = scheme.MeasureSpeed(gens[0], s.KeyLen, o.SpeedTime, d)
	if err := errors.Join(err, scheme.CloseGenerators(gens)); err != nil {
		return res, err
	}
	p.step(1)

	newKeys := s.New
	if s.Keys != nil {
		newKeys = s.Keys
	}
	for _, w := range writerCounts {
		run := report.WriterRun{Writers: w}
		p.label(fmt.Sprintf("%s: %s keys, %d writer(s)", s.Name, engine.Thousands(int64(o.N)), w))
		gens, err := newKeys(w)
		if err != nil {
			return res, err
		}
		keys, err := scheme.Generate(gens, s.KeyLen, o.N, func(done int) { p.partial(float64(done) / float64(o.N)) })
		if err := errors.Join(err, scheme.CloseGenerators(gens)); err != nil {
			return res, err
		}
		if s.After != nil {
			if line := s.After(); line != "" {
				res.KeysNote = strings.TrimPrefix(res.KeysNote+fmt.Sprintf("; %d writer(s): %s", w, line), "; ")
			}
		}
		run.Order, run.Size = scheme.Analyze(keys)
		run.Randomness = scheme.MeasureRandomness(keys)
		run.Ranges = rangeModel(o).Run(keys, d.Int63 && keys.Len == 8)
		p.step(1)
		for _, fill := range o.Fills {
			p.label(fmt.Sprintf("%s: bbolt, %d writer(s), fill %g", s.Name, w, fill))
			l, err := bbolt.Run(keys, bbolt.Config{
				Dir: dir, Fill: fill, Batch: o.BatchSize, Value: value, Sync: o.Sync, PageSize: o.PageSize,
				FileLabel: fmt.Sprintf("%s-w%d-f%g", s.Name, w, fill),
				OnCommit:  func(done int) { p.partial(float64(done) / float64(o.N)) },
			})
			if err != nil {
				return res, err
			}
			run.Loads = append(run.Loads, l)
			p.step(1)
		}
		for i, e := range engines {
			name := e.Info().Name
			p.label(fmt.Sprintf("%s: %s, %d writer(s)", s.Name, name, w))
			dl := engine.Load{
				Keys: keys, Int63: d.Int63, ByAge: scheme.SortsByAge(d), Value: value, Batch: o.BatchSize, CheckpointEvery: o.CheckpointEvery,
				Sync: o.Sync, Table: fmt.Sprintf("t_%s_w%d_%d", strings.ReplaceAll(s.Name, "-", "_"), w, i),
				OnBatch: func(done int) { p.partial(float64(done) / float64(o.N)) },
			}
			if t, ok := e.(engine.Throttled); ok && t.Throttle() != nil {
				dl.Pause = func() error { return t.Throttle().Wait(ctx) }
			}
			l, err := e.Load(ctx, dl)
			if err != nil {
				return res, err
			}
			if c, ok := e.(engine.ConcurrentLoader); ok && o.Concurrent && w > 1 {
				p.label(fmt.Sprintf("%s: %s, %d connections at once", s.Name, name, w))
				if l.Concurrent, err = c.LoadConcurrent(ctx, engine.Load{
					Keys: keys, Int63: d.Int63, Value: value, Batch: o.BatchSize,
					Table: fmt.Sprintf("t_%s_w%d_%d", strings.ReplaceAll(s.Name, "-", "_"), w, i),
				}, w); err != nil {
					return res, err
				}
			}
			run.Engines = append(run.Engines, l)
			p.step(1)
		}
		res.Runs = append(res.Runs, run)
	}
	return res, nil
}

// rangeModel is the range-partitioned store every run models its keys in:
// ranges split at N/64 rows (so that the table ends with 64 ranges or
// more), over Shards nodes.
func rangeModel(o Options) engine.RangeModel {
	return engine.RangeModel{Nodes: o.Shards, RangeRows: max(o.N/64, 100), PreSplit: 1}
}

// shardsOf is the number of shards of a run with Spider, 0 without.
func shardsOf(o Options) int {
	if !o.Spider {
		return 0
	}
	return o.Shards
}

func machine() report.Machine {
	return report.Machine{
		OS: runtime.GOOS, Arch: runtime.GOARCH, CPU: cpuModel(),
		CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
	}
}

// cpuModel returns the CPU model name on Linux, or "".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// progress reports done steps out of total: as a one-line bar with the
// current step's label, redrawn with a carriage return when it changes
// visibly, or as a line per finished step for a file or a log.
type progress struct {
	w           io.Writer
	bar         bool
	total, done float64
	cur         float64 // fraction of the current step
	text        string
	last        string
	now         func() time.Time // the clock of the ETA
	start       time.Time
}

func newProgress(w io.Writer, bar bool, total int) *progress {
	return &progress{w: w, bar: bar, total: float64(total), now: time.Now, start: time.Now()}
}

// eta is the time the run still needs at the pace so far, once a second
// and a hundredth of the run have passed; "" before.
func (p *progress) eta(frac float64) string {
	elapsed := p.now().Sub(p.start)
	if elapsed < time.Second || frac < 0.01 || frac >= 1 {
		return ""
	}
	left := time.Duration(float64(elapsed) * (1 - frac) / frac)
	return " ETA " + left.Round(time.Second).String()
}

func (p *progress) label(s string) { p.text, p.cur = s, 0; p.draw() }

func (p *progress) partial(f float64) { p.cur = f; p.draw() }

func (p *progress) step(n int) {
	p.done += float64(n)
	p.cur = 0
	if p.w != nil && !p.bar {
		fmt.Fprintf(p.w, "[%*d/%d] %s\n", len(strconv.Itoa(int(p.total))), int(p.done), int(p.total), p.text)
	}
	p.draw()
}

func (p *progress) draw() {
	if p.w == nil || !p.bar {
		return
	}
	const width = 30
	frac := min((p.done+p.cur)/p.total, 1)
	filled := int(frac * width)
	line := fmt.Sprintf("\r[%s%s] %3.0f%%%s %-50.50s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), 100*frac, p.eta(frac), p.text)
	if line != p.last {
		p.last = line
		io.WriteString(p.w, line)
	}
}

func (p *progress) finish() {
	if p.w != nil && p.last != "" {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", len(p.last)))
		p.last = ""
	}
}
