package innodb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/idkit/idkit/compare/internal/engine"
)

// mysqlDatabaseRights are the rights a run needs on its own databases,
// idkit_compare_<random>.
const mysqlDatabaseRights = "CREATE, DROP, ALTER, INDEX, INSERT, SELECT, LOCK TABLES"

// Preflight checks the rights of a MariaDB/MySQL plan on the server
// the loads go to: the rights on the run's own databases, tried on a
// database of the check's own, which it drops; the global ones are read
// from USER_PRIVILEGES. Stopped (ctx done), it ends the statement it is
// in (KILL QUERY), so that nothing of it stays queued behind a lock.
func Preflight(ctx context.Context, p engine.Target) ([]engine.MissingRight, error) {
	var out []engine.MissingRight
	db, conn, err := Connect(ctx, p.DSN)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: %w", err)
	}
	defer db.Close()
	defer conn.Close()
	defer KillOnStop(ctx, db, conn)()
	cfg, _ := mysql.ParseDSN(p.DSN)
	account, err := Account(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: read the user: %w", err)
	}
	side := "where the copies go"
	if p.Polite {
		side = "the source, where the copies go too"
	}
	where := fmt.Sprintf("MariaDB/MySQL %s as %s, %s", engine.ServerName(cfg.Addr, 0, cfg.DBName), account, side)

	// A MyRocks --like run's database is the MyRocks engine's.
	prefix := "idkit_compare_"
	if p.MyRocks {
		prefix = "idkit_rocks_"
	}
	probe := prefix + engine.RunSuffix()
	steps := []string{
		"CREATE DATABASE " + probe,
		"CREATE TABLE " + probe + ".t (a INT NOT NULL PRIMARY KEY, b INT) ENGINE=InnoDB",
		"INSERT INTO " + probe + ".t VALUES (1, 1)",
		"SELECT count(*) FROM " + probe + ".t",
		"ALTER TABLE " + probe + ".t ADD COLUMN c INT",
		"CREATE INDEX b ON " + probe + ".t (b)",
	}
	if !p.Polite {
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
		return nil, DropAfterStop(ctx, db, probe)
	}
	conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+probe)
	if failed != nil {
		if !IsDenied(failed) {
			return nil, fmt.Errorf("compare: mysql: try the rights on a database of the run's own: %w", failed)
		}
		out = append(out, engine.Missing(where, mysqlDatabaseRights+" on the run's own databases "+prefix+"*",
			fmt.Sprintf("GRANT %s ON `%s%%`.* TO %s;", mysqlDatabaseRights, strings.ReplaceAll(prefix, "_", "\\_"), account)))
	}
	if p.MyRocks {
		lack, _, err := MyRocksRights(ctx, conn)
		if err != nil {
			return nil, fmt.Errorf("compare: mysql: read the user's privileges: %w", err)
		}
		if lack != "" {
			out = append(out, engine.Missing(where, lack+" (SUPER to flush and compact the copies' column family, PROCESS to read the engine's statistics)",
				fmt.Sprintf("GRANT %s ON *.* TO %s;", lack, account)))
		}
		return out, nil
	}
	if _, err := conn.ExecContext(ctx, "SELECT 1 FROM mysql.innodb_index_stats LIMIT 0"); err != nil {
		if !IsDenied(err) {
			return nil, fmt.Errorf("compare: mysql: read mysql.innodb_index_stats: %w", err)
		}
		out = append(out, engine.Missing(where, "SELECT on mysql.innodb_index_stats, the sizes of the copies' indexes",
			fmt.Sprintf("GRANT SELECT ON mysql.innodb_index_stats TO %s;", account)))
	}
	if p.Polite {
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
		out = append(out, engine.Missing(where, strings.Join(lack, " and ")+" (RELOAD to flush the copies, PROCESS to read InnoDB's page figures)",
			fmt.Sprintf("GRANT %s ON *.* TO %s;", strings.Join(lack, ", "), account)))
	}
	return out, nil
}

