package tlslog

import (
	"fmt"
	"log"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idkit/idkit/clock"
)

// handshakeLogEvery is how often, at most, failed TLS handshakes are
// logged: a scanner or a client with a wrong certificate fails one a
// connection.
const handshakeLogEvery = time.Minute

// handshakeLog is where the http.Servers write their own errors. A failed
// TLS handshake is counted in idkit_tls_handshake_errors_total and logged
// at most once a handshakeLogEvery, as one line with the number failed
// since the last one and the last failure; other errors (a panic in a
// handler) are logged each, at level Warn.
type handshakeLog struct {
	logger *slog.Logger // nil means the standard logger
	clk    clock.Clock
	failed prometheus.Counter

	mu     sync.Mutex
	logged time.Time // when a failed handshake was last logged
	since  int       // failed handshakes not logged yet
}

const handshakePrefix = "http: TLS handshake error from "

func (h *handshakeLog) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	last, isHandshake := strings.CutPrefix(line, handshakePrefix)
	if !isHandshake {
		h.warn(line)
		return len(p), nil
	}
	h.failed.Inc()
	h.mu.Lock()
	h.since++
	now := h.clk.Now()
	if !h.logged.IsZero() && now.Sub(h.logged) < handshakeLogEvery && !now.Before(h.logged) {
		h.mu.Unlock()
		return len(p), nil
	}
	n := h.since
	h.since, h.logged = 0, now
	h.mu.Unlock()
	h.warn("serve: TLS handshakes failed", "count", n, "last", last, "logged_at_most_every", handshakeLogEvery)
	return len(p), nil
}

func (h *handshakeLog) warn(msg string, args ...any) {
	if h.logger != nil {
		h.logger.Warn(msg, args...)
		return
	}
	for i := 0; i+1 < len(args); i += 2 {
		msg += fmt.Sprintf(" %v=%v", args[i], args[i+1])
	}
	log.Print(msg)
}

// newErrorLog returns the log.Logger of the server's http.Servers.
func NewErrorLog(l *slog.Logger, clk clock.Clock, failed prometheus.Counter) *log.Logger {
	return log.New(&handshakeLog{logger: l, clk: clk, failed: failed}, "", 0)
}
