// Package testkit holds idkit's test harnesses, apart from the code that
// ships, so that the import graph only points down: the packages below it
// import what ships, and only tests import them. They are sorted by kind,
// each kind importing only its own and the kinds before it.
//
// Directly under testkit are the unit-test helpers, small packages that
// tests import to do their job:
//
//   - testwait, testenv, leakcheck, cores: bounded waits, real servers or a
//     failure under CI, goroutine leak checks, benchmarks on every core;
//   - stepclock, memstore, claimtest: a clock whose wall time steps, an
//     in-memory high-water store, and a node claim on a fake clock for the
//     generators' tests;
//   - tcpproxy, testcert: a TCP proxy that cuts a client off its server,
//     and the certificates of TLS tests (etcd clusters for tests are
//     fleet/fleettest's, in fleet's module, published and importing
//     nothing from here).
//
// suites holds the conformance suites, the checks run unchanged against
// every implementation of a contract (storetest, segmenttest, contract) or
// against outside references (crosscheck). campaigns holds the long
// campaigns and load generators: crash, power-cut and disk-fault
// campaigns, the deployed fleet, the scale run, loadgen. A helper imports
// neither; a suite imports no campaign.
//
// The repository's release tool is not a harness: it is internal/release.
// layout_test.go at the module's root checks that nothing that ships
// imports a package under testkit, and that the kinds import downwards.
package testkit
