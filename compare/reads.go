package compare

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// lookupSample is how many keys the point lookups of a load read, at most:
// spread over the whole table, and taken from its newest 1%.
const lookupSample = 1_000

// newestShare is the newest part of a table whose reads the reports
// follow: the rows an application reads most, and the index pages that
// must stay in cache for them.
const newestShare = 100 // 1 / newestShare of the rows

// lookupKeys returns the indices, in generation order, of the keys the
// point lookups of an n-key load read: at most lookupSample keys spread
// evenly over the load (one at a random place in each of as many equal
// strides), and as many spread over its newest 1%. The generator has a
// fixed seed, so that a run's page counts do not change from run to run.
func lookupKeys(n int) (spread, newest []int) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(lo, hi int) []int {
		m := min(lookupSample, hi-lo)
		out := make([]int, 0, m)
		for j := range m {
			a, b := lo+j*(hi-lo)/m, lo+(j+1)*(hi-lo)/m
			out = append(out, a+rng.IntN(b-a))
		}
		return out
	}
	return pick(0, n), pick(newestStart(n), n)
}

// newestStart is the index of the first key of an n-key load's newest 1%.
func newestStart(n int) int { return n - max(1, n/newestShare) }

func fmtTwo(v float64) string { return fmt.Sprintf("%.2f", v) }

// pgReads measures the reads of a loaded table through its key column
// key (quoted), reading column (quoted) of each row: the buffer pages a
// point lookup touches, over keys spread over the table and over its
// newest 1%, and, when pageinspect may be used, the leaf pages of the key
// index that hold the newest 1% of rows. The table's heap is filled in
// generation order (inserts only, autovacuum off), so the newest rows are
// those from the heap position of the first of them on.
func (e *postgresEngine) pgReads(ctx context.Context, l dbLoad, colType, table, index, key, column string, m map[string]float64) error {
	n := l.keys.N()
	spread, newest := lookupKeys(n)
	tx, err := e.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// Index scans only: the figure is the cost of a lookup through the
	// key, whatever plan the planner would choose for a thousand of them.
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off"); err != nil {
		return fmt.Errorf("force index scans: %w", err)
	}
	for _, q := range []struct {
		key  string
		keys []int
	}{{"lookup_pages", spread}, {"lookup_pages_newest", newest}} {
		pages, rows, err := explainPages(ctx, tx, fmt.Sprintf("SELECT %s FROM %s WHERE %s = ANY($1::%s[])", column, table, key, colType), pgKeysAt(l, colType, q.keys))
		if err != nil {
			return fmt.Errorf("point lookups: %w", err)
		}
		if rows != int64(len(q.keys)) {
			return fmt.Errorf("point lookups found %d of %d keys", rows, len(q.keys))
		}
		m[q.key] = float64(pages) / float64(len(q.keys))
	}
	// The newest rows by a range scan through the key, from the least
	// key among them: every row at or above it is read. The count's plan
	// returns one row, so the rows read are counted apart.
	from := fmt.Sprintf("FROM %s WHERE %s >= ($1::%s[])[1]", table, key, colType)
	lowest := pgKeysAt(l, colType, []int{lowestNewest(l)})
	var scanned int64
	if err := tx.QueryRow(ctx, "SELECT count(*) "+from, lowest).Scan(&scanned); err != nil {
		return fmt.Errorf("range scan of the newest rows: %w", err)
	}
	pages, _, err := explainPages(ctx, tx, "SELECT count("+column+") "+from, lowest)
	if err != nil {
		return fmt.Errorf("range scan of the newest rows: %w", err)
	}
	m["newest_scan_pages"] = float64(pages)
	m["newest_scan_rows"] = float64(scanned) / float64(n-newestStart(n))
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if !e.pageinspect {
		return nil
	}
	var first string
	if err := e.conn.QueryRow(ctx, fmt.Sprintf("SELECT ctid::text FROM %s WHERE %s = ($1::%s[])[1]", table, key, colType),
		pgKeysAt(l, colType, []int{newestStart(n)})).Scan(&first); err != nil {
		return fmt.Errorf("heap position of the newest rows: %w", err)
	}
	var leaves int64
	if err := e.conn.QueryRow(ctx, `SELECT count(*)
		FROM generate_series(1, pg_relation_size($1::text::regclass) / current_setting('block_size')::bigint - 1) AS b(blkno)
		WHERE (bt_page_stats($1::text, blkno)).type = 'l'
		  AND EXISTS (SELECT 1 FROM bt_page_items($1::text, blkno) i WHERE i.htid >= $2::tid)`, index, first).Scan(&leaves); err != nil {
		return fmt.Errorf("leaf pages of the newest rows: %w", err)
	}
	m["newest_leaf_pages"] = float64(leaves)
	if all := m["leaf_pages"]; all > 0 {
		m["newest_leaf_share"] = float64(leaves) / all
	}
	return nil
}

