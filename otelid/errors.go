package otelid

import "errors"

// ErrNoGenerator reports a nil *traceid.Generator or slog.Handler given to
// a constructor.
var ErrNoGenerator = errors.New("otelid: no generator")
