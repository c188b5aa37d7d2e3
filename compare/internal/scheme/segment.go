package scheme

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/mysqlstore"
	"github.com/idkit/idkit/segment/pgstore"
	"github.com/idkit/idkit/segment/redisstore"
)

// EnvRedisAddr names the environment variable with the address of a Redis
// server (host:port) for the rows of the Redis block store and Redis INCR.
const EnvRedisAddr = "IDKIT_REDIS_ADDR"

// EnvEtcdEndpoints names the environment variable with the client URLs of
// an etcd cluster, separated by commas, for the rows of the etcd block
// store (fleet.Log).
const EnvEtcdEndpoints = "IDKIT_ETCD_ENDPOINTS"

// The rows of the segment allocator: dense int64 IDs from blocks reserved
// in a store. Each writer is an Allocator of its own on one tag, as K app
// instances sharing a store would run. The bbolt row (launchlog) always
// runs; the rows of PostgreSQL, MariaDB/MySQL, Redis and etcd are
// registered when $IDKIT_POSTGRES_DSN, $IDKIT_MYSQL_DSN, $IDKIT_REDIS_ADDR
// and $IDKIT_ETCD_ENDPOINTS name a server as the process starts, and are
// absent otherwise.
//
// A "segment-<store>" row is the allocator as a user gets it, with its
// default options: Leaf's adaptive step from 1,000 and the rate rule, so
// that a run of IDs back to back soon takes large blocks. A "-fixed" row
// holds the step at 1,000, the cost of block fetches at Leaf's default
// step; a "-fetch" row measures the latency of one block reservation: its
// speed reserves one block per ID and keys it by the block's first ID
// (Redis INCR is that row for Redis), while its locality keys are the
// allocator's.
//
// Each Scheme.New or Scheme.Keys call makes its own scratch place: a
// bbolt file in a new directory, a temporary PostgreSQL table, a MariaDB
// database, a Redis key and an etcd key prefix, each named with a random
// suffix, which CloseGenerators removes. A Redis key also expires after scratchAge, in
// case the process dies before it is removed.
func init() {
	register(SegmentSchemes(os.Getenv, "")...)
}

// scratch says where the segment rows find their servers and keep their
// files.
type scratch struct {
	getenv func(string) string
	dir    string // the parent of the bbolt rows' directories; empty is os.TempDir()
}

// A scratchStore is a store and a tag made for one Scheme.New call, and
// how to remove them.
type scratchStore struct {
	store segment.BlockStore
	tag   string
	where string // the file, table, database or key made for it
	close func() error
}

// segmentStep is the step of the -fixed rows and the unit of the MariaDB
// store: Leaf's default.
const segmentStep = segment.DefaultStep

// scratchAge is how long a Redis key of a row lives if the process dies
// before CloseGenerators removes it.
const scratchAge = 24 * time.Hour

// schemes returns the bbolt rows and those of the servers that getenv
// names.
func (sc scratch) schemes() []Scheme {
	bolt := func() (scratchStore, error) { return openBolt(sc.dir) }
	out := segmentSchemes("segment-bbolt", "launchlog (bbolt file, fsync per block)", "github.com/idkit/idkit/launchlog", bolt)
	if dsn := sc.getenv(engine.EnvPostgresDSN); dsn != "" {
		open := func() (scratchStore, error) { return openPGScratch(dsn) }
		out = append(out, segmentSchemes("segment-postgres", "PostgreSQL, UPDATE ... RETURNING (Leaf)", "github.com/idkit/idkit/segment/pgstore", open)...)
		out = append(out, fetchScheme("segment-postgres-fetch", "PostgreSQL", "github.com/idkit/idkit/segment/pgstore", open))
	}
	if dsn := sc.getenv(engine.EnvMySQLDSN); dsn != "" {
		open := func() (scratchStore, error) { return openMySQLScratch(dsn) }
		out = append(out, segmentSchemes("segment-mysql", "MariaDB/MySQL ticket table, REPLACE INTO (Flickr)", "github.com/idkit/idkit/segment/mysqlstore", open)...)
		out = append(out, fetchScheme("segment-mysql-fetch", "MariaDB/MySQL", "github.com/idkit/idkit/segment/mysqlstore", open))
	}
	if addr := sc.getenv(EnvRedisAddr); addr != "" {
		open := func() (scratchStore, error) {
			s, tag, err := openRedisScratch(addr)
			if err != nil {
				return scratchStore{}, err
			}
			return scratchStore{s, tag, s.Key(tag), func() error { return closeRedisScratch(addr, s, tag) }}, nil
		}
		out = append(out, segmentSchemes("segment-redis", "Redis INCRBY", "github.com/idkit/idkit/segment/redisstore", open)...)
		out = append(out, redisIncrScheme(addr))
	}
	if urls := sc.getenv(EnvEtcdEndpoints); urls != "" {
		open := func() (scratchStore, error) { return openEtcdScratch(strings.Split(urls, ",")) }
		out = append(out, segmentSchemes("segment-etcd", "etcd, one guarded transaction (fleet.Log)", "github.com/idkit/idkit/fleet", open)...)
		out = append(out, fetchScheme("segment-etcd-fetch", "etcd", "github.com/idkit/idkit/fleet", open))
	}
	return out
}

