package compare

import (
	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/bbolt"
	"github.com/idkit/idkit/compare/internal/engine/spider"
	"github.com/idkit/idkit/compare/internal/report"
	"github.com/idkit/idkit/compare/internal/scheme"
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
	// EngineSpiderRange and EngineSpiderHash are MariaDB Spider tables over
	// shards the run starts (Options.Spider), by range of the key and by
	// its hash.
	EngineSpiderRange = engine.SpiderRange
	EngineSpiderHash  = engine.SpiderHash
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
	// DefaultShards, MinShards and MaxShards bound Options.Shards, and
	// SpiderBucketsPerShard is the hash buckets each shard holds.
	DefaultShards         = spider.DefaultShards
	MinShards             = spider.MinShards
	MaxShards             = spider.MaxShards
	SpiderBucketsPerShard = spider.BucketsPerShard
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

// The schemes a run measures live in internal/scheme, one registry of
// idkit's own schemes, the peer libraries and the baselines; these name
// them for a program that selects schemes or reads their figures.
type (
	// Scheme is one registry entry: a name, a constructor of generators
	// and the scheme's design.
	Scheme = scheme.Scheme
	// Generator is one writer's source of keys.
	Generator = scheme.Generator
	// Design is what a scheme's layout promises.
	Design = scheme.Design
	// Kind says whose a scheme is: idkit's, a peer library's, or a
	// baseline.
	Kind = scheme.Kind
	// Order is how ordered a key set is.
	Order = scheme.Order
	// Size is the bytes a key set takes, plain and packed.
	Size = scheme.Size
	// Speed is a generator's speed.
	Speed = scheme.Speed
	// Randomness is the statistical tests' verdict on a key set's bits.
	Randomness = scheme.Randomness
)

// The kinds of scheme.
const (
	Baseline = scheme.Baseline
	Ours     = scheme.Ours
	Peer     = scheme.Peer
)

// RandomnessAlpha is the significance level of the randomness tests.
const RandomnessAlpha = scheme.RandomnessAlpha

// Environment variables that name the servers of the segment schemes'
// block stores.
const (
	EnvRedisAddr     = scheme.EnvRedisAddr
	EnvEtcdEndpoints = scheme.EnvEtcdEndpoints
)

// Schemes returns every registered scheme, in report order.
func Schemes() []Scheme { return scheme.Schemes() }

// Names returns the names of every registered scheme.
func Names() []string { return scheme.Names() }

// Lookup returns the scheme called name (or one of its aliases).
func Lookup(name string) (Scheme, error) { return scheme.Lookup(name) }

// Select returns the schemes of a comma-separated list ("all": every
// scheme).
func Select(list string) ([]Scheme, error) { return scheme.Select(list) }

// CloseGenerators closes every generator of gens and returns the first
// error.
func CloseGenerators(gens []Generator) error { return scheme.CloseGenerators(gens) }

// A run's report and its verdicts live in internal/report: the figures
// as they were measured, the columns that describe them, the text, JSON
// and HTML forms, and the verdicts drawn from them. These name them for a
// program that reads a Report or asks it for a verdict.
type (
	// Report is everything a run measured, with a description of every
	// figure (Columns) and the verdict of the run's own need.
	Report = report.Report
	// Result is one scheme's figures.
	Result = report.Result
	// WriterRun is one scheme's key set of a number of writers, and its
	// loads into every engine.
	WriterRun = report.WriterRun
	// Config is the options a run used, defaults filled in.
	Config = report.Config
	// Machine describes where a run happened.
	Machine = report.Machine
	// DesignText is a scheme's design as the report writes it.
	DesignText = report.DesignText
	// Column describes one figure of the report.
	Column = report.Column
	// Section is one group of columns.
	Section = report.Section
	// Table is one text table of the report.
	Table = report.Table
	// Need is what a user requires of a scheme.
	Need = report.Need
	// Verdict is the ranked recommendation of a run.
	Verdict = report.Verdict
	// Pick is a scheme a verdict recommends.
	Pick = report.Pick
	// Rejection is a scheme a verdict leaves out, and why.
	Rejection = report.Rejection
	// VerdictFigure is a figure a verdict ranked by.
	VerdictFigure = report.VerdictFigure
	// Families is the verdict of each engine family, and what changes
	// between them.
	Families = report.Families
	// Topologies is the verdict on one server and on each sharded
	// topology, and what each costs.
	Topologies = report.Topologies
	// TableKey is a --like verdict on the user's table's own key.
	TableKey = report.TableKey
	// KeyChange is what replacing a --like table's key would change.
	KeyChange = report.KeyChange
	// Growth is the runs of a measurement at several sizes.
	Growth = report.Growth
)

// ErrNeed reports a constraint the verdict does not know.
var ErrNeed = report.ErrNeed

// NeedHelp lists the constraints ParseNeed accepts.
const NeedHelp = report.NeedHelp

// ParseNeed parses a comma-separated list of constraints (NeedHelp).
func ParseNeed(s string) (Need, error) { return report.ParseNeed(s) }

// Where a figure comes from, and the families of engines a verdict
// ranks on.
const (
	SourceComputed = report.SourceComputed
	SourceMeasured = report.SourceMeasured
	FamilyBTree    = report.FamilyBTree
	FamilyLSM      = report.FamilyLSM
)

// The thresholds of the verdicts.
const (
	MaxRatio         = report.MaxRatio
	MaxSplitRatio    = report.MaxSplitRatio
	MaxKeyPagesRatio = report.MaxKeyPagesRatio
	DenseRate        = report.DenseRate
	MinJSSafeYears   = report.MinJSSafeYears
)

// FamilyNames lists the engine families in report order.
var FamilyNames = report.FamilyNames
