package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// Plan is what a --like run would do on each server, said by DryRun
// before it does any of it: the rights are checked and the table is read
// as the run would, and nothing is loaded.
type Plan struct {
	Like    string       `json:"like"`
	Servers []ServerPlan `json:"servers"`
}

// ServerPlan is a dry run's account of one server of a --like run.
type ServerPlan struct {
	Engine string `json:"engine"`
	// Source and Copies name the server the table is read from and the
	// one the copies are built on ("the source" when they are one).
	Source string `json:"source"`
	Copies string `json:"copies"`
	// Creates says what the run creates there, Reads what it reads of
	// the table, and Writes what it writes.
	Creates string `json:"creates"`
	Reads   string `json:"reads"`
	Writes  string `json:"writes"`
	// Loads is the number of copies loaded, Rows the rows of each, and
	// SampleRows the rows of the sample table the copies are filled from.
	Loads      int `json:"loads"`
	Rows       int `json:"rows_per_load"`
	SampleRows int `json:"sample_rows"`
	// LogBytes estimates the WAL (PostgreSQL) or redo (InnoDB) the loads
	// write on the copies' server, from the table's own bytes a row
	// (estimateLogBytes); Estimate says how.
	LogBytes int64  `json:"log_bytes_estimate"`
	Estimate string `json:"estimate"`
}

// logRecordBytes is what one row's log record costs beside the row's
// bytes, per relation it goes to (the heap and each index on PostgreSQL,
// the clustered index and each secondary one on InnoDB): a record's
// header and its block reference, about 50 bytes on either server.
const logRecordBytes = 50

// estimateLogBytes estimates the log a load of rows rows into copies of
// t writes: each row's bytes in the table and its indexes, as the table
// holds them today (their free space included), and a record per
// relation. A copy with another key type differs by the key's width; a
// checkpoint of the server's during a load adds full-page images, and
// such a load may run again: the estimate leaves both out.
func estimateLogBytes(t engine.LikeTable, rows int) int64 {
	if t.Rows <= 0 {
		return 0
	}
	return int64(float64(perRowBytes(t)+int64(logRecordBytes*(1+len(separateIndexes(t))))) * float64(rows))
}

// separateIndexes are t's indexes apart from its table: on InnoDB and
// MyRocks every one but the primary key, whose bytes are the table's.
func separateIndexes(t engine.LikeTable) []engine.IndexFigures {
	if t.Engine == engine.Postgres {
		return t.Indexes
	}
	var out []engine.IndexFigures
	for _, ix := range t.Indexes {
		if !strings.HasPrefix(ix.Name, "primary key") {
			out = append(out, ix)
		}
	}
	return out
}

// DryRun checks the rights and reads the table as a --like run of opts
// would (RunContext), and returns what that run would create, read and
// write on each server, with an estimate of the log it would write,
// having created nothing but the rights check's own probe database on
// MariaDB/MySQL, which it drops at once, and loaded nothing.
func DryRun(ctx context.Context, opts Options) (*Plan, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Like == "" {
		return nil, fmt.Errorf("%w: a dry run is of a --like run: name the table with Like (--like)", ErrOptions)
	}
	plans, sources, err := readSources(ctx, o)
	if err != nil {
		return nil, err
	}
	name, _ := engine.ParseLike(o.Like)
	writers := 1
	if o.Writers > 1 {
		writers = 2
	}
	loads := len(o.Schemes) * writers
	if o.Concurrent && o.Writers > 1 {
		loads += len(o.Schemes)
	}
	p := &Plan{Like: name.String()}
	for _, sp := range plans {
		src := sources[sp.Engine]
		if sp.DSN == "" || src == nil {
			continue
		}
		t := src.Table
		eng := sp.Engine
		if sp.MyRocks {
			eng = engine.MyRocks
		}
		s := ServerPlan{Engine: eng, Source: serverOf(sp.Source), Copies: serverOf(sp.DSN), Loads: loads, Rows: o.N, SampleRows: t.Sampled}
		if sp.Polite {
			s.Copies = "the source"
		}
		where, log := "a schema idkit_compare_<random>", "WAL"
		if eng != engine.Postgres {
			where, log = "a database idkit_compare_<random>", "redo"
		}
		if sp.MyRocks {
			where, log = "a database idkit_rocks_<random> in a column family of its own, which the server keeps after the run (MyRocks drops no column family)", "log"
		}
		s.Creates = fmt.Sprintf("%s, with a sample table of %s rows and one copy of %s at a time (%d in all, each dropped after its load), dropped at the end", where, engine.Thousands(int64(t.Sampled)), name, loads)
		s.Reads = fmt.Sprintf("%s: the catalog and statistics, and %s sampled rows in one read-only snapshot (read by this dry run too)", name, engine.Thousands(int64(t.Sampled)))
		s.Writes = fmt.Sprintf("%d loads of %s rows: %s rows, and the sample's %s", loads, engine.Thousands(int64(o.N)), engine.Thousands(int64(loads*o.N)), engine.Thousands(int64(t.Sampled)))
		s.LogBytes = estimateLogBytes(t, loads*o.N+t.Sampled)
		s.Estimate = fmt.Sprintf("%s of %s on %s: the table's %s a row in the table and its indexes today and %d bytes a record per relation, over every row written; a checkpoint or flush of the server's during a load adds full-page images and may run the load again, up to %dx",
			engine.MiB(float64(s.LogBytes)), log, s.Copies, engine.BytesText(perRowBytes(t)), logRecordBytes, engine.LikeTries)
		p.Servers = append(p.Servers, s)
	}
	return p, nil
}

// perRowBytes is a row's bytes in t's table and indexes today.
func perRowBytes(t engine.LikeTable) int64 {
	if t.Rows <= 0 {
		return 0
	}
	b := t.TableBytes + t.ToastBytes
	for _, ix := range separateIndexes(t) {
		b += ix.Bytes
	}
	return b / t.Rows
}

// serverOf names the server a DSN points at, without its credentials.
func serverOf(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if cfg, err := pgx.ParseConfig(dsn); err == nil {
			return engine.ServerName(cfg.Host, cfg.Port, cfg.Database)
		}
	}
	if cfg, err := mysql.ParseDSN(dsn); err == nil {
		return engine.ServerName(cfg.Addr, 0, cfg.DBName)
	}
	return "the server"
}

// WriteJSON writes the plan as JSON.
func (p *Plan) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// WriteText writes the plan as the command prints it.
func (p *Plan) WriteText(w io.Writer) error {
	ew := &report.ErrWriter{W: w}
	fmt.Fprintf(ew, "DRY RUN — what idkit compare --like %s would do; it has created nothing and loaded nothing\n", p.Like)
	for _, s := range p.Servers {
		fmt.Fprintf(ew, "\n%s: the table on %s, the copies on %s\n", s.Engine, s.Source, s.Copies)
		fmt.Fprintf(ew, "  creates: %s\n", s.Creates)
		fmt.Fprintf(ew, "  reads: %s\n", s.Reads)
		fmt.Fprintf(ew, "  writes: %s\n", s.Writes)
		fmt.Fprintf(ew, "  estimate: %s\n", s.Estimate)
	}
	return ew.Err
}
