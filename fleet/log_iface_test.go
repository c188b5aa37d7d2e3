package fleet_test

import (
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// Log serves the ID packages without an adapter, as launchlog.Log does.
var (
	_ decimalid.GeneratorSource = (*fleet.Log)(nil)
	_ traceid.HighWaterStore    = (*fleet.Log)(nil)
	_ snowflake.HighWaterStore  = (*fleet.Log)(nil)
)
