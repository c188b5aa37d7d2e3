package compare

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The engines a key set is loaded into. bbolt, SQLite and Pebble are
// embedded and always run; PostgreSQL and MariaDB run when a DSN names a
// server, and MyRocks when the MariaDB server has the ROCKSDB engine.
const (
	EngineBbolt    = "bbolt"
	EngineSQLite   = "sqlite"
	EnginePebble   = "pebble"
	EnginePostgres = "postgres"
	EngineMySQL    = "mysql"
	EngineMyRocks  = "myrocks"
)

// EngineNames lists every engine in report order.
var EngineNames = []string{EngineBbolt, EngineSQLite, EnginePebble, EnginePostgres, EngineMySQL, EngineMyRocks}

// Environment variables that name the database servers when the options
// (or the command's flags) do not.
const (
	EnvPostgresDSN = "IDKIT_POSTGRES_DSN"
	EnvMySQLDSN    = "IDKIT_MYSQL_DSN"
)

// EngineInfo says whether an engine ran, on what, and with which
// settings; Skipped says why it did not run and how to enable it.
type EngineInfo struct {
	Name     string `json:"name"`
	Version  string `json:"version,omitempty"`
	Settings string `json:"settings,omitempty"`
	Skipped  string `json:"skipped,omitempty"`
}

// EngineLoad is one key set loaded into one database engine: the column
// type the keys were stored in and the engine's figures, keyed by the
// metric names of [Columns] (all measured in the run).
type EngineLoad struct {
	Engine     string             `json:"engine"`
	ColumnType string             `json:"column_type"`
	Metrics    map[string]float64 `json:"metrics"`
	// Indexes are every index of a --like run's copy of the user's table,
	// after the load.
	Indexes []IndexFigures `json:"indexes,omitempty"`
	// Concurrent is the same keys inserted by K connections at once
	// (Options.Concurrent, the K-writer run only).
	Concurrent *ConcurrentLoad `json:"concurrent,omitempty"`
}

// Metric returns the figure called key, and whether the load has it.
func (l EngineLoad) Metric(key string) (float64, bool) {
	v, ok := l.Metrics[key]
	return v, ok
}

// dbLoad is what a database engine needs to load one key set: a table
// with the key as primary key and a payload column, filled in generation
// order, batch rows per transaction.
type dbLoad struct {
	keys            keySet
	int63           bool // 8-byte big-endian keys that fit a positive int64
	byAge           bool // the keys sort rows by age (see sortsByAge)
	value           []byte
	batch           int
	checkpointEvery int
	sync            bool
	table           string // unique within the run
	onBatch         func(done int)
	// pause, if set, is called after each batch but the last, and holds
	// the load while the server is busier than the run allows (throttle).
	pause func() error
}

// bigint says whether the keys go into a 64-bit integer column.
func (l dbLoad) bigint() bool { return l.int63 && l.keys.Len == 8 }

// int64At returns key i as the int64 a bigint column stores.
func (l dbLoad) int64At(i int) int64 { return int64(binary.BigEndian.Uint64(l.keys.At(i))) }

// batches calls f for each batch [lo, hi) of the load and, after each
// batch that ends a checkpoint interval, checkpoint. It times f only, and
// returns that time.
func (l dbLoad) batches(f func(lo, hi int) error, checkpoint func() error) (time.Duration, error) {
	n := l.keys.N()
	var spent time.Duration
	sinceCheckpoint := 0
	for lo := 0; lo < n; lo += l.batch {
		hi := min(lo+l.batch, n)
		start := time.Now()
		if err := f(lo, hi); err != nil {
			return spent, fmt.Errorf("insert keys %d..%d: %w", lo, hi-1, err)
		}
		spent += time.Since(start)
		sinceCheckpoint += hi - lo
		if l.checkpointEvery > 0 && sinceCheckpoint >= l.checkpointEvery && checkpoint != nil {
			if err := checkpoint(); err != nil {
				return spent, fmt.Errorf("checkpoint after key %d: %w", hi-1, err)
			}
			sinceCheckpoint = 0
		}
		if l.onBatch != nil {
			l.onBatch(hi)
		}
		if l.pause != nil && hi < n {
			if err := l.pause(); err != nil {
				return spent, fmt.Errorf("after key %d: %w", hi-1, err)
			}
		}
	}
	return spent, nil
}

// dbEngine is a database engine that loads key sets. Close drops
// everything the engine created on its server and closes the connection.
type dbEngine interface {
	Info() EngineInfo
	Load(ctx context.Context, l dbLoad) (EngineLoad, error)
	Close(ctx context.Context) error
}

// throttled is a server engine whose loads a throttle may hold (nil: none).
type throttled interface {
	loadThrottle() *throttle
}

