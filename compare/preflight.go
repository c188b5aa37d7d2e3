package compare

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// ErrRights reports rights a run needs on a server and lacks. The run
// checks them all before it does any work, and names every missing one
// with the statement that grants it.
var ErrRights = errors.New("compare: missing rights")

// missingRight is one right a run lacks: on which server and side, what,
// and the statement that grants it.
type missingRight struct {
	where, what, grant string
}

// preflight checks, on every server of the plans, the rights the run
// needs: in a --like run on the source server first, and then on the
// server the loads go to. Between the two, once the source's rights are
// there, validate reads the table (nil: nothing to read), so that a table
// the run cannot copy is refused before the run creates anything, the
// check's own probe on MariaDB/MySQL included. It returns one ErrRights
// that lists every missing right.
func preflight(ctx context.Context, plans []serverPlan, like string, validate func() error) error {
	var missing []missingRight
	polite := false
	add := func(p serverPlan, m []missingRight) {
		missing = append(missing, m...)
		polite = polite || (p.polite && len(m) > 0)
	}
	for _, p := range plans {
		if p.dsn == "" || p.source == "" {
			continue
		}
		var m []missingRight
		var err error
		if p.engine == EnginePostgres {
			m, err = pgSourceRights(ctx, p, like)
		} else {
			m, err = mysqlSourceRights(ctx, p, like)
		}
		if err != nil {
			return err
		}
		add(p, m)
	}
	if len(missing) == 0 && validate != nil {
		if err := validate(); err != nil {
			return err
		}
	}
	for _, p := range plans {
		if p.dsn == "" {
			continue
		}
		var m []missingRight
		var err error
		if p.engine == EnginePostgres {
			m, err = pgPreflight(ctx, p)
		} else {
			m, err = mysqlPreflight(ctx, p)
		}
		if err != nil {
			return err
		}
		add(p, m)
	}
	if len(missing) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v: the run needs these and has done nothing:", ErrRights)
	for _, m := range missing {
		fmt.Fprintf(&b, "\n  %s: %s\n      %s", m.where, m.what, m.grant)
	}
	if polite {
		b.WriteString("\nor build the copies elsewhere with --scratch DSN: the source then needs SELECT on the table alone")
	}
	return &rightsError{b.String()}
}

// rightsError is the preflight's message, of kind ErrRights.
type rightsError struct{ msg string }

func (e *rightsError) Error() string        { return e.msg }
func (e *rightsError) Is(target error) bool { return target == ErrRights }

// pgPreflight checks the rights of a PostgreSQL plan on the server the
// loads go to.
func pgPreflight(ctx context.Context, p serverPlan) ([]missingRight, error) {
	conn, err := pgConnect(ctx, p.dsn)
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
	if p.polite {
		side = "the source, where the copies go too"
	}
	where := fmt.Sprintf("PostgreSQL %s as %s, %s", serverName(cfg.Host, cfg.Port, database), user, side)
	var out []missingRight
	if !create && !super {
		out = append(out, missingRight{where, "CREATE on the database, for the run's own schema", fmt.Sprintf("GRANT CREATE ON DATABASE %s TO %s;", db, role)})
	}
	switch {
	case !extension && (p.polite || !super):
		out = append(out, missingRight{where, "the extension pgstattuple, whose pgstatindex measures the indexes' leaf pages",
			fmt.Sprintf("CREATE EXTENSION pgstattuple;  -- by a superuser, in database %s", db)})
		if !super {
			out = append(out, missingRight{where, "EXECUTE on pgstatindex", fmt.Sprintf("GRANT pg_stat_scan_tables TO %s;", role)})
		}
	case extension && !statindex && !super:
		out = append(out, missingRight{where, "EXECUTE on pgstatindex", fmt.Sprintf("GRANT pg_stat_scan_tables TO %s;", role)})
	}
	// On the source no checkpoint is forced: the pages each interval
	// changes, counted from their LSNs with pageinspect, are the one
	// write figure there that tells random keys from ordered ones, and
	// pageinspect reads raw pages for superusers alone.
	pages := "pageinspect, whose page LSNs count the pages each interval changes: on the source, with no checkpoint forced, the one write figure that tells random keys from ordered ones"
	if p.polite && !inspect {
		out = append(out, missingRight{where, "the extension " + pages, fmt.Sprintf("CREATE EXTENSION pageinspect;  -- by a superuser, in database %s", db)})
	}
	if p.polite && !super {
		out = append(out, missingRight{where, "a superuser's role, for pageinspect's raw-page functions, which refuse any other role",
			fmt.Sprintf("ALTER ROLE %s SUPERUSER;", role)})
	}
	if p.throttled && !super && !stats {
		out = append(out, missingRight{where, "pg_read_all_stats, to see other roles' sessions and the standbys' lag for --max-load and --max-lag",
			fmt.Sprintf("GRANT pg_read_all_stats TO %s;", role)})
	}
	if !p.polite && !super && !checkpoint {
		grant := fmt.Sprintf("GRANT pg_checkpoint TO %s;", role)
		if version < 150000 {
			grant = fmt.Sprintf("ALTER ROLE %s SUPERUSER;  -- before PostgreSQL 15 only a superuser may run CHECKPOINT", role)
		}
		out = append(out, missingRight{where, "CHECKPOINT, which each load runs at its intervals", grant})
	}
	return out, nil
}

