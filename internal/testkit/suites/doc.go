// Package suites holds idkit's conformance suites: checks written once and
// run unchanged against every implementation of a contract, or against an
// outside reference.
//
//   - storetest: the launch log and block store contracts, run against
//     every backend;
//   - segmenttest: segment allocators in several processes, killed and
//     restarted, against every block store, and the stores' benchmark;
//   - contract: the rules that every ID scheme's edges follow, as tests;
//   - crosscheck: a module of its own, idkit against outside references
//     (the MongoDB driver, Instagram's PL/pgSQL function, the peer ID
//     libraries' benchmarks), the error kinds of every module, the docs'
//     snippets, and the module graph of a program that imports one module.
//
// A suite may import what ships and the unit-test helpers under
// internal/testkit; it imports nothing under internal/testkit/campaigns,
// and nothing that ships imports it outside its tests.
package suites
