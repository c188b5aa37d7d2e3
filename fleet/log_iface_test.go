package fleet_test

import (
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/store"
)

// Log serves the ID packages without an adapter, as launchlog.Log does.
var (
	_ store.Generators = (*fleet.Log)(nil)
	_ store.HighWater  = (*fleet.Log)(nil)
)
