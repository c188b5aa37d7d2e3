package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/bbolt"
)

// Where a figure comes from, as the reports label it.
const (
	SourceComputed = "computed" // from the scheme's layout constants
	SourceMeasured = "measured" // in the run, on the machine it ran on
)

// A Column describes one figure of the reports. The text table, the HTML
// page and the JSON all take their columns from [Report.Columns], so the
// three never disagree on what a figure is called or means.
type Column struct {
	// Section is the table the column belongs to: design, generation, or
	// an engine name.
	Section string `json:"section"`
	// Key names the figure: an EngineLoad metric for the database
	// engines, a field of the report otherwise.
	Key string `json:"key"`
	// Head is the column's heading in the tables.
	Head string `json:"head"`
	// Doc says what the figure is and how it is obtained.
	Doc string `json:"doc"`
	// Source is SourceComputed or SourceMeasured.
	Source string `json:"source"`
	// Headline marks an engine's locality figure, which the tables follow
	// with its ratio to the baseline's and the charts draw.
	Headline bool `json:"headline,omitempty"`

	cell func(s *Result, run int) string
}

// Section is one table of the reports.
type Section struct {
	ID     string
	Title  string
	Source string
	Note   []string
}

// metricColumn is a column of a database engine's table: the figure key
// of its EngineLoad, formatted by format.
func metricColumn(eng, key, head, doc string, format func(float64) string) Column {
	return Column{
		Section: eng, Key: key, Head: head, Doc: doc, Source: SourceMeasured,
		cell: func(s *Result, run int) string {
			l, ok := s.Runs[run].EngineLoad(eng)
			if !ok {
				return "-"
			}
			v, ok := l.Metric(key)
			if !ok {
				return "-"
			}
			return format(v)
		},
	}
}

func FmtInt(v float64) string   { return engine.Thousands(int64(v + 0.5)) }
func FmtOne(v float64) string   { return fmt.Sprintf("%.1f", v) }
func fmtPct(v float64) string   { return engine.Pct(v) }
func fmtBytes(v float64) string { return engine.MiB(v) }

