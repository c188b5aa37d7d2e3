package errkind_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

func TestNew(t *testing.T) {
	t.Parallel()
	errStore := errkind.New(idkit.ErrUnavailable, "pkg: store failed")
	err := fmt.Errorf("%w: read mark %q: %w", errStore, "k", errors.New("timeout"))
	assert.Equal(t, "pkg: store failed: read mark \"k\": timeout", err.Error(), "the message is the package's own")
	assert.ErrorIs(t, err, errStore)
	assert.ErrorIs(t, err, idkit.ErrUnavailable)
	assert.NotErrorIs(t, err, idkit.ErrInvalid)
}

func TestMark(t *testing.T) {
	t.Parallel()
	errDown := errkind.New(idkit.ErrUnavailable, "pkg: server unavailable")
	cause := errors.New("connection refused")
	err := errkind.Mark(errDown, fmt.Errorf("pkg: connect: %w", cause))
	assert.Equal(t, "pkg: connect: connection refused", err.Error(), "the message is unchanged")
	assert.ErrorIs(t, err, errDown)
	assert.ErrorIs(t, err, idkit.ErrUnavailable)
	assert.ErrorIs(t, err, cause)
	assert.NotErrorIs(t, err, idkit.ErrRefused)
}
