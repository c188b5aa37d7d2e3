package compare

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/innodb"
	"github.com/idkit/idkit/compare/internal/engine/myrocks"
	"github.com/idkit/idkit/compare/internal/engine/pebble"
	"github.com/idkit/idkit/compare/internal/engine/postgres"
	"github.com/idkit/idkit/compare/internal/engine/spider"
	"github.com/idkit/idkit/compare/internal/engine/sqlite"
)

// EngineNames lists every engine in report order.
var EngineNames = []string{engine.Bbolt, engine.SQLite, engine.Pebble, engine.Postgres, engine.MySQL, engine.MyRocks, engine.SpiderRange, engine.SpiderHash}

// Spider is the name Options.Engine and --engine take for both Spider
// topologies: it runs them (Options.Spider), and the verdict stays on the
// single server.
const Spider = "spider"

// embedded are the engines that run inside the process, after bbolt, in
// report order: an engine's name, whether the options switch it off, and
// how it opens in the run's directory.
var embedded = []struct {
	name string
	off  func(Options) bool
	open func(dir string, sync bool) (engine.Engine, error)
}{
	{engine.SQLite, func(o Options) bool { return o.NoSQLite }, sqlite.Open},
	{engine.Pebble, func(o Options) bool { return o.NoPebble }, pebble.Open},
}

// openEngines opens the database engines the options ask for, in report
// order, and returns them with an EngineInfo for every engine, including
// the skipped ones. In a --like run it reads the table on every source
// server first, once the rights to read it are there and before the run
// creates anything (preflight), and then writes its sample where the
// copies go; it returns the table as each server has it. On error it
// closes what it opened.
func openEngines(ctx context.Context, o Options, dir string) ([]engine.Engine, []engine.Info, []engine.LikeTable, error) {
	infos := []engine.Info{{Name: engine.Bbolt, Version: engine.ModuleVersion("go.etcd.io/bbolt"), Settings: bboltSettings(o)}}
	var engines []engine.Engine
	fail := func(err error) ([]engine.Engine, []engine.Info, []engine.LikeTable, error) {
		for _, e := range engines {
			e.Close(ctx)
		}
		return nil, nil, nil, err
	}
	plans, sources, err := readSources(ctx, o)
	if err != nil {
		return fail(err)
	}
	for _, em := range embedded {
		if em.off(o) {
			infos = append(infos, engine.Info{Name: em.name, Skipped: "switched off"})
			continue
		}
		e, err := em.open(dir, o.Sync)
		if err != nil {
			return fail(err)
		}
		engines = append(engines, e)
		infos = append(infos, e.Info())
	}
	var likes []engine.LikeTable
	for _, p := range plans {
		if p.DSN == "" {
			infos = append(infos, engine.Info{Name: p.Engine, Skipped: p.Skipped})
			continue
		}
		if p.MyRocks {
			infos = append(infos, engine.Info{Name: p.Engine, Skipped: "a --like run copies your MyRocks table into MyRocks only"})
			continue
		}
		var e engine.Server
		var err error
		lim := engine.Limits{MaxLoad: o.MaxLoad, MaxLag: o.MaxLag, Progress: o.Progress}
		if p.Engine == engine.Postgres {
			e, err = postgres.Open(ctx, p.DSN, p.Source, p.Polite, lim)
		} else {
			e, err = innodb.Open(ctx, p.DSN, p.Source, p.Polite, lim)
		}
		if err != nil {
			return fail(err)
		}
		engines = append(engines, e)
		if src := sources[p.Engine]; src != nil {
			if err := e.(engine.Copier).WriteLike(ctx, src, o.N); err != nil {
				return fail(err)
			}
			likes = append(likes, src.Table)
		}
		infos = append(infos, e.Info())
	}
	// MyRocks shares the MariaDB server of the InnoDB loads.
	switch my := plans[1]; {
	case my.DSN == "":
		infos = append(infos, engine.Info{Name: engine.MyRocks, Skipped: "no server: set " + engine.EnvMySQLDSN + " or --mysql DSN to measure MariaDB's MyRocks"})
	case my.MyRocks:
		e, skipped, err := myrocks.Open(ctx, my.DSN)
		if err != nil {
			return fail(err)
		}
		if e == nil {
			return fail(fmt.Errorf("%w %s: myrocks: where the copies go: %s", engine.ErrLike, o.Like, skipped))
		}
		engines = append(engines, e)
		if err := e.WriteLike(ctx, sources[my.Engine], o.N); err != nil {
			return fail(err)
		}
		likes = append(likes, sources[my.Engine].Table)
		infos = append(infos, e.Info())
	case o.Like != "":
		infos = append(infos, engine.Info{Name: engine.MyRocks, Skipped: "a --like run copies your InnoDB table into InnoDB only"})
	case o.NoMyRocks:
		infos = append(infos, engine.Info{Name: engine.MyRocks, Skipped: "switched off"})
	default:
		e, skipped, err := myrocks.Open(ctx, my.DSN)
		if err != nil {
			return fail(err)
		}
		if e == nil {
			infos = append(infos, engine.Info{Name: engine.MyRocks, Skipped: skipped})
			break
		}
		engines = append(engines, e)
		infos = append(infos, e.Info())
	}
	if o.Spider {
		c, err := spider.Start(ctx, filepath.Join(dir, "spider"), o.Shards)
		if err != nil {
			return fail(err)
		}
		for _, t := range []spider.Topology{spider.Range, spider.Hash} {
			e := spider.New(c, t, o.Writers, t == spider.Hash) // the last one closes the cluster
			engines = append(engines, e)
			infos = append(infos, e.Info())
		}
	}
	return engines, infos, likes, nil
}