// engineColumns describes the database engines' figures.
func engineColumns() []Column {
	h := func(c Column) Column { c.Headline = true; return c }
	return slices.Concat([]Column{
		h(metricColumn(engine.SQLite, "wal_frames_per_1000", "WAL frames/1k",
			"WAL frames written per 1,000 inserts: one frame per page a commit changed (PRAGMA wal_checkpoint's log count, summed)", FmtInt)),
		metricColumn(engine.SQLite, "page_count", "pages", "pages of the database file after the load (PRAGMA page_count)", FmtInt),
		metricColumn(engine.SQLite, "leaf_density", "leaf density", "used bytes of the key's B-tree leaf pages over their size (dbstat)", fmtPct),
		metricColumn(engine.SQLite, "bytes_per_key", "B/key", "database bytes (page_count x page_size) per key", FmtInt),
		metricColumn(engine.SQLite, "file_bytes", "file", "size of the database file after the last checkpoint", fmtBytes),
		metricColumn(engine.SQLite, "inserts_per_second", "inserts/s", "keys over the time spent in insert transactions (checkpoints excluded)", FmtInt),
	}, spiderColumns(engine.SpiderRange), spiderColumns(engine.SpiderHash), []Column{
		h(metricColumn(engine.Pebble, "write_amp", "write amp",
			"bytes written to tables by flushes and compactions per byte written to the log (Metrics: Total().WriteAmp() - 1, the log's own bytes left out)", engine.FmtTwo)),
		metricColumn(engine.Pebble, "moved_per_byte_in", "moved/byte",
			"bytes of tables moved down a level without a rewrite (move compactions, TableBytesMoved) per byte written to the log", engine.FmtTwo),
		metricColumn(engine.Pebble, "space_amp", "space amp", "bytes of the tables over the rows' key and value bytes, once compactions have settled", engine.FmtTwo),
		metricColumn(engine.Pebble, "bytes_per_key", "B/key", "bytes of the tables per key", FmtInt),
		metricColumn(engine.Pebble, "read_amp", "read amp", "level-0 sublevels and other levels with tables: the most tables a lookup may consult (Metrics().ReadAmp())", FmtInt),
		metricColumn(engine.Pebble, "inserts_per_second", "inserts/s", "keys over the wall time of the load, its flushes and compactions included", FmtInt),
		metricColumn(engine.Pebble, "lookup_blocks", "blocks/lookup",
			"blocks (index, filter, data) a point lookup (Get) touches, block cache hits and misses, over 1,000 keys spread over the table", engine.FmtTwo),
		metricColumn(engine.Pebble, "lookup_filter_hits", "filter hits/lookup",
			"tables whose bloom filter ruled a lookup's key out, sparing a data block, per lookup (Metrics().Filter.Hits)", engine.FmtTwo),
		metricColumn(engine.Pebble, "lookup_newest_blocks", "blocks/lookup new", "blocks a point lookup touches, over up to 1,000 keys of the newest 1% of rows", engine.FmtTwo),
		metricColumn(engine.Pebble, "lookup_newest_filter_hits", "filter hits new", "bloom filter hits per lookup of the newest 1% of rows", engine.FmtTwo),
		metricColumn(engine.Pebble, "newest_scan_blocks", "newest 1% scan blocks",
			"blocks a range scan through the key touches to read the newest 1% of rows: from the least key among them up", FmtInt),
		metricColumn(engine.Pebble, "newest_scan_rows", "scan rows/newest",
			"rows that range scan reads over the newest 1%'s rows: 1.0 when the key orders rows by time, up to 100 when it does not", engine.FmtTwo),
		metricColumn(engine.Pebble, "expiry_range", "expiry", "how the oldest tenth of the rows was deleted: by one range deletion (keys that sort rows by age), or row by row", expiryHow),
		metricColumn(engine.Pebble, "expiry_bytes_per_row", "expiry B/row",
			"bytes written (log, flushes, compactions) from deleting the oldest tenth until their space was reclaimed, per expired row", FmtOne),
		metricColumn(engine.Pebble, "expiry_reclaimed_auto", "reclaimed by Pebble",
			"share of the expired rows' bytes Pebble's own compactions reclaimed (delete-only compactions drop whole tables under a range deletion); below 0 where the deletion markers, flushed into tables of their own, took more space than the compactions had freed by then", fmtPct),
		metricColumn(engine.Pebble, "expiry_manual", "manual compaction",
			"yes: Pebble's compactions left more than a tenth of the space, and a manual compaction of the expired keys' range reclaimed it", yesNoFigure),
		metricColumn(engine.Pebble, "expiry_seconds", "expiry ms", "wall time from the deletion to the space reclaimed", func(v float64) string { return FmtInt(v * 1000) }),
		metricColumn(engine.Pebble, "expiry_scan_skipped", "expired scan skips",
			"deleted entries (tombstones and the rows under them) a scan over the expired keys' range steps over once Pebble's compactions have settled, before any manual one", FmtInt),
		metricColumn(engine.Pebble, "lifetime_write_amp", "life write amp",
			"write amp plus the expiry's bytes over the expired rows' share of the log: the bytes written per byte logged over a row's life, from insert to expiry", engine.FmtTwo),

		h(metricColumn(engine.MyRocks, "write_amp", "write amp",
			"bytes the load's column family wrote to tables, flushes and compactions (ROCKSDB_COMPACTION_STATS Write(GB)), per byte written to the log (Rocksdb_wal_bytes)", engine.FmtTwo)),
		metricColumn(engine.MyRocks, "moved_per_byte_in", "moved/byte", "bytes of tables moved down a level without a rewrite (trivial moves, Moved(GB)) per byte written to the log", engine.FmtTwo),
		metricColumn(engine.MyRocks, "space_amp", "space amp", "bytes of the column family's tables (SizeBytes) over the rows' key and value bytes, once compactions have settled", engine.FmtTwo),
		metricColumn(engine.MyRocks, "bytes_per_key", "B/key", "bytes of the column family's tables per key", FmtInt),
		metricColumn(engine.MyRocks, "inserts_per_second", "inserts/s", "keys over the wall time of the load and of the flushes and compactions it left", FmtInt),
		metricColumn(engine.MyRocks, "lookup_blocks", "blocks/lookup",
			"blocks a point lookup by key touches, read or found in the block cache (ROCKSDB_PERF_CONTEXT), over 1,000 keys spread over the table", engine.FmtTwo),
		metricColumn(engine.MyRocks, "lookup_filter_hits", "filter hits/lookup", "tables whose bloom filter ruled a lookup's key out (BLOOM_SST_MISS_COUNT), per lookup: 0 without a filter", engine.FmtTwo),
		metricColumn(engine.MyRocks, "lookup_newest_blocks", "blocks/lookup new", "blocks a point lookup touches, over up to 1,000 keys of the newest 1% of rows", engine.FmtTwo),
		metricColumn(engine.MyRocks, "newest_scan_blocks", "newest 1% scan blocks",
			"blocks a range scan through the key touches to read the newest 1% of rows: from the least key among them up", FmtInt),
		metricColumn(engine.MyRocks, "newest_scan_rows", "scan rows/newest",
			"rows that range scan reads over the newest 1%'s rows: 1.0 when the key orders rows by time, up to 100 when it does not", engine.FmtTwo),
		metricColumn(engine.MyRocks, "expiry_range", "expiry", "partition: the oldest tenth dropped with its partition (keys that sort rows by age), which MyRocks deletes by key range; rows: DELETE row by row", expiryHowMyRocks),
		metricColumn(engine.MyRocks, "expiry_bytes_per_row", "expiry B/row",
			"bytes written (log and the column family's flushes and compactions) from the expiry until its space was reclaimed, per expired row", FmtOne),
		metricColumn(engine.MyRocks, "expiry_reclaimed_auto", "reclaimed by MyRocks", "share of the expired rows' bytes the server's own work reclaimed; below 0 where the deletion markers, flushed into tables of their own, took more space than its compactions had freed by then", fmtPct),
		metricColumn(engine.MyRocks, "expiry_manual", "manual compaction", "yes: the server left more than a tenth of the space, and a compaction of the column family (rocksdb_compact_cf) reclaimed it", yesNoFigure),
		metricColumn(engine.MyRocks, "expiry_seconds", "expiry ms", "wall time from the expiry's statement to the space reclaimed", func(v float64) string { return FmtInt(v * 1000) }),
		metricColumn(engine.MyRocks, "expiry_scan_skipped", "expired scan tombstones",
			"deletion markers a scan over the expired keys' range steps over once the server's own work has settled, before any manual compaction (INTERNAL_DELETE_SKIPPED_COUNT): 0 where a dropped partition took the range", FmtInt),
		metricColumn(engine.MyRocks, "lifetime_write_amp", "life write amp",
			"write amp plus the expiry's bytes over the expired rows' share of the log: the bytes written per byte logged over a row's life", engine.FmtTwo),

		h(metricColumn(engine.Postgres, "pages_dirtied_per_1000", "dirtied/1k",
			"shared buffers dirtied per 1,000 inserts (EXPLAIN (ANALYZE, BUFFERS) of each batch): pages a checkpoint must write", FmtInt)),
		metricColumn(engine.Postgres, "wal_bytes_per_insert", "WAL B/insert", "WAL bytes per insert (EXPLAIN (ANALYZE, WAL) of each batch), full-page images included", FmtInt),
		metricColumn(engine.Postgres, "wal_bytes_lsn_per_insert", "LSN B/insert",
			"server-wide WAL position (LSN) difference over the load per insert: the statements' WAL plus commit and checkpoint records, and other sessions' writes", FmtInt),
		metricColumn(engine.Postgres, "wal_fpi_per_1000", "FPI/1k", "full-page images per 1,000 inserts: pages first changed after a checkpoint", FmtInt),
		metricColumn(engine.Postgres, "index_bytes", "pkey index", "primary-key index size (pg_relation_size)", fmtBytes),
		metricColumn(engine.Postgres, "index_bytes_per_key", "index B/key", "primary-key index bytes per key", FmtOne),
		metricColumn(engine.Postgres, "heap_bytes", "heap", "table (heap) size (pg_relation_size)", fmtBytes),
		metricColumn(engine.Postgres, "leaf_density", "leaf density", "average leaf density of the primary-key index (pgstattuple's pgstatindex)", fmtPct),
		metricColumn(engine.Postgres, "leaf_fragmentation", "leaf frag", "leaf pages out of physical order (pgstatindex's leaf_fragmentation)", fmtPct),
		metricColumn(engine.Postgres, "inserts_per_second", "inserts/s", "keys over the time spent in the batches' statements (checkpoints excluded)", FmtInt),
		metricColumn(engine.Postgres, "lookup_pages", "pages/lookup",
			"buffer pages a point lookup by key touches, over 1,000 keys spread over the table (EXPLAIN (ANALYZE, BUFFERS), index scans forced): the index's levels and the heap page", engine.FmtTwo),
		metricColumn(engine.Postgres, "lookup_pages_newest", "pages/lookup new",
			"buffer pages a point lookup touches, over up to 1,000 keys of the newest 1% of rows", engine.FmtTwo),
		metricColumn(engine.Postgres, "newest_scan_pages", "newest 1% scan pages",
			"buffer pages a range scan through the key touches to read the newest 1% of rows: from the least key among them up (EXPLAIN (ANALYZE, BUFFERS))", FmtInt),
		metricColumn(engine.Postgres, "newest_scan_rows", "scan rows/newest",
			"rows that range scan reads over the newest 1%'s rows: 1.0 when the key orders rows by time, up to 100 when it does not", engine.FmtTwo),
		metricColumn(engine.Postgres, "newest_leaf_pages", "newest 1% leaves",
			"leaf pages of the primary-key index that hold a key of the newest 1% of rows (pageinspect's bt_page_items): the working set that must stay in cache", FmtInt),
		metricColumn(engine.Postgres, "newest_leaf_share", "newest 1% share",
			"newest 1% leaves over all leaf pages of the primary-key index", fmtPct),

		h(metricColumn(engine.MySQL, "pages_written_per_1000", "written/1k",
			"InnoDB pages written per 1,000 inserts (Innodb_pages_written), the table flushed at each interval", FmtInt)),
		metricColumn(engine.MySQL, "redo_bytes_per_insert", "redo B/insert", "redo log bytes per insert (Innodb_lsn_current)", FmtInt),
		metricColumn(engine.MySQL, "page_splits_per_1000", "splits/1k", "index page splits per 1,000 inserts (INNODB_METRICS index_page_splits)", FmtOne),
		metricColumn(engine.MySQL, "index_bytes", "clustered index", "clustered (primary-key) index size: its pages in mysql.innodb_index_stats after ANALYZE TABLE", fmtBytes),
		metricColumn(engine.MySQL, "index_bytes_per_key", "index B/key", "clustered index bytes per key (the row lives in it)", FmtOne),
		metricColumn(engine.MySQL, "leaf_pages", "leaf pages", "leaf pages of the clustered index (innodb_index_stats n_leaf_pages)", FmtInt),
		metricColumn(engine.MySQL, "leaf_density", "leaf density", "used bytes of the index's pages in the buffer pool over their size (INNODB_BUFFER_PAGE data_size)", fmtPct),
		metricColumn(engine.MySQL, "inserts_per_second", "inserts/s", "keys over the time spent in the batches' INSERTs (flushes excluded)", FmtInt),
		metricColumn(engine.MySQL, "lookup_pages", "pages/lookup",
			"InnoDB pages a point lookup by key accesses, over 1,000 keys spread over the table (ANALYZE FORMAT=JSON's r_engine_stats.pages_accessed)", engine.FmtTwo),
		metricColumn(engine.MySQL, "lookup_pages_newest", "pages/lookup new",
			"InnoDB pages a point lookup accesses, over up to 1,000 keys of the newest 1% of rows", engine.FmtTwo),
		metricColumn(engine.MySQL, "newest_scan_pages", "newest 1% scan pages",
			"InnoDB pages a range scan through the key accesses to read the newest 1% of rows: from the least key among them up", FmtInt),
		metricColumn(engine.MySQL, "newest_scan_rows", "scan rows/newest",
			"rows that range scan reads over the newest 1%'s rows: 1.0 when the key orders rows by time, up to 100 when it does not", engine.FmtTwo),
	})
}