// pgSourceRights checks the rights to read the --like table on its
// source server: USAGE on its schema and SELECT on it.
func pgSourceRights(ctx context.Context, p serverPlan, like string) ([]missingRight, error) {
	name, err := ParseLike(like)
	if err != nil {
		return nil, err
	}
	src, err := pgConnect(ctx, p.source)
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
	if p.polite {
		side = "the source, where the copies go too"
	}
	where := fmt.Sprintf("PostgreSQL %s as %s, %s", serverName(src.Config().Host, src.Config().Port, database), user, side)
	var usage, sel bool
	err = src.QueryRow(ctx, `SELECT has_schema_privilege(n.oid, 'USAGE'), has_table_privilege(c.oid, 'SELECT')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
		name.Schema.postgres(), name.Table.postgres()).Scan(&usage, &sel)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil // reading the table says there is none
	}
	if err != nil {
		return nil, fmt.Errorf("compare: postgres: read the rights on %s: %w", name, err)
	}
	var out []missingRight
	schema := pgx.Identifier{name.Schema.postgres()}.Sanitize()
	if !usage {
		out = append(out, missingRight{where, "USAGE on schema " + schema, fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s;", schema, role)})
	}
	if !sel {
		table := pgx.Identifier{name.Schema.postgres(), name.Table.postgres()}.Sanitize()
		out = append(out, missingRight{where, "SELECT on " + table, fmt.Sprintf("GRANT SELECT ON %s TO %s;", table, role)})
	}
	return out, nil
}

// mysqlDatabaseRights are the rights a run needs on its own databases,
// idkit_compare_<random>.
const mysqlDatabaseRights = "CREATE, DROP, ALTER, INDEX, INSERT, SELECT, LOCK TABLES"

// mysqlPreflight checks the rights of a MariaDB/MySQL plan on the server
// the loads go to: the rights on the run's own databases, tried on a
// database of the check's own, which it drops; the global ones are read
// from USER_PRIVILEGES. Stopped (ctx done), it ends the statement it is
// in (KILL QUERY), so that nothing of it stays queued behind a lock.
func mysqlPreflight(ctx context.Context, p serverPlan) ([]missingRight, error) {
	var out []missingRight
	db, conn, err := mysqlConnect(ctx, p.dsn)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: %w", err)
	}
	defer db.Close()
	defer conn.Close()
	defer killOnStop(ctx, db, conn)()
	cfg, _ := mysql.ParseDSN(p.dsn)
	account, err := mysqlAccount(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: read the user: %w", err)
	}
	side := "where the copies go"
	if p.polite {
		side = "the source, where the copies go too"
	}
	where := fmt.Sprintf("MariaDB/MySQL %s as %s, %s", serverName(cfg.Addr, 0, cfg.DBName), account, side)

	// A MyRocks --like run's database is the MyRocks engine's.
	prefix := "idkit_compare_"
	if p.myrocks {
		prefix = "idkit_rocks_"
	}
	probe := prefix + runSuffix()
	steps := []string{
		"CREATE DATABASE " + probe,
		"CREATE TABLE " + probe + ".t (a INT NOT NULL PRIMARY KEY, b INT) ENGINE=InnoDB",
		"INSERT INTO " + probe + ".t VALUES (1, 1)",
		"SELECT count(*) FROM " + probe + ".t",
		"ALTER TABLE " + probe + ".t ADD COLUMN c INT",
		"CREATE INDEX b ON " + probe + ".t (b)",
	}
	if !p.polite {
		steps = append(steps, "FLUSH TABLES "+probe+".t FOR EXPORT", "UNLOCK TABLES")
	}
	steps = append(steps, "DROP TABLE "+probe+".t")
	var failed error
	for _, q := range steps {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			failed = err
			break
		}
	}
	if ctx.Err() != nil {
		return nil, mysqlDropAfterStop(ctx, db, probe)
	}
	conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+probe)
	if failed != nil {
		if !isMySQLDenied(failed) {
			return nil, fmt.Errorf("compare: mysql: try the rights on a database of the run's own: %w", failed)
		}
		out = append(out, missingRight{where, mysqlDatabaseRights + " on the run's own databases " + prefix + "*",
			fmt.Sprintf("GRANT %s ON `%s%%`.* TO %s;", mysqlDatabaseRights, strings.ReplaceAll(prefix, "_", "\\_"), account)})
	}
	if p.myrocks {
		lack, _, err := myrocksRights(ctx, conn)
		if err != nil {
			return nil, fmt.Errorf("compare: mysql: read the user's privileges: %w", err)
		}
		if lack != "" {
			out = append(out, missingRight{where, lack + " (SUPER to flush and compact the copies' column family, PROCESS to read the engine's statistics)",
				fmt.Sprintf("GRANT %s ON *.* TO %s;", lack, account)})
		}
		return out, nil
	}
	if _, err := conn.ExecContext(ctx, "SELECT 1 FROM mysql.innodb_index_stats LIMIT 0"); err != nil {
		if !isMySQLDenied(err) {
			return nil, fmt.Errorf("compare: mysql: read mysql.innodb_index_stats: %w", err)
		}
		out = append(out, missingRight{where, "SELECT on mysql.innodb_index_stats, the sizes of the copies' indexes",
			fmt.Sprintf("GRANT SELECT ON mysql.innodb_index_stats TO %s;", account)})
	}
	if p.polite {
		return out, nil
	}
	rows, err := conn.QueryContext(ctx, "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ?", account)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: read the user's privileges: %w", err)
	}
	has := map[string]bool{}
	for rows.Next() {
		var priv string
		if err := rows.Scan(&priv); err != nil {
			rows.Close()
			return nil, fmt.Errorf("compare: mysql: read the user's privileges: %w", err)
		}
		has[priv] = true
	}
	rows.Close()
	var lack []string
	for _, priv := range []string{"RELOAD", "PROCESS"} {
		if !has[priv] && !has["SUPER"] {
			lack = append(lack, priv)
		}
	}
	if len(lack) > 0 {
		out = append(out, missingRight{where, strings.Join(lack, " and ") + " (RELOAD to flush the copies, PROCESS to read InnoDB's page figures)",
			fmt.Sprintf("GRANT %s ON *.* TO %s;", strings.Join(lack, ", "), account)})
	}
	return out, nil
}

// mysqlSourceRights checks the right to read the --like table on its
// source server, and refuses a table that is not there. Stopped, it ends
// its statement as mysqlPreflight does.
func mysqlSourceRights(ctx context.Context, p serverPlan, like string) ([]missingRight, error) {
	name, err := ParseLike(like)
	if err != nil {
		return nil, err
	}
	db, conn, err := mysqlConnect(ctx, p.source)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: the source: %w", err)
	}
	defer db.Close()
	defer conn.Close()
	defer killOnStop(ctx, db, conn)()
	account, err := mysqlAccount(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: read the user on the source: %w", err)
	}
	cfg, _ := mysql.ParseDSN(p.source)
	side := "the source"
	if p.polite {
		side = "the source, where the copies go too"
	}
	where := fmt.Sprintf("MariaDB/MySQL %s as %s, %s", serverName(cfg.Addr, 0, cfg.DBName), account, side)
	table := mysqlIdent(name.Schema.name) + "." + mysqlIdent(name.Table.name)
	_, err = conn.ExecContext(ctx, "SELECT 1 FROM "+table+" LIMIT 0")
	var my *mysql.MySQLError
	switch {
	case err == nil:
		return nil, nil
	case isMySQLDenied(err):
		return []missingRight{{where, "SELECT on " + table, fmt.Sprintf("GRANT SELECT ON %s TO %s;", table, account)}}, nil
	case errors.As(err, &my) && (my.Number == 1146 || my.Number == 1049): // no such table, no such database
		return nil, fmt.Errorf("%w %s: mysql: no table %s (or no right to see it)", ErrLike, name, table)
	}
	note := ""
	if n := lockWaitNote(err); n != "" {
		note = "; " + n
	}
	return nil, fmt.Errorf("%w %s: mysql: read the table on the source: %w%s", ErrLike, name, err, note)
}

// mysqlAccount returns the session's account as GRANT names it.
func mysqlAccount(ctx context.Context, conn *sql.Conn) (string, error) {
	var account string
	err := conn.QueryRowContext(ctx, "SELECT CONCAT('''', REPLACE(CURRENT_USER(), '@', '''@'''), '''')").Scan(&account)
	return account, err
}

// killOnStop ends the statement conn is running (KILL QUERY, on another
// connection of db) when ctx is done, within CleanupTime: the server
// goes on with a statement whose client went away, and one that waits for
// a lock would stay queued. The returned function stops the watch and
// waits for a kill under way.
func killOnStop(ctx context.Context, db *sql.DB, conn *sql.Conn) func() {
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return func() {}
	}
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		kill, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTime)
		defer cancel()
		if c, err := db.Conn(kill); err == nil {
			c.ExecContext(kill, fmt.Sprintf("KILL QUERY %d", id))
			c.Close()
		}
	})
	return func() {
		if !stop() {
			<-done
		}
	}
}

// mysqlDropAfterStop drops the check's own database after the check was
// stopped, on another connection, within CleanupTime, and returns the
// error of the stopped check: with what is left when it cannot drop it.
func mysqlDropAfterStop(ctx context.Context, db *sql.DB, probe string) error {
	drop, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTime)
	defer cancel()
	c, err := db.Conn(drop)
	if err == nil {
		_, err = c.ExecContext(drop, "DROP DATABASE IF EXISTS "+probe)
		c.Close()
	}
	if err != nil {
		return fmt.Errorf("compare: mysql: check the rights: %w; database %s is left behind (%v); remove it with: DROP DATABASE IF EXISTS %s", ctx.Err(), probe, err, probe)
	}
	return fmt.Errorf("compare: mysql: check the rights: %w", ctx.Err())
}

// isMySQLDenied says whether err is the server's refusal of a right.
func isMySQLDenied(err error) bool {
	var my *mysql.MySQLError
	if !errors.As(err, &my) {
		return false
	}
	switch my.Number {
	case 1044, 1045, 1142, 1143, 1227, 1370: // database, access, table, column, privilege and routine denied
		return true
	}
	return false
}
