package engine

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"time"
)

// ConcurrentLoader is a server engine that can load a key set through K
// connections at once.
type ConcurrentLoader interface {
	LoadConcurrent(ctx context.Context, l Load, writers int) (*ConcurrentLoad, error)
}

// The engines a key set is loaded into. bbolt, SQLite and Pebble are
// embedded and always run; PostgreSQL and MariaDB run when a DSN names a
// server, and MyRocks when the MariaDB server has the ROCKSDB engine.
const (
	Bbolt    = "bbolt"
	SQLite   = "sqlite"
	Pebble   = "pebble"
	Postgres = "postgres"
	MySQL    = "mysql"
	MyRocks  = "myrocks"
	// SpiderRange and SpiderHash are MariaDB Spider tables over shards the
	// run starts (package spider), by range of the key and by its hash.
	SpiderRange = "spider-range"
	SpiderHash  = "spider-hash"
)

// EngineInfo says whether an engine ran, on what, and with which
// settings; Skipped says why it did not run and how to enable it.
type Info struct {
	Name     string `json:"name"`
	Version  string `json:"version,omitempty"`
	Settings string `json:"settings,omitempty"`
	Skipped  string `json:"skipped,omitempty"`
}

// EngineLoad is one key set loaded into one database engine: the column
// type the keys were stored in and the engine's figures, keyed by the
// metric names of [Columns] (all measured in the run).
type Figures struct {
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
func (l Figures) Metric(key string) (float64, bool) {
	v, ok := l.Metrics[key]
	return v, ok
}

// Load is what a database engine needs to load one key set: a table
// with the key as primary key and a payload column, filled in generation
// order, batch rows per transaction.
type Load struct {
	Keys            KeySet
	Int63           bool // 8-byte big-endian keys that fit a positive int64
	ByAge           bool // the keys sort rows by age (see sortsByAge)
	Value           []byte
	Batch           int
	CheckpointEvery int
	Sync            bool
	Table           string // unique within the run
	OnBatch         func(done int)
	// pause, if set, is called after each batch but the last, and holds
	// the load while the server is busier than the run allows (throttle).
	Pause func() error
}

// Bigint says whether the keys go into a 64-bit integer column.
func (l Load) Bigint() bool { return l.Int63 && l.Keys.Len == 8 }

// Int64At returns key i as the int64 a bigint column stores.
func (l Load) Int64At(i int) int64 { return int64(binary.BigEndian.Uint64(l.Keys.At(i))) }

// Batches calls f for each batch [lo, hi) of the load and, after each
// batch that ends a checkpoint interval, checkpoint. It times f only, and
// returns that time.
func (l Load) Batches(f func(lo, hi int) error, checkpoint func() error) (time.Duration, error) {
	n := l.Keys.N()
	var spent time.Duration
	sinceCheckpoint := 0
	for lo := 0; lo < n; lo += l.Batch {
		hi := min(lo+l.Batch, n)
		start := time.Now()
		if err := f(lo, hi); err != nil {
			return spent, fmt.Errorf("insert keys %d..%d: %w", lo, hi-1, err)
		}
		spent += time.Since(start)
		sinceCheckpoint += hi - lo
		if l.CheckpointEvery > 0 && sinceCheckpoint >= l.CheckpointEvery && checkpoint != nil {
			if err := checkpoint(); err != nil {
				return spent, fmt.Errorf("checkpoint after key %d: %w", hi-1, err)
			}
			sinceCheckpoint = 0
		}
		if l.OnBatch != nil {
			l.OnBatch(hi)
		}
		if l.Pause != nil && hi < n {
			if err := l.Pause(); err != nil {
				return spent, fmt.Errorf("after key %d: %w", hi-1, err)
			}
		}
	}
	return spent, nil
}

// Engine is a database engine that loads key sets. Close drops
// everything the engine created on its server and closes the connection.
type Engine interface {
	Info() Info
	Load(ctx context.Context, l Load) (Figures, error)
	Close(ctx context.Context) error
}

// Throttled is a server engine whose loads a throttle may hold (nil: none).
type Throttled interface {
	Throttle() *Throttle
}

// Server is a database engine on a server: Created names what the
// run created there, and serverLoad says what load a run put on the
// source server when the copies of a --like run live there ("" when they
// do not).
type Server interface {
	Engine
	Created() string
	ServerLoad(ctx context.Context) (line string, logBytes int64, err error)
}

// ServerName names a server and database without the DSN's user and
// password: host:port/database.
func ServerName(host string, port uint16, database string) string {
	s := host
	if port != 0 {
		s += ":" + strconv.Itoa(int(port))
	}
	return s + "/" + database
}

// RunSuffix returns a random suffix for the names a run creates on a
// shared server, so that concurrent runs never meet.
func RunSuffix() string {
	var b [6]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// PerThousand returns v per 1,000 of n.
func PerThousand(v float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return v * 1000 / float64(n)
}

// PerKey returns v over n.
func PerKey(v float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return v / float64(n)
}

// Rate returns n over d in inserts per second.
func Rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Target is how a run uses one server engine: dsn is the server the
// loads go to (empty: the engine is skipped, for the reason skipped); in a
// --like run source is the server with the user's table, and polite says
// that the two are the same, so the run keeps off server-wide work there.
type Target struct {
	Engine, DSN, Source, Skipped string
	Polite                       bool
	// MyRocks says the --like table on a MariaDB source is a MyRocks
	// table, whose copies go to MyRocks; set once the table is read.
	MyRocks bool
	// Throttled says the loads read the server's load (MaxLoad, MaxLag).
	Throttled bool
}

// Driver names the Go module that talks to an engine, with its version
// when the build information has it.
func Driver(module string) string {
	if v := ModuleVersion(module); v != "" {
		return " (" + module + " " + v + ")"
	}
	return " (" + module + ")"
}

// Copier is a database engine that can load the keys into copies of a
// user's table.
type Copier interface {
	Engine
	// WriteLike writes the sample read on the source server into the
	// run's scratch schema, and makes every later Load of n keys a load
	// into a copy of the table.
	WriteLike(ctx context.Context, src *Source, n int) error
}

// ModuleVersion returns the version of module this program was built
// with, or "" if the build information does not say.
func ModuleVersion(module string) string {
	if module == "" {
		return ""
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range info.Deps {
		if d.Path == module {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

// Environment variables that name the database servers when the options
// (or the command's flags) do not.
const (
	EnvPostgresDSN = "IDKIT_POSTGRES_DSN"
	EnvMySQLDSN    = "IDKIT_MYSQL_DSN"
)