// spiderColumns describes the figures of a sharded engine, one of the
// Spider topologies: the same for both, but for what growing the table
// moves, which differs.
func spiderColumns(eng string) []Column {
	cols := []Column{
		metricColumn(eng, "busiest_share", "busiest shard", "share of the inserts the busiest shard took (rows on each backend after the load)", fmtPct),
		metricColumn(eng, "busiest_share_window", "busiest/tenth", "the busiest shard's share in the tenth of the load where it was highest (Handler_write on each backend)", fmtPct),
		metricColumn(eng, "pages_written_per_1000", "pages/1k", "InnoDB pages written on all backends per 1,000 inserts, once their dirty pages were flushed", FmtInt),
		metricColumn(eng, "busiest_pages_share", "busiest pages", "the busiest shard's share of the pages written", fmtPct),
		metricColumn(eng, "inserts_per_second", "inserts/s", "keys over the time spent in the batches, through one connection to the front", FmtInt),
		metricColumn(eng, "batch_p99_ms", "p99 ms", "99th percentile of one batch's insert through one connection", engine.FmtTwo),
		metricColumn(eng, "concurrent_inserts_per_second", "inserts/s at once", "keys over the wall time with one connection per writer at once (K writers, the K-writer run's keys)", FmtInt),
		metricColumn(eng, "concurrent_batch_p99_ms", "p99 ms at once", "99th percentile of one batch's insert with K connections at once", engine.FmtTwo),
	}
	cols[0].Headline = true
	if eng == engine.SpiderHash {
		return append(cols, metricColumn(eng, "add_shard_moves", "new shard moves", "share of the rows a new shard takes: whole buckets, until it holds its share of them", fmtPct))
	}
	return append(cols,
		metricColumn(eng, "add_shard_moves", "new shard moves", "share of the rows a new shard takes: the upper half of the busiest range", fmtPct),
		metricColumn(eng, "split_busiest_share_after", "hot after split", "split the busiest range at the median of its rows halfway through the load: the share of the later inserts on the busier half", fmtPct))
}

