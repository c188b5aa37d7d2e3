package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/jackc/pgx/v5"
)

// Preflight checks the rights of a PostgreSQL plan on the server the
// loads go to.
func Preflight(ctx context.Context, p engine.Target) ([]engine.MissingRight, error) {
	conn, err := Connect(ctx, p.DSN)
	if err != nil {
		return nil, fmt.Errorf("compare: postgres: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	cfg := conn.Config()
	var user, database string
	var super, create, extension, inspect, statindex, checkpoint, stats bool
	var version int
	if err := conn.QueryRow(ctx, `SELECT current_user, current_database(), r.rolsuper,
		  has_database_privilege(current_database(), 'CREATE'),
		  EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pgstattuple'),
		  EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pageinspect'),
		  coalesce(has_function_privilege(to_regprocedure('pgstatindex(regclass)'), 'EXECUTE'), false),
		  CASE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pg_checkpoint') THEN pg_has_role('pg_checkpoint', 'MEMBER') ELSE false END,
		  pg_has_role('pg_read_all_stats', 'MEMBER'),
		  current_setting('server_version_num')::int
		FROM pg_roles r WHERE r.rolname = current_user`).Scan(&user, &database, &super, &create, &extension, &inspect, &statindex, &checkpoint, &stats, &version); err != nil {
		return nil, fmt.Errorf("compare: postgres: read the rights of the user: %w", err)
	}
	role, db := pgx.Identifier{user}.Sanitize(), pgx.Identifier{database}.Sanitize()
	side := "where the copies go"
	if p.Polite {
		side = "the source, where the copies go too"
	}
	where := fmt.Sprintf("PostgreSQL %s as %s, %s", engine.ServerName(cfg.Host, cfg.Port, database), user, side)
	var out []engine.MissingRight
	if !create && !super {
		out = append(out, engine.Missing(where, "CREATE on the database, for the run's own schema", fmt.Sprintf("GRANT CREATE ON DATABASE %s TO %s;", db, role)))
	}
	switch {
	case !extension && (p.Polite || !super):
		out = append(out, engine.Missing(where, "the extension pgstattuple, whose pgstatindex measures the indexes' leaf pages",
			fmt.Sprintf("CREATE EXTENSION pgstattuple;  -- by a superuser, in database %s", db)))
		if !super {
			out = append(out, engine.Missing(where, "EXECUTE on pgstatindex", fmt.Sprintf("GRANT pg_stat_scan_tables TO %s;", role)))
		}
	case extension && !statindex && !super:
		out = append(out, engine.Missing(where, "EXECUTE on pgstatindex", fmt.Sprintf("GRANT pg_stat_scan_tables TO %s;", role)))
	}
	// On the source no checkpoint is forced: the pages each interval
	// changes, counted from their LSNs with pageinspect, are the one
	// write figure there that tells random keys from ordered ones, and
	// pageinspect reads raw pages for superusers alone.
	pages := "pageinspect, whose page LSNs count the pages each interval changes: on the source, with no checkpoint forced, the one write figure that tells random keys from ordered ones"
	if p.Polite && !inspect {
		out = append(out, engine.Missing(where, "the extension "+pages, fmt.Sprintf("CREATE EXTENSION pageinspect;  -- by a superuser, in database %s", db)))
	}
	if p.Polite && !super {
		out = append(out, engine.Missing(where, "a superuser's role, for pageinspect's raw-page functions, which refuse any other role",
			fmt.Sprintf("ALTER ROLE %s SUPERUSER;", role)))
	}
	if p.Throttled && !super && !stats {
		out = append(out, engine.Missing(where, "pg_read_all_stats, to see other roles' sessions and the standbys' lag for --max-load and --max-lag",
			fmt.Sprintf("GRANT pg_read_all_stats TO %s;", role)))
	}
	if !p.Polite && !super && !checkpoint {
		grant := fmt.Sprintf("GRANT pg_checkpoint TO %s;", role)
		if version < 150000 {
			grant = fmt.Sprintf("ALTER ROLE %s SUPERUSER;  -- before PostgreSQL 15 only a superuser may run CHECKPOINT", role)
		}
		out = append(out, engine.Missing(where, "CHECKPOINT, which each load runs at its intervals", grant))
	}
	return out, nil
}

// SourceRights checks the rights to read the --like table on its
// source server: USAGE on its schema and SELECT on it.
func SourceRights(ctx context.Context, p engine.Target, like string) ([]engine.MissingRight, error) {
	name, err := engine.ParseLike(like)
	if err != nil {
		return nil, err
	}
	src, err := Connect(ctx, p.Source)
	if err != nil {
		return nil, fmt.Errorf("compare: postgres: connect to the source: %w", err)
	}
	defer src.Close(context.WithoutCancel(ctx))
	var user, database string
	if err := src.QueryRow(ctx, "SELECT current_user, current_database()").Scan(&user, &database); err != nil {
		return nil, fmt.Errorf("compare: postgres: read the rights of the user on the source: %w", err)
	}
	role := pgx.Identifier{user}.Sanitize()
	side := "the source"
	if p.Polite {
		side = "the source, where the copies go too"
	}
	where := fmt.Sprintf("PostgreSQL %s as %s, %s", engine.ServerName(src.Config().Host, src.Config().Port, database), user, side)
	var usage, sel bool
	err = src.QueryRow(ctx, `SELECT has_schema_privilege(n.oid, 'USAGE'), has_table_privilege(c.oid, 'SELECT')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
		name.Schema.Postgres(), name.Table.Postgres()).Scan(&usage, &sel)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil // reading the table says there is none
	}
	if err != nil {
		return nil, fmt.Errorf("compare: postgres: read the rights on %s: %w", name, err)
	}
	var out []engine.MissingRight
	schema := pgx.Identifier{name.Schema.Postgres()}.Sanitize()
	if !usage {
		out = append(out, engine.Missing(where, "USAGE on schema "+schema, fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s;", schema, role)))
	}
	if !sel {
		table := pgx.Identifier{name.Schema.Postgres(), name.Table.Postgres()}.Sanitize()
		out = append(out, engine.Missing(where, "SELECT on "+table, fmt.Sprintf("GRANT SELECT ON %s TO %s;", table, role)))
	}
	return out, nil
}

// Busy reads, on conn, PostgreSQL's client sessions running a statement
// other than conn's own, and the largest replay lag of its standbys
// (pg_stat_replication; 0 without any). Both need pg_read_all_stats (or a
// superuser) to see other roles' sessions, which the preflight asks for.
func Busy(conn *pgx.Conn) func(context.Context) (engine.Busy, error) {
	return func(ctx context.Context) (engine.Busy, error) {
		var b engine.Busy
		var lag float64
		err := conn.QueryRow(ctx, `SELECT
			  (SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()),
			  coalesce((SELECT extract(epoch FROM max(replay_lag)) FROM pg_stat_replication), 0)`).Scan(&b.Running, &lag)
		b.Lag = time.Duration(lag * float64(time.Second))
		return b, err
	}
}
