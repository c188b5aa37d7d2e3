package otelid

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

// ErrNil reports a nil *traceid.Generator or slog.Handler given to a
// constructor.
var ErrNil = errkind.New(idkit.ErrInvalid, "otelid: nil argument")