// expiryHow names the way an expiry deleted its rows.
func expiryHow(v float64) string {
	if v == 1 {
		return "range"
	}
	return "rows"
}

// expiryHowMyRocks names the way a MyRocks expiry deleted its rows.
func expiryHowMyRocks(v float64) string {
	if v == 1 {
		return "partition"
	}
	return "rows"
}

// yesNoFigure formats a figure that is 1 or 0.
func yesNoFigure(v float64) string { return yesNo(v == 1) }

// likeEngineColumns describes the figures only a --like run's loads have:
// the write figures of the paths that force no checkpoint or count a
// copy's own pages, the tries a load took to measure them, and a MyRocks
// copy's own bytes.
func likeEngineColumns() []Column {
	h := func(c Column) Column { c.Headline = true; return c }
	return []Column{
		h(metricColumn(engine.Postgres, "pages_changed_per_1000", "changed/1k",
			"pages of the copy whose LSN moved in each interval, per 1,000 inserts (pageinspect's page_header, no checkpoint forced): the pages a checkpoint at each interval would write", FmtInt)),
		metricColumn(engine.Postgres, "key_pages_changed_per_1000", "key changed/1k",
			"pages of the primary-key index whose LSN moved in each interval, per 1,000 inserts (pageinspect's page_header): the pages the key's order changes", FmtInt),
		metricColumn(engine.Postgres, "wal_bytes_no_fpi_per_insert", "WAL B/insert, no FPI",
			"WAL bytes per insert of the batches' statements with no checkpoint forced (EXPLAIN (ANALYZE, WAL)): the records without full-page images, kept when no checkpoint of the server's fell in the load", FmtInt),
		metricColumn(engine.Postgres, "tries", "tries", "loads run to measure the load without a checkpoint of the server's in it (at most 2)", FmtInt),
		h(metricColumn(engine.MySQL, "pages_changed_per_1000", "changed/1k",
			"pages of the copy whose newest change is past the log sequence number at the start of each flush interval, per 1,000 inserts (INNODB_BUFFER_PAGE's newest_modification): the copy's own pages each flush writes", FmtInt)),
		metricColumn(engine.MySQL, "tries", "tries", "loads run to measure the server's counters without another session's writes in them (at most 2)", FmtInt),
		h(metricColumn(engine.MyRocks, "bytes_written_per_insert", "written B/insert",
			"bytes the copy's column family wrote to tables, flushes and compactions, per insert: the copy's own writes, which no other session's move", FmtInt)),
		metricColumn(engine.MyRocks, "wal_bytes_per_insert", "log B/insert", "bytes written to the log per insert (Rocksdb_wal_bytes), kept when no other session changed MyRocks rows during the load", FmtInt),
		metricColumn(engine.MyRocks, "all_index_bytes_per_key", "all indexes B/key", "bytes of every index of the copy in its column family's tables, per key", FmtInt),
	}
}

// bboltColumn is a column of the bbolt table for the load at one fill.
func bboltColumn(fill float64, li int, key, head, doc string, headline bool, v func(bbolt.Load) string) Column {
	return Column{
		Section: engine.Bbolt, Key: fmt.Sprintf("%s@%g", key, fill), Head: fmt.Sprintf("%s @%g", head, fill),
		Doc: doc, Source: SourceMeasured, Headline: headline,
		cell: func(s *Result, run int) string {
			if li >= len(s.Runs[run].Loads) {
				return "-"
			}
			return v(s.Runs[run].Loads[li])
		},
	}
}

