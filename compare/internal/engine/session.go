package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
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

// LockWaitNote says, of an error that ended a wait for a lock, that
// another session holds the lock and how long the run waited, or returns
// "" for any other error.
func LockWaitNote(err error) string {
	var pgErr *pgconn.PgError
	var my *mysql.MySQLError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "55P03", // lock_not_available
		errors.As(err, &my) && (my.Number == 1205 || my.Number == 1213): // lock wait timeout, deadlock
		return fmt.Sprintf("another session holds a lock this statement needs, and the run waits at most %v for one (it never queues behind a lock for long); try again when that session is done", LockTimeout)
	}
	return ""
}

// CleanupTime bounds the time a run takes, once stopped, to end its
// server statements and drop what it created: a user who pressed Ctrl-C
// waits no longer. What it could not drop in that time, it names.
const CleanupTime = 4 * time.Second
