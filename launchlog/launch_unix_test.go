//go:build unix

package launchlog

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	idstore "github.com/idkit/idkit/store"
)

// lockProbe is a fake clock that, each time it is read, records whether
// the file at path was locked by another open file at that moment.
type lockProbe struct {
	*clock.Fake
	t      *testing.T
	path   string
	locked []bool
}

func (p *lockProbe) Now() time.Time {
	locked := false
	if f, err := os.Open(p.path); err == nil {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		locked = errors.Is(err, syscall.EWOULDBLOCK)
		if !locked {
			assert.NoError(p.t, err, "probe the lock")
		}
		_ = f.Close()
	}
	p.locked = append(p.locked, locked)
	return p.Fake.Now()
}

// TestBeginReadsClockUnderLock checks that Begin reads the clock inside
// its transaction, with the file locked, so that no other process can
// record a launch between the reading and the commit.
func TestBeginReadsClockUnderLock(t *testing.T) {
	t.Parallel()
	probe := &lockProbe{Fake: clock.NewFake(epoch), t: t}
	l := newLogOn(t, probe)
	probe.path = l.path
	for range 3 {
		_, err := l.Begin(context.Background(), idstore.Info{})
		require.NoError(t, err)
	}
	assert.Equal(t, []bool{true, true, true}, probe.locked, "the file was locked each time Begin read the clock")
}
