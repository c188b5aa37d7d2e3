// Package leakcheck holds what the leak checks of the tests share. Every
// package whose code or tests start goroutines calls, in its TestMain,
//
//	goleak.VerifyTestMain(m, leakcheck.Options()...)
//
// which runs the tests and fails the binary if goroutines other than the
// ones Options ignores are still running when they end.
//
// It is for tests only; nothing in the library imports it.
package leakcheck

import "go.uber.org/goleak"

// Options returns the goleak options of every leak check: the goroutines
// listed here live past the tests by design, and extra adds a package's
// own.
func Options(extra ...goleak.Option) []goleak.Option {
	return append([]goleak.Option{
		// The coarse ticker of the system clock (and of clock.CoarseOf)
		// runs while anyone reads the coarse time and stops by itself
		// idleTicks refreshes after the last read, about a second later:
		// longer than goleak waits.
		goleak.IgnoreAnyFunction("github.com/idkit/idkit/clock.(*coarseSource).tick"),
	}, extra...)
}