// columns describes every figure of the report, in table order: the
// design, generation and bbolt figures, and those of each database engine
// that ran.
func (r *Report) FigureColumns() []Column {
	c := func(section, key, head, source, doc string, cell func(s *Result, run int) string) Column {
		return Column{Section: section, Key: key, Head: head, Source: source, Doc: doc, cell: cell}
	}
	cols := []Column{
		c("design", "kind", "kind", SourceComputed, "baseline, idkit or peer", func(s *Result, _ int) string { return string(s.Kind) }),
		c("design", "bits", "bits", SourceComputed, "size of an ID in bits", func(s *Result, _ int) string { return fmt.Sprint(s.Design.Bits) }),
		c("design", "int63", "int63", SourceComputed, "every ID fits a positive int64 (a BIGINT column)", func(s *Result, _ int) string { return yesNo(s.Design.Int63) }),
		c("design", "js_safe", "JS-safe", SourceComputed, "every ID is at most 2^53, so a JavaScript number holds it", func(s *Result, _ int) string { return yesNo(s.Design.JSSafe) }),
		c("design", "time_order", "time order", SourceComputed, "resolution of the leading time field", func(s *Result, _ int) string { return s.DesignText.TimeOrder }),
		c("design", "lifetime", "lifetime", SourceComputed, "when the time field runs out or wraps", func(s *Result, _ int) string { return s.DesignText.Lifetime }),
		c("design", "ids_per_second_per_node", "IDs/s/node", SourceComputed, "IDs one node issues per second by design", func(s *Result, _ int) string { return s.DesignText.Rate }),

		c("generation", "ns_per_id", "ns/ID", SourceMeasured, "nanoseconds per ID on one goroutine, key encoding included (*: at the layout's rate limit)", func(s *Result, _ int) string { return num(s.Speed.NsPerID) + capMark(s) }),
		c("generation", "parallel_ns_per_id", fmt.Sprintf("ns/ID x%d", r.Goroutines()), SourceMeasured, "nanoseconds per ID with GOMAXPROCS goroutines sharing one generator", func(s *Result, _ int) string { return num(s.Speed.ParallelNsPerID) + capMark(s) }),
		c("generation", "allocs_per_id", "allocs/ID", SourceMeasured, "heap allocations per ID", func(s *Result, _ int) string { return fmt.Sprintf("%.2g", s.Speed.AllocsPerID) }),
		c("generation", "append_fraction", "append", SourceMeasured, "inserts greater than every earlier key", func(s *Result, run int) string { return engine.Pct(s.Runs[run].Order.Appends) }),
		c("generation", "inversion_fraction", "inversions", SourceMeasured, "fraction of out-of-order pairs (0 sorted, 0.5 random)", func(s *Result, run int) string {
			return fmt.Sprintf("%.3f", s.Runs[run].Order.InversionFraction)
		}),
		c("generation", "key_bytes", "B/key", SourceMeasured, "bytes of a key", func(s *Result, run int) string { return fmt.Sprint(s.Runs[run].Size.KeyBytes) }),
		c("generation", "packed_bytes_per_id", "B/ID packed", SourceMeasured, "bytes per ID after sorting, delta and varint encoding", func(s *Result, run int) string {
			return fmt.Sprintf("%.2f", s.Runs[run].Size.PackedBytesPerID)
		}),
		c("generation", "max_bits", "max bits", SourceMeasured, "bits of the largest ID issued (<= 53 fits a JavaScript number)", func(s *Result, run int) string { return fmt.Sprint(s.Runs[run].Size.MaxBits) }),
		c("generation", "duplicates", "dups", SourceMeasured, "keys issued twice", func(s *Result, run int) string { return fmt.Sprint(s.Runs[run].Order.Duplicates) }),

		c("ranges", "ranges_busiest_now", "busiest node now", SourceMeasured,
			fmt.Sprintf("model of a store that splits ranges by size (Spanner, CockroachDB, TiDB): ranges split at their median once over %s rows, spread over %d nodes in turn; the busiest node's share of the inserts at any one time (windows of an eighth of a range, over the load's second half)", engine.Thousands(int64(r.Config.Ranges.RangeRows)), r.Config.Ranges.Nodes),
			func(s *Result, run int) string { return engine.Pct(s.Runs[run].Ranges.BusiestNow) }),
		c("ranges", "ranges_busiest", "busiest node", SourceMeasured, "the model's busiest node's share of all the inserts",
			func(s *Result, run int) string { return engine.Pct(s.Runs[run].Ranges.Busiest) }),
		c("ranges", "ranges", "ranges", SourceMeasured, "ranges the model's table ends with",
			func(s *Result, run int) string { return fmt.Sprint(s.Runs[run].Ranges.Ranges) }),

		c("randomness", "varying_bits", "varying bits", SourceMeasured, "bit positions that differ between keys; constant ones (version fields, unused high bits) are left out of the tests",
			func(s *Result, run int) string { return fmt.Sprint(s.Runs[run].Randomness.VaryingBits) }),
		c("randomness", "monobit_p", "monobit p", SourceMeasured, "p-value of NIST SP 800-22's frequency (monobit) test of the varying bits: ones as frequent as zeros?",
			func(s *Result, run int) string {
				return pValue(s.Runs[run].Randomness, s.Runs[run].Randomness.MonobitP)
			}),
		c("randomness", "runs_p", "runs p", SourceMeasured, "p-value of NIST SP 800-22's runs test: does each bit position change between consecutive keys as often as a coin?",
			func(s *Result, run int) string { return pValue(s.Runs[run].Randomness, s.Runs[run].Randomness.RunsP) }),
		c("randomness", "chi_square_p", "chi² p", SourceMeasured, "p-value of the chi-square test of the bit stream's bytes against 256 equally likely values",
			func(s *Result, run int) string {
				return pValue(s.Runs[run].Randomness, s.Runs[run].Randomness.ChiSquareP)
			}),
		c("randomness", "random", "guessable", SourceMeasured, fmt.Sprintf("no: every test passed at p >= %g; yes: a test found structure that helps guess or count IDs", scheme.RandomnessAlpha),
			func(s *Result, run int) string {
				r := s.Runs[run].Randomness
				switch {
				case !r.Tested:
					return "-"
				case r.Random:
					return "no"
				}
				return "yes"
			}),
	}
	for li, f := range r.Config.Fills {
		cols = append(cols, bboltColumn(f, li, "pages_written_per_1000", "pages/1k",
			"pages the commits allocated and wrote (TxStats.PageCount) plus one meta page per commit, per 1,000 inserts", true,
			func(l bbolt.Load) string { return fmt.Sprintf("%.0f", l.PagesPer1000) }))
	}
	for _, group := range []struct {
		key, head, doc string
		v              func(bbolt.Load) string
	}{
		{"splits_per_1000", "splits/1k", "node splits per 1,000 inserts (TxStats.Split)", func(l bbolt.Load) string { return fmt.Sprintf("%.1f", l.SplitsPer1000) }},
		{"leaf_fill", "leaf fill", "used bytes of the leaf pages over their size", func(l bbolt.Load) string { return engine.Pct(l.LeafFill) }},
		{"inserts_per_second", "inserts/s", "keys over the wall time of all inserts and commits", func(l bbolt.Load) string { return engine.Thousands(int64(l.InsertsPerSecond)) }},
		{"bytes_per_key", "B/key", "bytes of the file's pages (Tx.Size) per key", func(l bbolt.Load) string { return fmt.Sprintf("%.0f", l.BytesPerKey) }},
	} {
		for li, f := range r.Config.Fills {
			cols = append(cols, bboltColumn(f, li, group.key, group.head, group.doc, false, group.v))
		}
	}
	measured := r.Measured()
	engineCols := engineColumns()
	if r.Config.Like != "" {
		engineCols = append(engineCols, likeEngineColumns()...)
	}
	for _, c := range engineCols {
		if slices.Contains(measured, c.Section) {
			cols = append(cols, c)
		}
	}
	if r.Config.Concurrent {
		for _, e := range []string{engine.Postgres, engine.MySQL} {
			if slices.Contains(measured, e) {
				cols = append(cols, concurrentColumns(e)...)
			}
		}
	}
	return cols
}

