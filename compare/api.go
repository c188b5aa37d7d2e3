package compare

import (
	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/bbolt"
)

// The engines a key set is loaded into, by the names the report and the
// command's flags use. bbolt, SQLite and Pebble are embedded and always
// run; PostgreSQL and MariaDB run when a DSN names a server, and MyRocks
// when the MariaDB server has the ROCKSDB engine.
const (
	EngineBbolt    = engine.Bbolt
	EngineSQLite   = engine.SQLite
	EnginePebble   = engine.Pebble
	EnginePostgres = engine.Postgres
	EngineMySQL    = engine.MySQL
	EngineMyRocks  = engine.MyRocks
)

// Environment variables that name the database servers when the options
// (or the command's flags) do not.
const (
	EnvPostgresDSN = engine.EnvPostgresDSN
	EnvMySQLDSN    = engine.EnvMySQLDSN
)

// The figures of a Report that the engines measure. Each engine lives in
// a package of its own under internal/engine, where these types are
// defined once; they are named here so that a program that reads a
// Report can name them too.
type (
	// EngineInfo says whether an engine ran, on what, and with which
	// settings; Skipped says why it did not run and how to enable it.
	EngineInfo = engine.Info
	// EngineLoad is one key set loaded into one database engine.
	EngineLoad = engine.Figures
	// ConcurrentLoad is one key set inserted by K connections at once.
	ConcurrentLoad = engine.ConcurrentLoad
	// WaitShare is one wait and its share of a concurrent load's samples.
	WaitShare = engine.WaitShare
	// Load is one bbolt load.
	Load = bbolt.Load
	// LikeName is the user's table a --like run copies the shape of.
	LikeName = engine.LikeName
	// LikeTable is the user's table as a --like run read it.
	LikeTable = engine.LikeTable
	// IndexFigures are one index's figures.
	IndexFigures = engine.IndexFigures
)

var (
	// ErrLike reports a --like table that a run cannot copy.
	ErrLike = engine.ErrLike
	// ErrRights reports the rights a run lacks on a server, all at once,
	// before it creates anything.
	ErrRights = engine.ErrRights
)

// Bounds and settings of a run that the engines share.
const (
	// MaxSample bounds the rows a --like run reads from the user's table,
	// and MaxSampleBytes the memory they take on their way through.
	MaxSample      = engine.MaxSample
	MaxSampleBytes = engine.MaxSampleBytes
	// SampleEvery is how often a concurrent load samples what its
	// sessions wait on.
	SampleEvery = engine.SampleEvery
	// ThrottlePoll is how often a held load reads the server's load again.
	ThrottlePoll = engine.ThrottlePoll
	// AppName is the application_name (PostgreSQL) and program_name
	// (MariaDB) of the run's sessions.
	AppName = engine.AppName
	// LockTimeout bounds the wait for a lock of every statement a run
	// sends.
	LockTimeout = engine.LockTimeout
	// CleanupTime bounds the time a stopped run takes to drop what it
	// created.
	CleanupTime = engine.CleanupTime
)

// ParseLike parses schema.table, the --like flag's value (see
// engine.ParseLike for the quoting rules).
func ParseLike(s string) (LikeName, error) { return engine.ParseLike(s) }
