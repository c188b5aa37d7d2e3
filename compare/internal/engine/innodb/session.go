package innodb

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/idkit/idkit/compare/internal/engine"
)

// Connect opens a pool on dsn, every session of it named AppName and
// its lock waits bounded by LockTimeout, and one connection of it.
func Connect(ctx context.Context, dsn string) (*sql.DB, *sql.Conn, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("the DSN does not parse (it may hold a password, so it is not repeated here): %w", err)
	}
	SetSession(cfg)
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

// SetSession sets the session settings of mysqlConnect in cfg where it
// does not set them.
func SetSession(cfg *mysql.Config) {
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	seconds := strconv.FormatInt(int64(engine.LockTimeout/time.Second), 10)
	for _, k := range []string{"lock_wait_timeout", "innodb_lock_wait_timeout"} {
		if cfg.Params[k] == "" {
			cfg.Params[k] = seconds
		}
	}
	if cfg.ConnectionAttributes == "" {
		cfg.ConnectionAttributes = "program_name:" + engine.AppName
	}
}