// serverPlans returns the plans of PostgreSQL and MariaDB/MySQL, in report
// order.
func (o Options) serverPlans() []engine.Target {
	plan := func(eng, dsn, scratch, env, flag string) engine.Target {
		switch {
		case dsn == "":
			return engine.Target{Engine: eng, Skipped: "no server: set " + env + " or --" + flag + " DSN to measure " + engineProducts[eng]}
		case o.Like == "":
			return engine.Target{Engine: eng, DSN: dsn}
		case scratch == "":
			return engine.Target{Engine: eng, DSN: dsn, Source: dsn, Polite: true}
		}
		return engine.Target{Engine: eng, DSN: scratch, Source: dsn}
	}
	plans := []engine.Target{
		plan(engine.Postgres, o.PostgresDSN, o.ScratchPostgresDSN, engine.EnvPostgresDSN, "postgres"),
		plan(engine.MySQL, o.MySQLDSN, o.ScratchMySQLDSN, engine.EnvMySQLDSN, "mysql"),
	}
	for i := range plans {
		plans[i].Throttled = o.MaxLoad > 0 || o.MaxLag > 0
	}
	return plans
}

// engineProducts names the servers each engine measures.
var engineProducts = map[string]string{engine.Postgres: "PostgreSQL", engine.MySQL: "MariaDB/MySQL", engine.MyRocks: "MariaDB's MyRocks"}

func bboltSettings(o Options) string {
	var fills []string
	for _, f := range o.Fills {
		fills = append(fills, fmt.Sprint(f))
	}
	return "fill " + strings.Join(fills, " and ") + ", fsync " + report.OnOff(o.Sync)
}

// readSources checks the rights of o's server plans and, in a --like
// run, reads the table on each source (see preflight): the plans, with
// a MyRocks table's marked, and the tables read, by engine.
func readSources(ctx context.Context, o Options) ([]engine.Target, map[string]*engine.Source, error) {
	plans := o.serverPlans()
	sources := map[string]*engine.Source{}
	var read func() error
	if o.Like != "" {
		name, err := engine.ParseLike(o.Like)
		if err != nil {
			return nil, nil, err
		}
		read = func() error {
			for i, p := range plans {
				if p.DSN == "" {
					continue
				}
				if sources[p.Engine], err = readLike(ctx, p, name, o.Sample, o.N); err != nil {
					return err
				}
				if sources[p.Engine].Table.Engine != engine.MyRocks {
					continue
				}
				switch {
				case p.Polite:
					return fmt.Errorf("%w %s: mysql: a MyRocks table's copies need --scratch DSN, a MariaDB server with the ROCKSDB engine: their figures come from flushes and compactions the run forces (SET GLOBAL rocksdb_force_flush_memtable_now), which on the source would flush every table's memtables", engine.ErrLike, name)
				case o.NoMyRocks:
					return fmt.Errorf("%w %s: mysql: a MyRocks table, and MyRocks is switched off", engine.ErrLike, name)
				}
				plans[i].MyRocks = true
			}
			if len(sources) == 0 {
				return fmt.Errorf("%w %s: no server to read the table from; want --postgres DSN or --mysql DSN", engine.ErrLike, name)
			}
			return nil
		}
	}
	if err := preflight(ctx, plans, o.Like, read); err != nil {
		return nil, nil, err
	}
	return plans, sources, nil
}
