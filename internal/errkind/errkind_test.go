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