func segmentDesign(note string) func() Design {
	return func() Design {
		return FromMaxBits(Design{
			Bits:     64,
			MaxBits:  63,
			Ordered:  true,
			Capacity: 1<<63 - 1,
			Dense:    true,
			Note:     note,
		})
	}
}

const segmentNote = "no time field: dense IDs from blocks of one tag shared by every writer; each writer's IDs increase, writers interleave by block; a crash loses the rest of a block, never repeats one"

// segmentSchemes are the allocator on the stores open returns: as a user
// gets it, with its default options (the row called name), and with the
// step fixed at segmentStep (name-fixed).
func segmentSchemes(name, store, module string, open func() (scratchStore, error)) []Scheme {
	adaptive := &stepNote{}
	return []Scheme{{
		Name:    name,
		Kind:    Ours,
		Module:  module,
		Summary: fmt.Sprintf("segment allocator with its default options (adaptive step from %d), blocks from %s, one allocator per writer on one tag", segment.DefaultStep, store),
		KeyLen:  8,
		New:     allocators(name, open, segment.Options{}, adaptive),
		After:   adaptive.String,
		Design:  segmentDesign(segmentNote),
	}, {
		Name:    name + "-fixed",
		Kind:    Ours,
		Module:  module,
		Summary: fmt.Sprintf("segment allocator with the step fixed at %d, blocks from %s: what block fetches cost at Leaf's default step", segmentStep, store),
		KeyLen:  8,
		New:     allocators(name+"-fixed", open, segment.Options{Step: segmentStep, MinStep: segmentStep, MaxStep: segmentStep}, nil),
		Design:  segmentDesign(segmentNote),
	}}
}

// stepNote records how the adaptive step grew in a row's last set of
// allocators, for the report.
type stepNote struct {
	mu     sync.Mutex
	blocks uint64        // reserved by writer 0
	writer segment.State // of writer 0
}

func (n *stepNote) set(a *segment.Allocator) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.blocks, n.writer = a.Stats().StoreWrites, a.State()
}

// String says how many blocks the adaptive step took to reach its largest
// size in the last set of allocators.
func (n *stepNote) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.writer
	if n.blocks == 0 {
		return ""
	}
	return fmt.Sprintf("the adaptive step reached its largest, %s, at block %d of %d (writer 0)", engine.Thousands(st.LargestStep), st.LargestAt, n.blocks)
}

// fetchScheme times one block reservation per ID; its locality keys are
// the allocator's.
func fetchScheme(name, store, module string, open func() (scratchStore, error)) Scheme {
	return Scheme{
		Name:    name,
		Kind:    Ours,
		Module:  module,
		Summary: "one block reservation in " + store + " per ID: the latency of a block fetch",
		KeyLen:  8,
		New: func(writers int) ([]Generator, error) {
			sc, err := open()
			if err != nil {
				return nil, fmt.Errorf("compare: %s: %w", name, err)
			}
			gens, err := Each(writers, func(int) (Generator, error) {
				return GenFunc(func(dst []byte) ([]byte, error) {
					b, err := sc.store.ReserveBlock(context.Background(), sc.tag, 1)
					return appendUint64(dst, uint64(b.First)), err
				}), nil
			})
			return closing(gens, err, sc.close)
		},
		Keys:     allocators(name, open, segment.Options{Step: segmentStep, MinStep: segmentStep, MaxStep: segmentStep}, nil),
		KeysNote: fmt.Sprintf("speed is one ReserveBlock per ID; the keys are the allocator's, blocks of %d", segmentStep),
		Design:   segmentDesign(segmentNote),
	}
}

