package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/jackc/pgx/v5"
)

// pgReads measures the reads of a loaded table through its key column
// key (quoted), reading column (quoted) of each row: the buffer pages a
// point lookup touches, over keys spread over the table and over its
// newest 1%, and, when pageinspect may be used, the leaf pages of the key
// index that hold the newest 1% of rows. The table's heap is filled in
// generation order (inserts only, autovacuum off), so the newest rows are
// those from the heap position of the first of them on.
func (e *Engine) pgReads(ctx context.Context, l engine.Load, colType, table, index, key, column string, m map[string]float64) error {
	n := l.Keys.N()
	spread, newest := engine.LookupKeys(n)
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
	lowest := pgKeysAt(l, colType, []int{engine.LowestNewest(l)})
	var scanned int64
	if err := tx.QueryRow(ctx, "SELECT count(*) "+from, lowest).Scan(&scanned); err != nil {
		return fmt.Errorf("range scan of the newest rows: %w", err)
	}
	pages, _, err := explainPages(ctx, tx, "SELECT count("+column+") "+from, lowest)
	if err != nil {
		return fmt.Errorf("range scan of the newest rows: %w", err)
	}
	m["newest_scan_pages"] = float64(pages)
	m["newest_scan_rows"] = float64(scanned) / float64(n-engine.NewestStart(n))
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if !e.pageinspect {
		return nil
	}
	var first string
	if err := e.conn.QueryRow(ctx, fmt.Sprintf("SELECT ctid::text FROM %s WHERE %s = ($1::%s[])[1]", table, key, colType),
		pgKeysAt(l, colType, []int{engine.NewestStart(n)})).Scan(&first); err != nil {
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

// pgKeysAt returns keys idx of l as the array argument of a colType
// column.
func pgKeysAt(l engine.Load, colType string, idx []int) any {
	switch colType {
	case "bigint":
		ks := make([]int64, len(idx))
		for j, i := range idx {
			ks[j] = l.Int64At(i)
		}
		return ks
	case "uuid":
		ks := make([][16]byte, len(idx))
		for j, i := range idx {
			ks[j] = [16]byte(l.Keys.At(i))
		}
		return ks
	default:
		ks := make([][]byte, len(idx))
		for j, i := range idx {
			ks[j] = l.Keys.At(i)
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
