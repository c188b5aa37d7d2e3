package launchlog_test

import (
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/store"
)

// Log serves the ID packages without an adapter.
var (
	_ store.Generators = (*launchlog.Log)(nil)
	_ store.Holder     = (*launchlog.Log)(nil)
)
