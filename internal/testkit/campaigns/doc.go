// Package campaigns holds idkit's long campaigns and load generators:
// runs that put the code under faults or load for a count or a duration,
// short under -short.
//
//   - faults, crashkit: SIGKILL-and-restart campaigns and the soak, and
//     what the crash campaigns share;
//   - powercut: power cuts and failing disks, on a faulty file system
//     (faultfs), a module of its own;
//   - deploy: the fleet as deployed (etcd, idkit-full serve, HAProxy in
//     network namespaces) under a fault schedule, and the etcd server idkit
//     pins, a module of its own;
//   - scale: what one etcd cluster carries for a fleet of node holders, a
//     module of its own;
//   - loadgen: the HTTP load generator of serve's benchmarks.
//
// A campaign may import what ships, the unit-test helpers under
// internal/testkit and the suites; nothing that ships imports it outside
// its tests, and neither does a helper or a suite.
package campaigns
