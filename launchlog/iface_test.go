package launchlog_test

import (
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/traceid"
)

// Log serves the ID packages without an adapter.
var (
	_ decimalid.GeneratorSource = (*launchlog.Log)(nil)
	_ traceid.HighWaterStore    = (*launchlog.Log)(nil)
)