// SectionConcurrent is the table of the loads by K connections at once.
const SectionConcurrent = "concurrent"

// concurrentColumns describes the figures of engine's concurrent loads.
func concurrentColumns(eng string) []Column {
	name := map[string]string{engine.Postgres: "PostgreSQL", engine.MySQL: "InnoDB"}[eng]
	c := func(key, head, doc string, v func(c *engine.ConcurrentLoad) string) Column {
		return Column{
			Section: SectionConcurrent, Key: eng + "_concurrent_" + key, Head: head, Doc: doc, Source: SourceMeasured,
			cell: func(s *Result, run int) string {
				l, ok := s.Runs[run].EngineLoad(eng)
				if !ok || l.Concurrent == nil {
					return "-"
				}
				return v(l.Concurrent)
			},
		}
	}
	cols := []Column{
		c("inserts_per_second", name+" inserts/s", name+": all keys over the wall time of the K connections' inserts", func(c *engine.ConcurrentLoad) string { return FmtInt(c.InsertsPerSecond) }),
		c("batch_p99_ms", name+" p99 ms", name+": 99th percentile of one batch's insert and commit, over every connection's batches", func(c *engine.ConcurrentLoad) string { return FmtOne(c.BatchP99Ms) }),
	}
	if eng == engine.Postgres {
		return append(cols, c("waits", "PostgreSQL waits", "what the sessions running a statement waited on, sampled every 5 ms in pg_stat_activity (CPU: no wait event), as shares of the samples",
			func(c *engine.ConcurrentLoad) string { return engine.TopWaits(c) }))
	}
	return append(cols,
		c("states", "InnoDB states", "the thread states of the sessions running a statement, sampled every 5 ms in PROCESSLIST, as shares of the samples",
			func(c *engine.ConcurrentLoad) string { return engine.TopWaits(c) }),
		c("row_lock_waits", "row lock waits", "Innodb_row_lock_waits over the load: server-wide, other sessions add to it",
			func(c *engine.ConcurrentLoad) string { return FmtInt(c.Server["innodb_row_lock_waits"]) }),
		c("log_waits", "log waits", "Innodb_log_waits over the load, waits for room in the redo log buffer: server-wide",
			func(c *engine.ConcurrentLoad) string { return FmtInt(c.Server["innodb_log_waits"]) }))
}

// pValue formats a p-value of r: three decimals, or an exponent below
// 0.001; "-" when too few bits were tested.
func pValue(r scheme.Randomness, p float64) string {
	switch {
	case !r.Tested:
		return "-"
	case p >= 0.001:
		return fmt.Sprintf("%.3f", p)
	case p == 0:
		return "0"
	}
	return fmt.Sprintf("%.0e", p)
}

func capMark(s *Result) string {
	if s.Speed.AtCap {
		return "*"
	}
	return ""
}

// Table is one table of the reports, rendered from the columns.
type Table struct {
	Section
	Head []string
	// Docs holds each column's description, in Head's order.
	Docs []string
	Rows [][]string
}

