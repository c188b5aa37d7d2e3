package compare

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// AppName is what every session of a run calls itself on a server:
// PostgreSQL's application_name and MariaDB/MySQL's program_name
// connection attribute, so that a DBA who sees it in pg_stat_activity
// or performance_schema knows whose it is. A DSN that names one keeps
// its own.
const AppName = "idkit"

// LockTimeout bounds every wait of a run's sessions for a lock, on every
// server (PostgreSQL's lock_timeout, MariaDB/MySQL's lock_wait_timeout and
// innodb_lock_wait_timeout): a run never queues behind a lock for long,
// nor holds up, while it waits, the sessions queued behind it. A DSN that
// sets one keeps its own.
const LockTimeout = 5 * time.Second

// pgConnect connects to a PostgreSQL DSN as every session of a run does:
// named AppName, its lock waits bounded by LockTimeout.
func pgConnect(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgConfig(dsn)
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// pgConfig parses a PostgreSQL DSN and sets the session settings of
// pgConnect where the DSN does not.
func pgConfig(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	for k, v := range map[string]string{
		"application_name": AppName,
		"lock_timeout":     strconv.FormatInt(LockTimeout.Milliseconds(), 10),
	} {
		if cfg.RuntimeParams[k] == "" {
			cfg.RuntimeParams[k] = v
		}
	}
	return cfg, nil
}

// mysqlConnect opens a pool on dsn, every session of it named AppName and
// its lock waits bounded by LockTimeout, and one connection of it.
func mysqlConnect(ctx context.Context, dsn string) (*sql.DB, *sql.Conn, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("the DSN does not parse (it may hold a password, so it is not repeated here): %w", err)
	}
	mysqlSession(cfg)
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	return db, conn, nil
}

// mysqlSession sets the session settings of mysqlConnect in cfg where it
// does not set them.
func mysqlSession(cfg *mysql.Config) {
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	seconds := strconv.FormatInt(int64(LockTimeout/time.Second), 10)
	for _, k := range []string{"lock_wait_timeout", "innodb_lock_wait_timeout"} {
		if cfg.Params[k] == "" {
			cfg.Params[k] = seconds
		}
	}
	if cfg.ConnectionAttributes == "" {
		cfg.ConnectionAttributes = "program_name:" + AppName
	}
}

// lockWaitNote says, of an error that ended a wait for a lock, that
// another session holds the lock and how long the run waited, or returns
// "" for any other error.
func lockWaitNote(err error) string {
	var pgErr *pgconn.PgError
	var my *mysql.MySQLError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "55P03", // lock_not_available
		errors.As(err, &my) && (my.Number == 1205 || my.Number == 1213): // lock wait timeout, deadlock
		return fmt.Sprintf("another session holds a lock this statement needs, and the run waits at most %v for one (it never queues behind a lock for long); try again when that session is done", LockTimeout)
	}
	return ""
}
