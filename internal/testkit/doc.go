// Package testkit holds idkit's test harnesses, apart from the code that
// ships, so that the import graph only points down: the packages below it
// import what ships, and only tests import them.
//
//   - testwait, testenv, leakcheck, cores: bounded waits, real servers or a
//     failure under CI, goroutine leak checks, benchmarks on every core;
//   - memstore, storetest, segmenttest, claimtest: an in-memory store, the
//     stores' conformance suites, multi-process and kill loops for block
//     stores, and node claims for generator tests;
//   - tcpproxy, testcert: a TCP proxy that cuts a client off its server,
//     and the certificates of TLS tests (etcd clusters for tests are
//     fleet/fleettest's, in fleet's module, published and importing
//     nothing from here);
//   - faults, contract, peerbench: the fault campaigns, the rules every
//     scheme's edges follow, and the peer libraries' benchmarks, as tests;
//   - loadgen: the HTTP load generator of serve's benchmarks.
//
// layout_test.go at the module's root checks that nothing that ships
// imports a package under testkit.
package testkit
