package engine

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

// ErrRights reports rights a run needs on a server and lacks. The run
// checks them all before it does any work, and names every missing one
// with the statement that grants it.
var ErrRights = errkind.New(idkit.ErrRefused, "compare: missing rights")

// MissingRight is one right a run lacks: on which server and side, what,
// and the statement that grants it.
type MissingRight struct {
	Where, What, Grant string
}

// RightsError is the preflight's message, of kind ErrRights.
type RightsError struct{ Msg string }

func (e *RightsError) Error() string { return e.Msg }

func (e *RightsError) Is(target error) bool { return target == ErrRights }

// Missing is the right what, which the run lacks on the server where, and
// the statement that grants it.
func Missing(where, what, grant string) MissingRight {
	return MissingRight{Where: where, What: what, Grant: grant}
}
