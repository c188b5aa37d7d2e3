// Package fleet keeps idkit's guarantees across many hosts, on etcd: a
// launch log that every host shares, and node numbers claimed under
// leases.
//
// # Launch log
//
// [Log] is the twin of launchlog.Log on etcd, with the same methods,
// limits and errors: launches, decimalid generator ids per launch and
// high-water marks that only move forward. Every write is one etcd
// transaction guarded by a comparison, so callers on any number of hosts
// never receive the same value. It serves decimalid.GeneratorSource, the
// HighWaterStore of traceid and snowflake, and segment.BlockStore (blocks
// of dense IDs per tag).
//
// # Node claims
//
// [ClaimNode] takes the lowest free node number of a range under an etcd
// lease (TTL 10s by default), renews it in the background and releases it
// on [Claim.Close]; a holder that dies frees its node after the TTL. A
// claim is fenced: the holder treats it as lost at a local deadline, the
// send time of the last keep-alive etcd acknowledged plus the TTL minus a
// margin. etcd restarts a lease's countdown no earlier than it receives the
// keep-alive, so the deadline falls strictly before etcd can expire the
// lease and grant the node to another claimer, even when the holder is cut
// off from etcd and hears nothing. The margin (default [InFlight] + TTL/50)
// covers the second a generator may still be issuing in after its last
// check, and a clock running up to 2% fast.
//
// traceid and snowflake generators take a claim in their Options instead of
// a fixed node. They check it where they already read the precise clock (a
// new second or tick, a wait, a lease renewal), never per ID, so a claimed
// node costs what a fixed one does, and once the claim is lost they fail
// with ErrNodeLost and issue nothing more. Keep each node's high-water mark
// in the same etcd (Options.Store = a [Log]): a new holder of node N then
// starts after everything an earlier holder may have issued.
//
//	cli, _ := clientv3.New(clientv3.Config{Endpoints: endpoints})
//	log, _ := fleet.NewLog(fleet.LogOptions{Client: cli})
//	claim, err := fleet.ClaimNode(ctx, fleet.ClaimOptions{Client: cli, Space: "traceid", Max: traceid.MaxNode})
//	defer claim.Close()
//	g, err := traceid.New(traceid.Options{Claim: claim, Store: log})
//
// # Datacenters
//
// A claim takes node numbers from Min to Max, so each datacenter can claim
// from a range of its own. The system-design seed plans 1,024 servers in 3
// datacenters on Twitter's layout and splits the 10 node bits into a 5-bit
// datacenter and a 5-bit worker; that split holds only 32 servers per
// datacenter, 96 in all. Claiming the 10 bits as one number instead, with
// a sub-range per datacenter, holds all 1,024:
//
//	datacenter 0: Min 0,   Max 341
//	datacenter 1: Min 342, Max 682
//	datacenter 2: Min 683, Max 1023
//
// Where a layout's leading field does name the datacenter, fix it and claim
// the rest: snowflake.Layout.NodeRange(map[string]int64{"datacenter": 2})
// gives the numbers to claim from, and "idkit new snowflake --etcd E
// --datacenter 2" does the same.
//
// # Clock check
//
// Every holder records its wall clock under its claim each Interval. A new
// claimer compares its clock with the median of the live holders' records
// and refuses to start, with [ErrClockSkew] and the offset, when it is
// further off than MaxSkew (5s by default). A record is up to an Interval
// old; the check counts half an Interval as its age, so the estimate is
// good to half an Interval (1.5s by default).
//
// # Errors
//
// Every etcd request has a timeout; an unanswered one wraps
// [ErrUnavailable]. The other errors are [ErrNoFreeNode], [ErrNodeLost],
// [ErrClockSkew], [ErrInvalid] and [ErrCorrupt], and launchlog's for the
// launch log.
//
// Pods of a fixed-size Kubernetes StatefulSet can take their node from the
// pod's ordinal instead, without etcd: see package ordinal for when that is
// enough.
package fleet