// allocators returns writers Allocators with options o on one new tag of
// one store. note, if not nil, is told writer 0's stats when they close.
func allocators(name string, open func() (scratchStore, error), o segment.Options, note *stepNote) func(int) ([]Generator, error) {
	return func(writers int) ([]Generator, error) {
		sc, err := open()
		if err != nil {
			return nil, fmt.Errorf("compare: %s: %w", name, err)
		}
		var all []*segment.Allocator
		gens, err := Each(writers, func(k int) (Generator, error) {
			o := o
			o.Store, o.Tag = sc.store, sc.tag
			a, err := segment.New(context.Background(), o)
			if err != nil {
				return nil, fmt.Errorf("compare: %s writer %d: %w", name, k, err)
			}
			all = append(all, a)
			return allocatorGen{a}, nil // closed below, with the store
		})
		return closing(gens, err, func() error {
			if note != nil && len(all) > 0 {
				note.set(all[0])
			}
			var errs []error
			for _, a := range all {
				errs = append(errs, a.Close())
			}
			return errors.Join(append(errs, sc.close())...)
		})
	}
}

// allocatorGen is an Allocator as a compare Generator. It calls Next on
// the allocator itself, as a user's code does, rather than through
// idkit.Generator and a key function (ours), whose two indirect calls
// would cost as much again as the atomic add that issues an ID.
type allocatorGen struct{ a *segment.Allocator }

func (g allocatorGen) Next(dst []byte) ([]byte, error) {
	id, err := g.a.Next()
	return appendUint64(dst, uint64(id)), err
}

func (g allocatorGen) Close() error { return g.a.Close() }

// closing gives each of gens a Close that runs release once, for all of
// them; if err is set, it runs release and returns err.
func closing(gens []Generator, err error, release func() error) ([]Generator, error) {
	if err != nil {
		return nil, errors.Join(err, release())
	}
	once := sync.OnceValue(release)
	out := make([]Generator, len(gens))
	for k, g := range gens {
		out[k] = closer{g, once}
	}
	return out, nil
}

// closer is a Generator whose Close releases what its scheme made.
type closer struct {
	Generator
	release func() error
}

func (c closer) Close() error { return c.release() }

// redisIncrScheme is the plain Redis scheme: one INCR per ID.
func redisIncrScheme(addr string) Scheme {
	return Scheme{
		Name:    "redis-incr",
		Kind:    Ours,
		Module:  "github.com/idkit/idkit/segment/redisstore",
		Summary: "Redis INCR, one round trip per ID, one key shared by every writer",
		KeyLen:  8,
		New: func(writers int) ([]Generator, error) {
			s, tag, err := openRedisScratch(addr)
			if err != nil {
				return nil, fmt.Errorf("compare: redis-incr: %w", err)
			}
			release := func() error { return closeRedisScratch(addr, s, tag) }
			c, err := s.Counter(tag)
			if err != nil {
				return nil, errors.Join(fmt.Errorf("compare: redis-incr: %w", err), release())
			}
			gens, err := Each(writers, func(int) (Generator, error) {
				return GenFunc(func(dst []byte) ([]byte, error) {
					id, err := c.Next(context.Background())
					return appendUint64(dst, uint64(id)), err
				}), nil
			})
			return closing(gens, err, release)
		},
		Design: segmentDesign("no time field: one counter shared by every writer, as dense as the ideal; each ID costs a round trip, and without appendfsync always a restart of Redis repeats IDs"),
	}
}

func scratchTag() string {
	var b [6]byte
	rand.Read(b[:])
	return "compare-" + hex.EncodeToString(b[:])
}

// openBolt returns a launch log in a new directory under dir.
func openBolt(dir string) (scratchStore, error) {
	d, err := os.MkdirTemp(dir, "idkit-compare-segment-")
	if err != nil {
		return scratchStore{}, err
	}
	tag := scratchTag()
	l, err := launchlog.New(launchlog.Options{Path: filepath.Join(d, tag+".db")})
	if err != nil {
		return scratchStore{}, errors.Join(err, os.RemoveAll(d))
	}
	return scratchStore{l, tag, d, func() error { return os.RemoveAll(d) }}, nil
}