// Sections returns the report's tables in order; each engine that did not
// run is left out.
func (r *Report) Sections() []Section {
	n := engine.Thousands(int64(r.Config.N))
	c := r.Config
	secs := []Section{
		{ID: "design", Title: "DESIGN — computed from each scheme's layout, not measured", Source: SourceComputed},
		{ID: "generation", Title: fmt.Sprintf("GENERATION, ORDER, SIZE — measured in this run (%s keys generated back to back)", n), Source: SourceMeasured,
			Note: []string{"*: at the layout's IDs/s/node limit: the figure is the limit, not the cost of an ID",
				"append: inserts greater than every earlier key; inversions: fraction of out-of-order pairs (0 sorted, 0.5 random)",
				"B/ID packed: sorted, delta, varint; max bits: of the largest ID issued (<= 53 fits a JavaScript number)"}},
		{ID: "randomness", Title: fmt.Sprintf("RANDOMNESS OF THE ID BITS — measured in this run (the first %s keys, the bits that vary)", engine.Thousands(int64(min(c.N, scheme.RandomnessMaxIDs)))),
			Source: SourceMeasured, Note: []string{
				"tested: each bit position that varies, across the keys in generation order, one position after another: coin flips in random keys",
				fmt.Sprintf("guessable: a test's p-value is below %g; random keys fail by chance about 3 times in a million runs", scheme.RandomnessAlpha),
				"counters and time-based IDs fail: their bits change too regularly (runs) or unevenly (monobit, chi²); a public ID hides an ordered one"}},
		{ID: "ranges", Title: fmt.Sprintf("RANGES — a model from this run's keys: a store that splits ranges at %s rows over %d nodes (Spanner, CockroachDB, TiDB)", engine.Thousands(int64(c.Ranges.RangeRows)), c.Ranges.Nodes),
			Source: SourceMeasured, Note: []string{
				"busiest node now: where the inserts go at any one time once the table has grown: near 100% when the key grows with time (every insert on the last range), near an even share when it spreads (above it by chance in the short windows of a small N)",
				"a model, not a store: --engine spider measures the same on MariaDB Spider tables over shards, and its loads check its range partition against this model"}},
		{ID: engine.Bbolt, Title: fmt.Sprintf("INSERT LOCALITY IN BBOLT — measured in this run (%s keys in generation order, %d-byte values, %s per tx, %d-byte pages, fsync %s)",
			n, c.ValueSize, engine.Thousands(int64(c.BatchSize)), c.PageSize, OnOff(c.Sync)), Source: SourceMeasured,
			Note: []string{"headline: pages written per 1,000 inserts (x: times the counter's)",
				"pages written: pages the commits allocated and wrote (bbolt TxStats.PageCount) plus one meta page per commit;",
				"splits alone mislead: an append-only load splits its last page every time it fills, yet writes few pages;",
				"inserts/s is wall-clock time and the noisiest figure; pages, splits and fill do not depend on the machine"}},
	}
	every := engine.Thousands(int64(c.CheckpointEvery))
	dbTitle := func(name, eng string) string {
		if t := r.LikeTable(eng); t != nil {
			interval := "checkpoint every " + every + " inserts"
			switch {
			case t.OnSource && eng == engine.Postgres:
				interval = "no checkpoint forced, the pages changed counted every " + every + " inserts"
			case t.OnSource:
				interval = "no flush"
			}
			return fmt.Sprintf("INSERT LOCALITY IN %s — measured in this run (%s keys in generation order into copies of %s, the other columns from %s sampled rows, %s per transaction, %s)",
				name, n, t.Name, engine.Thousands(int64(t.Sampled)), engine.Thousands(int64(c.BatchSize)), interval)
		}
		return fmt.Sprintf("INSERT LOCALITY IN %s — measured in this run (%s keys in generation order, %d-byte payload, %s per transaction, checkpoint every %s inserts)",
			name, n, c.ValueSize, engine.Thousands(int64(c.BatchSize)), every)
	}
	for _, e := range r.Measured() {
		info := r.Engine(e)
		switch e {
		case engine.SQLite:
			secs = append(secs, Section{ID: e, Title: dbTitle("SQLITE", e), Source: SourceMeasured, Note: []string{
				"headline: WAL frames written per 1,000 inserts, one frame per page a commit changed (x: times the counter's)",
				info.Version + "; " + info.Settings}})
		case engine.Pebble:
			secs = append(secs, Section{ID: e, Source: SourceMeasured,
				Title: fmt.Sprintf("LSM TREE: WRITES, READS AND EXPIRY IN PEBBLE — measured in this run (%s keys in generation order, %d-byte values, %s per batch)", n, c.ValueSize, engine.Thousands(int64(c.BatchSize))),
				Note: []string{
					"headline: write amplification, bytes written to tables per byte logged (x: times the counter's); keys in order make tables that overlap no other, which compactions leave alone or move down a level unwritten (moved/byte)",
					"expiry: the oldest tenth of the rows deleted by one range deletion when the keys sort rows by age, else row by row; then Pebble's compactions, and a manual one of the range if they left the space",
					"life write amp adds the expiry's bytes, as if every tenth expired so: a row's cost from insert to expiry",
					info.Version + "; " + info.Settings}})
		case engine.MyRocks:
			note := []string{
				"headline: write amplification, the load's column family's table bytes per byte logged (x: times the counter's); the server compacts while the load inserts, so its counts vary a little from run to run",
				"expiry: keys that sort rows by age go into a table partitioned at the oldest tenth, dropped with its partition; the others DELETE the oldest tenth row by row"}
			if d := r.disturbedLoads(e); len(d) > 0 {
				note = append(note, "disturbed: another session changed MyRocks rows during the loads of "+strings.Join(d, ", ")+": the server's log bytes, and their write amplification, count that session's writes too")
			}
			secs = append(secs, Section{ID: e, Source: SourceMeasured,
				Title: fmt.Sprintf("LSM TREE: WRITES, READS AND EXPIRY IN MYROCKS — measured in this run (%s keys in generation order, %d-byte payload, %s per transaction)", n, c.ValueSize, engine.Thousands(int64(c.BatchSize))),
				Note:  append(note, info.Version+"; "+info.Settings)})
		case engine.Postgres:
			note := []string{
				"headline: shared buffers dirtied per 1,000 inserts (x: times the counter's); CHECKPOINT every " + every + " inserts models a long-lived database:",
				"a page's first change after a checkpoint dirties it again and logs a full-page image (FPI)"}
			if t := r.LikeTable(e); t != nil && t.OnSource {
				note = []string{
					"headline: pages of the copy changed in each interval of " + every + " inserts, counted from their LSNs (changed/1k; x: times the counter's): the pages a checkpoint there would write;",
					"the copies are on the source, where no checkpoint is forced: dirtied/1k and FPI/1k are left out, and the statements' WAL is their records alone"}
			}
			secs = append(secs, Section{ID: e, Title: dbTitle("POSTGRESQL", e), Source: SourceMeasured, Note: append(note, info.Version+"; "+info.Settings)})
		case engine.MySQL:
			note := []string{
				"headline: pages written per 1,000 inserts, the table flushed every " + every + " inserts (x: times the counter's);",
				"pages written, redo bytes and splits are server-wide counters read before and after each load"}
			if t := r.LikeTable(e); t != nil {
				note = append(note, "changed/1k: the copy's own pages changed in each flush interval (INNODB_BUFFER_PAGE), whatever other sessions do;",
					"the server-wide counters are left out of a load another session wrote during (tries: the loads run to measure one without)")
				if t.OnSource {
					note = []string{"the copies are on the source, where the run flushes nothing, scans no buffer pool and reads no server-wide counter: pages written, changed, redo and splits are left out"}
				}
			}
			secs = append(secs, Section{ID: e, Title: dbTitle("INNODB", e), Source: SourceMeasured, Note: append(note, info.Version+"; "+info.Settings)})
		case engine.SpiderRange, engine.SpiderHash:
			how := "BY RANGE OF THE KEY"
			if e == engine.SpiderHash {
				how = "BY HASH OF THE KEY"
			}
			secs = append(secs, Section{ID: e, Source: SourceMeasured,
				Title: fmt.Sprintf("SHARDS %s: MARIADB SPIDER — measured in this run (%s keys in generation order, %d-byte payload, %s per statement, through the front)", how, n, c.ValueSize, engine.Thousands(int64(c.BatchSize))),
				Note: []string{
					"headline: the busiest shard's share of the inserts (rows on each backend after the load); busiest/tenth: in the tenth of the load where it was highest",
					"pages/1k: InnoDB pages written on all backends, their dirty pages flushed before and after each load; at once: K connections, each its own writer's keys",
					"the shards are servers on this machine: they share its cores and disk, so more shards cannot show more write capacity here",
					info.Version + "; " + info.Settings}})
		}
	}
	if r.Config.Concurrent && (slices.Contains(r.Measured(), engine.Postgres) || slices.Contains(r.Measured(), engine.MySQL)) {
		secs = append(secs, Section{ID: SectionConcurrent, Source: SourceMeasured,
			Title: fmt.Sprintf("CONCURRENT WRITERS — measured in this run (the %d-writer keys, %d connections inserting at once, each its own writer's keys, %s per transaction, no checkpoints)",
				c.Writers, c.Writers, engine.Thousands(int64(c.BatchSize))),
			Note: []string{
				"the engine tables above load the same keys interleaved through one connection: their counts repeat from run to run;",
				"these are timings of real sessions contending for the index's pages and locks, and vary with the machine and its load"}})
	}
	return secs
}

