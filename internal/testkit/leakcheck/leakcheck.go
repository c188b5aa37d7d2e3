// Package leakcheck holds what the leak checks of the tests share. Every
// package whose code or tests start goroutines calls, in its TestMain,
//
//	goleak.VerifyTestMain(m, leakcheck.Options()...)
//
// which runs the tests and fails the binary if goroutines other than the
// ones Options ignores are still running when they end. A package whose
// tests run embedded etcd members passes leakcheck.Etcd(m) instead of m.
//
// It is for tests only; nothing in the library imports it.
package leakcheck

import (
	"time"

	"go.uber.org/goleak"
)

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
		// etcd's own: a peer's version request that reached a member as it
		// stopped can wait forever on the closed backend's lock, inside
		// etcd's peer HTTP server (seen once in four runs of fleet's tests).
		goleak.IgnoreAnyFunction("go.etcd.io/etcd/server/v3/etcdserver/api/etcdhttp.newPeerHandler.versionHandler.func1"),
	}, extra...)
}

// etcdLinger bounds how long the peer connections of a stopped embedded
// etcd member outlive it: etcd's raft read timeout
// (rafthttp.ConnReadTimeout, 5s) and a second to spare.
const etcdLinger = 6 * time.Second

// Etcd returns m for goleak.VerifyTestMain in a package whose tests run
// embedded etcd members (etcdtest.Start). When the tests pass, its Run
// waits up to etcdLinger for the goroutines that the leak check would
// report to end, then returns and lets goleak report what is left.
//
// A member stops its peer server with http.Server.Shutdown, which gives
// up when its context ends on a connection whose background read waits
// for the raft read timeout; that connection's goroutines, and those of
// its client end, idle in another member's keep-alive pool, end only when
// the read times out. Waiting for them, instead of ignoring net/http's
// connection goroutines, keeps the check able to see a connection that a
// test leaves open.
func Etcd(m goleak.TestingM) goleak.TestingM { return etcdMain{m} }

type etcdMain struct{ m goleak.TestingM }

func (e etcdMain) Run() int {
	code := e.m.Run()
	if code != 0 {
		return code
	}
	deadline := time.Now().Add(etcdLinger)
	for goleak.Find(Options()...) != nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	return code
}
