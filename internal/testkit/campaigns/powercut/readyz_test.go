package powercut

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/campaigns/powercut/faultfs"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/serve"
	"github.com/idkit/idkit/traceid"
)

// TestDiskFaultFailsReadyz: an ID server on a launch log whose disk fails
// answers 503 for IDs and on /readyz, naming the store unavailable, while
// the fault lasts, and is ready again, issuing above every ID it issued
// before, once the disk heals, with no request needed in between.
func TestDiskFaultFailsReadyz(t *testing.T) {
	for _, fault := range diskFaults {
		t.Run(fault.String(), func(t *testing.T) {
			t.Parallel()
			f := faultfs.Mount(t)
			log, err := launchlog.New(launchlog.Options{Path: filepath.Join(f.Dir(), "launch.db")})
			require.NoError(t, err)
			c := clock.NewFake(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
			s, err := serve.New(context.Background(), serve.Options{
				Store:        log,
				Clock:        c,
				TraceID:      &traceid.Options{Node: 1},
				ProbeTimeout: testwait.Bound,
			})
			require.NoError(t, err)
			defer s.Close()

			status, id := issueHTTP(t, s, c)
			require.Equal(t, http.StatusOK, status, id)
			last := id
			status, checks := readyz(t, s)
			require.Equal(t, http.StatusOK, status, checks)

			f.Inject(fault)
			for i := 0; i < 30 && status == http.StatusOK; i++ {
				c.Advance(time.Second)
				if status, id = issueHTTP(t, s, c); status == http.StatusOK {
					last = id
				}
			}
			require.Equal(t, http.StatusServiceUnavailable, status, "issuing under %v", fault)
			assert.Contains(t, id, "store unavailable")
			status, checks = readyz(t, s)
			assert.Equal(t, http.StatusServiceUnavailable, status, "/readyz under %v", fault)
			assert.Equal(t, "unavailable", checks["store"])

			f.Heal()
			c.Advance(time.Second) // past the probe interval
			status, checks = readyz(t, s)
			require.Equal(t, http.StatusOK, status, "/readyz once the disk healed: %v", checks)
			status, id = issueHTTP(t, s, c)
			require.Equal(t, http.StatusOK, status, id)
			assert.Greater(t, parseID(t, id), parseID(t, last), "the first ID after the fault is above the last before it")
		})
	}
}

// issueHTTP asks s for a TraceId, moving the fake clock c to each wake-up
// while the request waits on it, and returns the status and the body.
func issueHTTP(t *testing.T, s http.Handler, c *clock.Fake) (int, string) {
	t.Helper()
	got := make(chan *http.Response, 1)
	go func() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/traceid", nil))
		got <- w.Result()
	}()
	var resp *http.Response
	testwait.Until(t, func() bool {
		select {
		case resp = <-got:
			return true
		default:
			if wake, ok := c.NextWake(); ok {
				c.Set(wake)
			}
			return false
		}
	}, "the ID request to end")
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// readyz returns the status of s's /readyz and its checks.
func readyz(t *testing.T, s http.Handler) (int, map[string]string) {
	t.Helper()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	var rep struct{ Checks map[string]string }
	require.NoError(t, json.NewDecoder(w.Result().Body).Decode(&rep))
	return w.Code, rep.Checks
}

// parseID reads the ID of a /v1/traceid answer.
func parseID(t *testing.T, body string) int64 {
	t.Helper()
	var rep struct{ IDs []string }
	require.NoError(t, json.Unmarshal([]byte(body), &rep), body)
	require.Len(t, rep.IDs, 1, body)
	n, err := strconv.ParseInt(rep.IDs[0], 10, 64)
	require.NoError(t, err)
	return n
}
