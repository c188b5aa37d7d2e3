package otelid

import "errors"

// ErrNil reports a nil *traceid.Generator or slog.Handler given to a
// constructor.
var ErrNil = errors.New("otelid: nil argument")