// openPGScratch returns a store on a temporary table, which lives as long
// as the store's one connection: should that connection drop, the table
// is gone and reservations fail rather than start again. Closing the pool
// drops the table.
func openPGScratch(dsn string) (scratchStore, error) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return scratchStore{}, fmt.Errorf("postgres: %w", err)
	}
	cfg.MaxConns = 1
	cfg.MaxConnLifetime = 24 * time.Hour
	cfg.MaxConnIdleTime = 24 * time.Hour
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return scratchStore{}, fmt.Errorf("postgres: %w", err)
	}
	s, err := pgstore.New(ctx, pool, pgstore.Options{Table: "pg_temp.idkit_segment"})
	if err != nil {
		pool.Close()
		return scratchStore{}, err
	}
	return scratchStore{s, scratchTag(), "pg_temp.idkit_segment", func() error { pool.Close(); return nil }}, nil
}

// openMySQLScratch returns a store on a new database, which closing drops.
func openMySQLScratch(dsn string) (scratchStore, error) {
	ctx := context.Background()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return scratchStore{}, fmt.Errorf("mysql: the DSN does not parse (it may hold a password, so it is not repeated here): %w", err)
	}
	cfg.DBName = ""
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return scratchStore{}, fmt.Errorf("mysql: %w", err)
	}
	db := sql.OpenDB(conn)
	name := strings.ReplaceAll(scratchTag(), "-", "_")
	drop := func() error {
		_, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name)
		return errors.Join(err, db.Close())
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		return scratchStore{}, fmt.Errorf("mysql: %w", err)
	}
	cfg.DBName = name
	s, err := mysqlstore.Open(ctx, cfg.FormatDSN(), mysqlstore.Options{Unit: segmentStep, AllowLazyFlush: true})
	if err != nil {
		return scratchStore{}, errors.Join(err, drop())
	}
	return scratchStore{s, scratchTag(), name, func() error { return errors.Join(s.Close(), drop()) }}, nil
}

// openRedisScratch returns a store and a tag whose key expires after
// scratchAge (INCRBY keeps a key's expiry) in case closeRedisScratch never
// runs.
func openRedisScratch(addr string) (*redisstore.Store, string, error) {
	ctx := context.Background()
	s, err := redisstore.Open(ctx, addr, redisstore.Options{Prefix: "idkit:compare:", AllowVolatile: true})
	if err != nil {
		return nil, "", err
	}
	tag := scratchTag()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := c.SetNX(ctx, s.Key(tag), 0, scratchAge).Err(); err != nil {
		s.Close()
		return nil, "", fmt.Errorf("redis: %w", err)
	}
	return s, tag, nil
}

// closeRedisScratch deletes the key of tag and closes s.
func closeRedisScratch(addr string, s *redisstore.Store, tag string) error {
	c := redis.NewClient(&redis.Options{Addr: addr})
	err := c.Del(context.Background(), s.Key(tag)).Err()
	return errors.Join(err, c.Close(), s.Close())
}

// openEtcdScratch returns a store under a new key prefix, which closing
// deletes.
func openEtcdScratch(endpoints []string) (scratchStore, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return scratchStore{}, fmt.Errorf("etcd: %w", err)
	}
	// The client connects lazily: ask once, so that an unreachable cluster
	// fails here as the other stores do.
	prefix := "/idkit-" + scratchTag() + "/"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
		cli.Close()
		return scratchStore{}, fmt.Errorf("etcd at %s: %w", strings.Join(endpoints, ","), err)
	}
	l, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: prefix})
	if err != nil {
		cli.Close()
		return scratchStore{}, err
	}
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := cli.Delete(ctx, prefix, clientv3.WithPrefix())
		return errors.Join(err, cli.Close())
	}
	return scratchStore{l, scratchTag(), prefix, drop}, nil
}

// SegmentSchemes returns the segment rows of the environment that getenv
// reads (the servers it names; bbolt's rows always), with their bbolt
// files under dir ("": the system's temporary directory): the rows the
// registry holds, for getenv os.Getenv.
func SegmentSchemes(getenv func(string) string, dir string) []Scheme {
	return scratch{getenv: getenv, dir: dir}.schemes()
}