// serverEngine is a database engine on a server: Created names what the
// run created there, and serverLoad says what load a run put on the
// source server when the copies of a --like run live there ("" when they
// do not).
type serverEngine interface {
	dbEngine
	Created() string
	serverLoad(ctx context.Context) (line string, logBytes int64, err error)
}

// serverName names a server and database without the DSN's user and
// password: host:port/database.
func serverName(host string, port uint16, database string) string {
	s := host
	if port != 0 {
		s += ":" + strconv.Itoa(int(port))
	}
	return s + "/" + database
}

// runSuffix returns a random suffix for the names a run creates on a
// shared server, so that concurrent runs never meet.
func runSuffix() string {
	var b [6]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// perThousand returns v per 1,000 of n.
func perThousand(v float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return v * 1000 / float64(n)
}

// perKey returns v over n.
func perKey(v float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return v / float64(n)
}

// rate returns n over d in inserts per second.
func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// openEngines opens the database engines the options ask for, in report
// order, and returns them with an EngineInfo for every engine, including
// the skipped ones. In a --like run it reads the table on every source
// server first, once the rights to read it are there and before the run
// creates anything (preflight), and then writes its sample where the
// copies go; it returns the table as each server has it. On error it
// closes what it opened.
func openEngines(ctx context.Context, o Options, dir string) ([]dbEngine, []EngineInfo, []LikeTable, error) {
	infos := []EngineInfo{{Name: EngineBbolt, Version: moduleVersion("go.etcd.io/bbolt"), Settings: bboltSettings(o)}}
	var engines []dbEngine
	fail := func(err error) ([]dbEngine, []EngineInfo, []LikeTable, error) {
		for _, e := range engines {
			e.Close(ctx)
		}
		return nil, nil, nil, err
	}
	plans, sources, err := readSources(ctx, o)
	if err != nil {
		return fail(err)
	}
	if o.NoSQLite {
		infos = append(infos, EngineInfo{Name: EngineSQLite, Skipped: "switched off"})
	} else {
		e, err := openSQLite(dir, o.Sync)
		if err != nil {
			return fail(err)
		}
		engines = append(engines, e)
		infos = append(infos, e.Info())
	}
	if o.NoPebble {
		infos = append(infos, EngineInfo{Name: EnginePebble, Skipped: "switched off"})
	} else {
		e := openPebble(dir, o.Sync)
		engines = append(engines, e)
		infos = append(infos, e.Info())
	}
	var likes []LikeTable
	for _, p := range plans {
		if p.dsn == "" {
			infos = append(infos, EngineInfo{Name: p.engine, Skipped: p.skipped})
			continue
		}
		if p.myrocks {
			infos = append(infos, EngineInfo{Name: p.engine, Skipped: "a --like run copies your MyRocks table into MyRocks only"})
			continue
		}
		var e serverEngine
		var err error
		if p.engine == EnginePostgres {
			var pe *postgresEngine
			if pe, err = openPostgres(ctx, p.dsn, p.source, p.polite); err == nil {
				pe.throttle = newThrottle(o, p.engine, pgBusy(pe.conn))
				e = pe
			}
		} else {
			var me *mysqlEngine
			if me, err = openMySQL(ctx, p.dsn, p.source, p.polite); err == nil {
				me.throttle = newThrottle(o, p.engine, mysqlBusy(me.conn))
				e = me
			}
		}
		if err != nil {
			return fail(err)
		}
		engines = append(engines, e)
		if src := sources[p.engine]; src != nil {
			if err := e.(likeEngine).writeLike(ctx, src, o.N); err != nil {
				return fail(err)
			}
			likes = append(likes, src.table)
		}
		infos = append(infos, e.Info())
	}
	// MyRocks shares the MariaDB server of the InnoDB loads.
	switch my := plans[1]; {
	case my.dsn == "":
		infos = append(infos, EngineInfo{Name: EngineMyRocks, Skipped: "no server: set " + EnvMySQLDSN + " or --mysql DSN to measure MariaDB's MyRocks"})
	case my.myrocks:
		e, skipped, err := openMyRocks(ctx, my.dsn)
		if err != nil {
			return fail(err)
		}
		if e == nil {
			return fail(fmt.Errorf("%w %s: myrocks: where the copies go: %s", ErrLike, o.Like, skipped))
		}
		engines = append(engines, e)
		if err := e.writeLike(ctx, sources[my.engine], o.N); err != nil {
			return fail(err)
		}
		likes = append(likes, sources[my.engine].table)
		infos = append(infos, e.Info())
	case o.Like != "":
		infos = append(infos, EngineInfo{Name: EngineMyRocks, Skipped: "a --like run copies your InnoDB table into InnoDB only"})
	case o.NoMyRocks:
		infos = append(infos, EngineInfo{Name: EngineMyRocks, Skipped: "switched off"})
	default:
		e, skipped, err := openMyRocks(ctx, my.dsn)
		if err != nil {
			return fail(err)
		}
		if e == nil {
			infos = append(infos, EngineInfo{Name: EngineMyRocks, Skipped: skipped})
			break
		}
		engines = append(engines, e)
		infos = append(infos, e.Info())
	}
	return engines, infos, likes, nil
}

// serverPlan is how a run uses one server engine: dsn is the server the
// loads go to (empty: the engine is skipped, for the reason skipped); in a
// --like run source is the server with the user's table, and polite says
// that the two are the same, so the run keeps off server-wide work there.
type serverPlan struct {
	engine, dsn, source, skipped string
	polite                       bool
	// myrocks says the --like table on a MariaDB source is a MyRocks
	// table, whose copies go to MyRocks; set once the table is read.
	myrocks bool
	// throttled says the loads read the server's load (MaxLoad, MaxLag).
	throttled bool
}

// serverPlans returns the plans of PostgreSQL and MariaDB/MySQL, in report
// order.
func (o Options) serverPlans() []serverPlan {
	plan := func(engine, dsn, scratch, env, flag string) serverPlan {
		switch {
		case dsn == "":
			return serverPlan{engine: engine, skipped: "no server: set " + env + " or --" + flag + " DSN to measure " + engineProducts[engine]}
		case o.Like == "":
			return serverPlan{engine: engine, dsn: dsn}
		case scratch == "":
			return serverPlan{engine: engine, dsn: dsn, source: dsn, polite: true}
		}
		return serverPlan{engine: engine, dsn: scratch, source: dsn}
	}
	plans := []serverPlan{
		plan(EnginePostgres, o.PostgresDSN, o.ScratchPostgresDSN, EnvPostgresDSN, "postgres"),
		plan(EngineMySQL, o.MySQLDSN, o.ScratchMySQLDSN, EnvMySQLDSN, "mysql"),
	}
	for i := range plans {
		plans[i].throttled = o.MaxLoad > 0 || o.MaxLag > 0
	}
	return plans
}

// engineProducts names the servers each engine measures.
var engineProducts = map[string]string{EnginePostgres: "PostgreSQL", EngineMySQL: "MariaDB/MySQL", EngineMyRocks: "MariaDB's MyRocks"}

func bboltSettings(o Options) string {
	var fills []string
	for _, f := range o.Fills {
		fills = append(fills, fmt.Sprint(f))
	}
	return "fill " + strings.Join(fills, " and ") + ", fsync " + onOff(o.Sync)
}

// measured returns the names of the engines that ran, in report order.
func (r *Report) measured() []string {
	var out []string
	for _, e := range r.Engines {
		if e.Skipped == "" {
			out = append(out, e.Name)
		}
	}
	return out
}

// engineLoad returns the load of engine in run, if there is one.
func (run WriterRun) engineLoad(engine string) (EngineLoad, bool) {
	i := slices.IndexFunc(run.Engines, func(l EngineLoad) bool { return l.Engine == engine })
	if i < 0 {
		return EngineLoad{}, false
	}
	return run.Engines[i], true
}

// driver names the Go module that talks to an engine, with its version
// when the build information has it.
func driver(module string) string {
	if v := moduleVersion(module); v != "" {
		return " (" + module + " " + v + ")"
	}
	return " (" + module + ")"
}

// readSources checks the rights of o's server plans and, in a --like
// run, reads the table on each source (see preflight): the plans, with
// a MyRocks table's marked, and the tables read, by engine.
func readSources(ctx context.Context, o Options) ([]serverPlan, map[string]*likeSource, error) {
	plans := o.serverPlans()
	sources := map[string]*likeSource{}
	var read func() error
	if o.Like != "" {
		name, err := ParseLike(o.Like)
		if err != nil {
			return nil, nil, err
		}
		read = func() error {
			for i, p := range plans {
				if p.dsn == "" {
					continue
				}
				if sources[p.engine], err = readLike(ctx, p, name, o.Sample, o.N); err != nil {
					return err
				}
				if sources[p.engine].table.Engine != EngineMyRocks {
					continue
				}
				switch {
				case p.polite:
					return fmt.Errorf("%w %s: mysql: a MyRocks table's copies need --scratch DSN, a MariaDB server with the ROCKSDB engine: their figures come from flushes and compactions the run forces (SET GLOBAL rocksdb_force_flush_memtable_now), which on the source would flush every table's memtables", ErrLike, name)
				case o.NoMyRocks:
					return fmt.Errorf("%w %s: mysql: a MyRocks table, and MyRocks is switched off", ErrLike, name)
				}
				plans[i].myrocks = true
			}
			if len(sources) == 0 {
				return fmt.Errorf("%w %s: no server to read the table from; want --postgres DSN or --mysql DSN", ErrLike, name)
			}
			return nil
		}
	}
	if err := preflight(ctx, plans, o.Like, read); err != nil {
		return nil, nil, err
	}
	return plans, sources, nil
}