// SourceRights checks the right to read the --like table on its
// source server, and refuses a table that is not there. Stopped, it ends
// its statement as mysqlPreflight does.
func SourceRights(ctx context.Context, p engine.Target, like string) ([]engine.MissingRight, error) {
	name, err := engine.ParseLike(like)
	if err != nil {
		return nil, err
	}
	db, conn, err := Connect(ctx, p.Source)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: the source: %w", err)
	}
	defer db.Close()
	defer conn.Close()
	defer KillOnStop(ctx, db, conn)()
	account, err := Account(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: read the user on the source: %w", err)
	}
	cfg, _ := mysql.ParseDSN(p.Source)
	side := "the source"
	if p.Polite {
		side = "the source, where the copies go too"
	}
	where := fmt.Sprintf("MariaDB/MySQL %s as %s, %s", engine.ServerName(cfg.Addr, 0, cfg.DBName), account, side)
	table := Ident(name.Schema.Name) + "." + Ident(name.Table.Name)
	_, err = conn.ExecContext(ctx, "SELECT 1 FROM "+table+" LIMIT 0")
	var my *mysql.MySQLError
	switch {
	case err == nil:
		return nil, nil
	case IsDenied(err):
		return []engine.MissingRight{engine.Missing(where, "SELECT on "+table, fmt.Sprintf("GRANT SELECT ON %s TO %s;", table, account))}, nil
	case errors.As(err, &my) && (my.Number == 1146 || my.Number == 1049): // no such table, no such database
		return nil, fmt.Errorf("%w %s: mysql: no table %s (or no right to see it)", engine.ErrLike, name, table)
	}
	note := ""
	if n := engine.LockWaitNote(err); n != "" {
		note = "; " + n
	}
	return nil, fmt.Errorf("%w %s: mysql: read the table on the source: %w%s", engine.ErrLike, name, err, note)
}

// Account returns the session's account as GRANT names it.
func Account(ctx context.Context, conn *sql.Conn) (string, error) {
	var account string
	err := conn.QueryRowContext(ctx, "SELECT CONCAT('''', REPLACE(CURRENT_USER(), '@', '''@'''), '''')").Scan(&account)
	return account, err
}

// KillOnStop ends the statement conn is running (KILL QUERY, on another
// connection of db) when ctx is done, within engine.CleanupTime: the server
// goes on with a statement whose client went away, and one that waits for
// a lock would stay queued. The returned function stops the watch and
// waits for a kill under way.
func KillOnStop(ctx context.Context, db *sql.DB, conn *sql.Conn) func() {
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return func() {}
	}
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		kill, cancel := context.WithTimeout(context.WithoutCancel(ctx), engine.CleanupTime)
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

// DropAfterStop drops the check's own database after the check was
// stopped, on another connection, within engine.CleanupTime, and returns the
// error of the stopped check: with what is left when it cannot drop it.
func DropAfterStop(ctx context.Context, db *sql.DB, probe string) error {
	drop, cancel := context.WithTimeout(context.WithoutCancel(ctx), engine.CleanupTime)
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

// IsDenied says whether err is the server's refusal of a right.
func IsDenied(err error) bool {
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

// Busy reads MariaDB/MySQL's Threads_running on conn, less conn's own.
func Busy(conn *sql.Conn) func(context.Context) (engine.Busy, error) {
	return func(ctx context.Context) (engine.Busy, error) {
		var b engine.Busy
		err := conn.QueryRowContext(ctx, "SELECT VARIABLE_VALUE - 1 FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_RUNNING'").Scan(&b.Running)
		return b, err
	}
}

// MyRocksRights returns the global rights of SUPER and PROCESS that the
// user lacks, as a GRANT lists them, and the user.
func MyRocksRights(ctx context.Context, conn *sql.Conn) (lack, user string, err error) {
	if user, err = Account(ctx, conn); err != nil {
		return "", "", err
	}
	rows, err := conn.QueryContext(ctx, "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ?", user)
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	has := map[string]bool{}
	for rows.Next() {
		var priv string
		if err := rows.Scan(&priv); err != nil {
			return "", "", err
		}
		has[priv] = true
	}
	var missing []string
	for _, priv := range []string{"SUPER", "PROCESS"} {
		if !has[priv] {
			missing = append(missing, priv)
		}
	}
	return strings.Join(missing, ", "), user, rows.Err()
}
