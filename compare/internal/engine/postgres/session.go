package postgres

import (
	"context"
	"strconv"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/jackc/pgx/v5"
)

// Connect connects to a PostgreSQL DSN as every session of a run does:
// named AppName, its lock waits bounded by LockTimeout.
func Connect(ctx context.Context, dsn string) (*pgx.Conn, error) {
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
		"application_name": engine.AppName,
		"lock_timeout":     strconv.FormatInt(engine.LockTimeout.Milliseconds(), 10),
	} {
		if cfg.RuntimeParams[k] == "" {
			cfg.RuntimeParams[k] = v
		}
	}
	return cfg, nil
}
