// Package crosscheck holds the tests that look at idkit from outside: the
// peer ID libraries' benchmarks beside idkit's, ObjectIDs against the
// MongoDB driver, the error kind of every module's sentinels, and the
// module graph that a program importing one scheme gets. It has no code
// of its own. It is a module of its own, so that what these tests need
// (the peer libraries, the MongoDB driver, every idkit module) never
// enters the core module's requirements.
package crosscheck
