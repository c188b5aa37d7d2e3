package report

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrOptions reports an option outside its allowed range.
	ErrOptions = errkind.New(idkit.ErrInvalid, "compare: invalid options")
	// ErrEmptyReport reports a report with no schemes to show.
	ErrEmptyReport = errkind.New(idkit.ErrInvalid, "compare: report has no schemes")
)

// MaxWriters is the most writers a run loads, and the largest K of a
// need "writers=K": 1,024, the smallest node field measured (10 bits).
const MaxWriters = 1024