// explainPages runs query under EXPLAIN (ANALYZE, BUFFERS) on tx and
// returns the shared buffers its plan touched (hit or read) and the rows
// its top node returned.
func explainPages(ctx context.Context, tx pgx.Tx, query string, args ...any) (pages, rows int64, err error) {
	var plan []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+query, args...).Scan(&plan); err != nil {
		return 0, 0, err
	}
	var ex []struct {
		Plan struct {
			Hit  int64 `json:"Shared Hit Blocks"`
			Read int64 `json:"Shared Read Blocks"`
			Rows int64 `json:"Actual Rows"`
		} `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &ex); err != nil || len(ex) != 1 {
		return 0, 0, fmt.Errorf("unexpected EXPLAIN output %.200q: %v", plan, err)
	}
	return ex[0].Plan.Hit + ex[0].Plan.Read, ex[0].Plan.Rows, nil
}

// lowestNewest returns the index of the least key among the newest 1% of
// l's keys: a range scan through the key that reads the newest rows
// starts there.
func lowestNewest(l dbLoad) int {
	lo := newestStart(l.keys.N())
	for i := lo + 1; i < l.keys.N(); i++ {
		if bytes.Compare(l.keys.At(i), l.keys.At(lo)) < 0 {
			lo = i
		}
	}
	return lo
}

// pgKeysAt returns keys idx of l as the array argument of a colType
// column.
func pgKeysAt(l dbLoad, colType string, idx []int) any {
	switch colType {
	case "bigint":
		ks := make([]int64, len(idx))
		for j, i := range idx {
			ks[j] = l.int64At(i)
		}
		return ks
	case "uuid":
		ks := make([][16]byte, len(idx))
		for j, i := range idx {
			ks[j] = [16]byte(l.keys.At(i))
		}
		return ks
	default:
		ks := make([][]byte, len(idx))
		for j, i := range idx {
			ks[j] = l.keys.At(i)
		}
		return ks
	}
}

// pgPageinspect says whether the user may read index pages with
// pageinspect, creating the extension first when it is missing and the
// user is a superuser (as the run does with pgstattuple). Without it the
// working-set figure is left out.
func pgPageinspect(ctx context.Context, conn *pgx.Conn) (bool, error) {
	var super, present bool
	if err := conn.QueryRow(ctx, `SELECT rolsuper, EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pageinspect')
		FROM pg_roles WHERE rolname = current_user`).Scan(&super, &present); err != nil {
		return false, fmt.Errorf("read the rights on pageinspect: %w", err)
	}
	if !present && !super {
		return false, nil
	}
	if !present {
		if err := createExtension(ctx, conn, "pageinspect"); err != nil {
			return false, err
		}
	}
	return pgMayInspect(ctx, conn)
}

// pgMayInspect says whether pageinspect is there and the user may run
// the functions the run reads pages with: a superuser, since their own
// code refuses any other role, whatever it was granted.
func pgMayInspect(ctx context.Context, conn *pgx.Conn) (bool, error) {
	var may bool
	err := conn.QueryRow(ctx, `SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
		AND coalesce(has_function_privilege(to_regprocedure('bt_page_items(text,bigint)'), 'EXECUTE'), false)
		AND coalesce(has_function_privilege(to_regprocedure('bt_page_stats(text,bigint)'), 'EXECUTE'), false)
		AND coalesce(has_function_privilege(to_regprocedure('get_raw_page(text,bigint)'), 'EXECUTE'), false)
		AND coalesce(has_function_privilege(to_regprocedure('page_header(bytea)'), 'EXECUTE'), false)`).Scan(&may)
	return may, err
}

// myReads measures the InnoDB pages a point lookup through the key
// column key (quoted) accesses, reading column (quoted) of each row, over
// keys spread over the table and over its newest 1%.
func (e *mysqlEngine) myReads(ctx context.Context, l dbLoad, table, key, column string, m map[string]float64) error {
	spread, newest := lookupKeys(l.keys.N())
	for _, q := range []struct {
		key  string
		keys []int
	}{{"lookup_pages", spread}, {"lookup_pages_newest", newest}} {
		if len(q.keys) < 2 {
			continue // one key is a const lookup, read while planning: no engine stats
		}
		// Chunks of even size, so that none holds a lone key.
		chunks := (len(q.keys) + mysqlInList - 1) / mysqlInList
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
	lowest := lowestNewest(l)
	rows, pages, err := e.analyze(ctx, "SELECT count("+column+") FROM "+table+" FORCE INDEX (PRIMARY) WHERE "+key+" >= "+mysqlKeyLiteral(l, lowest), l.table)
	if err != nil {
		return fmt.Errorf("range scan of the newest rows: %w", err)
	}
	n := l.keys.N()
	m["newest_scan_pages"] = pages
	m["newest_scan_rows"] = rows / float64(n-newestStart(n))
	return nil
}

// mysqlInList is the most keys a lookup statement names: below MariaDB's
// in_predicate_conversion_threshold (1,000), past which an IN list becomes
// a join with a table of its values, which may scan the table instead.
const mysqlInList = 500

// analyzeLookups runs the point lookups of keys idx of l in table under
// ANALYZE FORMAT=JSON, and returns the rows they found and the pages they
// accessed.
func (e *mysqlEngine) analyzeLookups(ctx context.Context, l dbLoad, table, key, column string, idx []int) (rows, pages float64, err error) {
	lits := make([]string, len(idx))
	for j, i := range idx {
		lits[j] = mysqlKeyLiteral(l, i)
	}
	rows, pages, err = e.analyze(ctx, "SELECT "+column+" FROM "+table+" FORCE INDEX (PRIMARY) WHERE "+key+" IN ("+strings.Join(lits, ",")+")", l.table)
	if err != nil {
		return 0, 0, fmt.Errorf("point lookups: %w", err)
	}
	return rows, pages, nil
}

// mysqlKeyLiteral writes key i of l as an SQL literal. The keys are the
// run's own, and ANALYZE takes no placeholders.
func mysqlKeyLiteral(l dbLoad, i int) string {
	if l.bigint() {
		return strconv.FormatInt(l.int64At(i), 10)
	}
	return "X'" + hex.EncodeToString(l.keys.At(i)) + "'"
}

// analyze runs query under ANALYZE FORMAT=JSON and returns the rows it
// read from table and the InnoDB pages it accessed there.
func (e *mysqlEngine) analyze(ctx context.Context, query, table string) (rows, pages float64, err error) {
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
