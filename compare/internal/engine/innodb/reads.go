package innodb

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/idkit/idkit/compare/internal/engine"
)

// myReads measures the InnoDB pages a point lookup through the key
// column key (quoted) accesses, reading column (quoted) of each row, over
// keys spread over the table and over its newest 1%.
func (e *Engine) myReads(ctx context.Context, l engine.Load, table, key, column string, m map[string]float64) error {
	spread, newest := engine.LookupKeys(l.Keys.N())
	for _, q := range []struct {
		key  string
		keys []int
	}{{"lookup_pages", spread}, {"lookup_pages_newest", newest}} {
		if len(q.keys) < 2 {
			continue // one key is a const lookup, read while planning: no engine stats
		}
		// Chunks of even size, so that none holds a lone key.
		chunks := (len(q.keys) + InList - 1) / InList
		var rows, pages float64
		for chunk := range slices.Chunk(q.keys, (len(q.keys)+chunks-1)/chunks) {
			r, p, err := e.analyzeLookups(ctx, l, table, key, column, chunk)
			if err != nil {
				return err
			}
			rows, pages = rows+r, pages+p
		}
		if rows != float64(len(q.keys)) {
			return fmt.Errorf("point lookups found %g of %d keys", rows, len(q.keys))
		}
		m[q.key] = pages / float64(len(q.keys))
	}
	// The newest rows by a range scan through the key, from the least
	// key among them.
	lowest := engine.LowestNewest(l)
	rows, pages, err := e.analyze(ctx, "SELECT count("+column+") FROM "+table+" FORCE INDEX (PRIMARY) WHERE "+key+" >= "+KeyLiteral(l, lowest), l.Table)
	if err != nil {
		return fmt.Errorf("range scan of the newest rows: %w", err)
	}
	n := l.Keys.N()
	m["newest_scan_pages"] = pages
	m["newest_scan_rows"] = rows / float64(n-engine.NewestStart(n))
	return nil
}

// InList is the most keys a lookup statement names: below MariaDB's
// in_predicate_conversion_threshold (1,000), past which an IN list becomes
// a join with a table of its values, which may scan the table instead.
const InList = 500

// analyzeLookups runs the point lookups of keys idx of l in table under
// ANALYZE FORMAT=JSON, and returns the rows they found and the pages they
// accessed.
func (e *Engine) analyzeLookups(ctx context.Context, l engine.Load, table, key, column string, idx []int) (rows, pages float64, err error) {
	lits := make([]string, len(idx))
	for j, i := range idx {
		lits[j] = KeyLiteral(l, i)
	}
	rows, pages, err = e.analyze(ctx, "SELECT "+column+" FROM "+table+" FORCE INDEX (PRIMARY) WHERE "+key+" IN ("+strings.Join(lits, ",")+")", l.Table)
	if err != nil {
		return 0, 0, fmt.Errorf("point lookups: %w", err)
	}
	return rows, pages, nil
}

// KeyLiteral writes key i of l as an SQL literal. The keys are the
// run's own, and ANALYZE takes no placeholders.
func KeyLiteral(l engine.Load, i int) string {
	if l.Bigint() {
		return strconv.FormatInt(l.Int64At(i), 10)
	}
	return "X'" + hex.EncodeToString(l.Keys.At(i)) + "'"
}

// analyze runs query under ANALYZE FORMAT=JSON and returns the rows it
// read from table and the InnoDB pages it accessed there.
func (e *Engine) analyze(ctx context.Context, query, table string) (rows, pages float64, err error) {
	var plan string
	if err := e.conn.QueryRowContext(ctx, "ANALYZE FORMAT=JSON "+query).Scan(&plan); err != nil {
		return 0, 0, err
	}
	var doc any
	if err := json.Unmarshal([]byte(plan), &doc); err != nil {
		return 0, 0, fmt.Errorf("unexpected ANALYZE output %.200q: %w", plan, err)
	}
	rows, pages, ok := analyzeCounts(doc, table)
	if !ok {
		return 0, 0, fmt.Errorf("ANALYZE output without r_rows and r_engine_stats.pages_accessed: %.300q", plan)
	}
	return rows, pages, nil
}

// analyzeCounts sums, over the accesses to table in MariaDB's ANALYZE
// FORMAT=JSON output, the rows read (r_rows times r_loops) and the pages
// accessed. A long IN list may become a join with a table of its values
// (in_predicate_conversion_threshold), which it leaves out.
func analyzeCounts(doc any, table string) (rows, pages float64, ok bool) {
	switch v := doc.(type) {
	case map[string]any:
		if t, isTable := v["table"].(map[string]any); isTable && t["table_name"] == table {
			r, hasRows := t["r_rows"].(float64)
			loops, _ := t["r_loops"].(float64)
			stats, _ := t["r_engine_stats"].(map[string]any)
			p, hasPages := stats["pages_accessed"].(float64)
			if hasRows && hasPages {
				rows += r * max(loops, 1)
				pages += p
				ok = true
			}
		}
		for k, c := range v {
			if k == "table" {
				continue
			}
			r, p, o := analyzeCounts(c, table)
			rows, pages, ok = rows+r, pages+p, ok || o
		}
	case []any:
		for _, c := range v {
			r, p, o := analyzeCounts(c, table)
			rows, pages, ok = rows+r, pages+p, ok || o
		}
	}
	return rows, pages, ok
}
