// Package clitest holds the helpers of the tests of the idkit commands
// (internal/cli's and idkit-full's): running a command line in process
// (Run, RunIn, RunOn) or as a real process (Exec, Command), and the
// checks those tests share. It is imported only by _test.go files.
//
// A package whose tests use it calls Main from its TestMain with the
// console that runs idkit: the helpers run command lines on it, and the
// processes that Exec and Command start (the test binary again, with
// OffsetEnv) run as idkit on it.
//
// It imports nothing under internal/testkit, which only test files may
// import (see layout_test.go at the repository's root): bound stands for
// testwait.Bound, and Main takes the leak check's options.
package clitest