// engine returns the EngineInfo called name.
// disturbedLoads names the loads on engine whose server-wide counters
// another session's writes changed (the figure "disturbed").
func (r *Report) disturbedLoads(eng string) []string {
	var out []string
	for _, s := range r.Schemes {
		for _, run := range s.Runs {
			if l, ok := run.EngineLoad(eng); ok && l.Metrics["disturbed"] == 1 {
				out = append(out, fmt.Sprintf("%s with %d writer(s)", s.Name, run.Writers))
			}
		}
	}
	return out
}

func (r *Report) Engine(name string) engine.Info {
	i := slices.IndexFunc(r.Engines, func(e engine.Info) bool { return e.Name == name })
	if i < 0 {
		return engine.Info{Name: name}
	}
	return r.Engines[i]
}

// Tables renders the report's sections from its columns.
func (r *Report) Tables() []Table {
	cols := r.FigureColumns()
	base := r.baselineResult()
	var out []Table
	for _, sec := range r.Sections() {
		t := Table{Section: sec, Head: []string{"scheme"}, Docs: []string{"the scheme's short name"}}
		var sc []Column
		for _, c := range cols {
			if c.Section == sec.ID {
				sc = append(sc, c)
			}
		}
		perRun := sec.ID != "design"
		if perRun {
			t.Head = append(t.Head, "writers")
			t.Docs = append(t.Docs, "interleaved writers whose keys were loaded")
		}
		for _, c := range sc {
			t.Head = append(t.Head, c.Head)
			t.Docs = append(t.Docs, c.Doc)
			if c.Headline && base != nil {
				t.Head = append(t.Head, "x")
				t.Docs = append(t.Docs, "the figure before over the counter's")
			}
		}
		for si := range r.Schemes {
			s := &r.Schemes[si]
			runs := []int{0}
			if perRun {
				runs = runs[:0]
				for ri := range s.Runs {
					if sec.ID != SectionConcurrent || s.Runs[ri].Writers > 1 {
						runs = append(runs, ri)
					}
				}
			}
			for _, ri := range runs {
				row := []string{s.Name}
				if perRun {
					row = append(row, fmt.Sprint(s.Runs[ri].Writers))
				}
				for _, c := range sc {
					row = append(row, c.cell(s, ri))
					if c.Headline && base != nil {
						row = append(row, ratioCell(c, s, base, ri))
					}
				}
				t.Rows = append(t.Rows, row)
			}
		}
		if sec.ID == engine.Bbolt {
			t.Note = slices.Clone(t.Note)
			for _, s := range r.Schemes {
				if s.KeysNote != "" {
					t.Note = append(t.Note, s.Name+": "+s.KeysNote)
				}
			}
		}
		out = append(out, t)
	}
	return append(out, r.likeTables()...)
}

// ratioCell formats a headline figure of s over the baseline's.
func ratioCell(c Column, s, base *Result, run int) string {
	v, ok1 := headlineValue(c, s, run)
	b, ok2 := headlineValue(c, base, run)
	if !ok1 || !ok2 || b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v/b)
}

// headlineValue returns a headline column's figure as a number.
func headlineValue(c Column, s *Result, run int) (float64, bool) {
	if run >= len(s.Runs) {
		return 0, false
	}
	if c.Section == engine.Bbolt {
		fill := strings.TrimPrefix(c.Key, "pages_written_per_1000@")
		for _, l := range s.Runs[run].Loads {
			if fmt.Sprint(l.FillPercent) == fill {
				return l.PagesPer1000, true
			}
		}
		return 0, false
	}
	l, ok := s.Runs[run].EngineLoad(c.Section)
	if !ok {
		return 0, false
	}
	return l.Metric(c.Key)
}

// baselineResult returns the baseline scheme's result, or nil.
func (r *Report) baselineResult() *Result {
	for i := range r.Schemes {
		if r.Schemes[i].Kind == scheme.Baseline {
			return &r.Schemes[i]
		}
	}
	return nil
}
