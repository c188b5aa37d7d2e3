package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"

	"github.com/go-sql-driver/mysql"

	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/mysqlstore"
	"github.com/idkit/idkit/segment/pgstore"
	"github.com/idkit/idkit/segment/redisstore"
)

// envSegmentStore is the environment variable that gives --segment-store,
// so that a password in the URL stays off the command line.
const envSegmentStore = "IDKIT_SEGMENT_STORE"

// segmentStoreHelp is the --segment-store part of the usage texts.
const segmentStoreHelp = `	--segment-store URL  where the --segment-tag blocks are reserved, instead
	                    of the launch log: postgres://USER@HOST:PORT/DB (a
	                    table idkit_segment; ?search_path=SCHEMA to choose
	                    its schema), mysql://USER:PASS@HOST:PORT/DB or
	                    mysql://DSN in go-sql-driver's form, or
	                    redis://[:PASS@]HOST:PORT[/DB] (?prefix=P for the
	                    keys; ?allow_volatile=true accepts a server without
	                    appendfsync always, which can repeat IDs after a
	                    crash). Default $` + envSegmentStore + `; prefer it, or a
	                    URL without a password, since ps shows flags.
`

// openSegmentStore opens the block store at rawURL. Its errors never
// repeat the URL, which may hold a password.
func openSegmentStore(ctx context.Context, rawURL string) (segment.BlockStore, func() error, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, nil, cli.Usagef("--segment-store: want a postgres://, mysql:// or redis:// URL (not repeated here: it may hold a password)")
	}
	switch scheme {
	case "postgres", "postgresql":
		s, err := pgstore.Open(ctx, rawURL, pgstore.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("--segment-store postgres: %w", redact(err, rawURL))
		}
		return s, s.Close, nil
	case "mysql":
		cfg, err := mysqlConfig(rest)
		if err != nil {
			return nil, nil, fmt.Errorf("--segment-store mysql: %w", err)
		}
		s, err := mysqlstore.Open(ctx, cfg.FormatDSN(), mysqlstore.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("--segment-store mysql: %w", redact(err, rawURL))
		}
		return s, s.Close, nil
	case "redis", "rediss":
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, nil, errors.New("--segment-store redis: the URL does not parse (not repeated here: it may hold a password)")
		}
		q := u.Query()
		opts := redisstore.Options{Prefix: q.Get("prefix"), AllowVolatile: q.Get("allow_volatile") == "true"}
		q.Del("prefix")
		q.Del("allow_volatile")
		u.RawQuery = q.Encode()
		s, err := redisstore.Open(ctx, u.String(), opts)
		if err != nil {
			return nil, nil, fmt.Errorf("--segment-store redis: %w", redact(err, rawURL))
		}
		return s, s.Close, nil
	}
	return nil, nil, cli.Usagef("--segment-store: unknown scheme %q, want postgres, mysql or redis", scheme)
}

// mysqlConfig reads the part of a mysql:// URL after the scheme: either
// go-sql-driver's DSN (user:pass@tcp(host:port)/db) or URL form
// (user:pass@host:port/db?params).
func mysqlConfig(rest string) (*mysql.Config, error) {
	const hidden = "the address does not parse (not repeated here: it may hold a password)"
	if strings.Contains(rest, "@tcp(") || strings.Contains(rest, "@unix(") || strings.HasPrefix(rest, "tcp(") {
		cfg, err := mysql.ParseDSN(rest)
		if err != nil {
			return nil, errors.New(hidden)
		}
		return cfg, nil
	}
	u, err := url.Parse("mysql://" + rest)
	if err != nil || u.Host == "" || strings.Trim(u.Path, "/") == "" {
		return nil, fmt.Errorf("%s; want mysql://USER:PASS@HOST:PORT/DB", hidden)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr = "tcp", u.Host
	if u.Port() == "" {
		cfg.Addr += ":3306"
	}
	cfg.DBName = strings.Trim(u.Path, "/")
	for k, v := range u.Query() {
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params[k] = v[len(v)-1]
	}
	return cfg, nil
}

// redact returns err with every occurrence of the URL, and of its password,
// replaced: a driver's error may quote what it was given.
func redact(err error, rawURL string) error {
	msg := err.Error()
	secrets := []string{rawURL}
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			secrets = append(secrets, pw)
		}
	}
	changed := false
	for _, s := range secrets {
		if strings.Contains(msg, s) {
			msg, changed = strings.ReplaceAll(msg, s, "[redacted]"), true
		}
	}
	if !changed {
		return err
	}
	return &redactedError{msg, err}
}

// redactedError is an error whose message hides a secret while errors.Is
// and errors.As still see the error it wraps.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
