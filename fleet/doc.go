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
// never receive the same value. It serves store.Generators, store.HighWater
// and segment.BlockStore (blocks of dense IDs per tag).
//
// # Node claims
//
// [ClaimNode] takes the lowest free node number of a range under an etcd
// lease (TTL 10s by default), renews it in the background and releases it
// on [Claim.Close]; a holder that dies frees its node after the TTL. A
// claim is fenced: the holder treats it as lost at a local deadline, the
// send time of the last keep-alive etcd acknowledged plus the TTL minus a
// margin (TTL/25 by default), even when it is cut off from etcd and hears
// nothing.
//
// A process that holds many nodes takes them in one [Session]: one lease
// and one clock record for all its claims, so that etcd's load grows with
// the fleet's processes rather than its nodes. The claims of a session
// share its deadline; Claim.Close deletes its node's key, and the
// session's Close revokes the lease and frees them all:
//
//	s, _ := fleet.NewSession(ctx, fleet.SessionOptions{Client: cli})
//	defer s.Close()
//	claim, err := fleet.ClaimNode(ctx, fleet.ClaimOptions{Session: s, Space: "traceid", Max: traceid.MaxNode})
//
// A claim keeps its node's high-water marks (the keys of a [Log] with the
// same prefix) and fences every write of them in the same transaction.
// traceid and snowflake generators take a claim in their Options instead
// of a node and a store:
//
//	cli, _ := clientv3.New(clientv3.Config{Endpoints: endpoints})
//	claim, err := fleet.ClaimNode(ctx, fleet.ClaimOptions{Client: cli, Space: "traceid", Max: traceid.MaxNode})
//	defer claim.Close()
//	g, err := traceid.New(ctx, traceid.Options{Claim: claim})
//
// They check the claim where they already read the precise clock (a new
// second or tick, after a store call or a wait, every ID while the clock
// is behind), never per ID, so a claimed node costs what a fixed one does;
// once the claim is lost they fail with ErrNodeLost and issue nothing more.
//
// # Why a node's IDs are never issued twice
//
// A holder H issues in a unit u (a second, a tick) only below a mark it
// wrote itself while etcd held the node for H: each mark write compares
// the node key with H's claim record (under H's lease, with a token of
// H's alone, so not another claim of H's session) in the same
// transaction, and a mark that anyone else wrote never raises H's limit
// (TestStalledHolderHandsOver).
// H enters u only if, checked after its last blocking call, its claim
// holds until u ends plus clock.CoarseLag, so it hands out nothing after
// its deadline (TestClaimCheckedAfterTheStoreWrite). For a keep-alive sent
// at s, that deadline is s + TTL - Margin on H's clock, before etcd can
// expire the lease (s + TTL at the earliest) for a clock up to 2% slow
// (Margin >= TTL/50; TestCampaign runs clocks 2% slow and fast). A
// successor claims only after the lease expired or H released the node
// (its key deleted: no write of H's passes the comparison after that),
// then reads the mark: all
// of H's writes committed before, so it starts above every unit H could
// issue in, whatever its clock reads; a clock behind only waits for the
// mark, and MaxSkew bounds that wait. Assumed: clock rates within 2%,
// and, for no ID after the deadline (uniqueness does not need it), a
// coarse clock that lags by less than clock.CoarseLag. Not assumed: any
// bound on pauses, message delays or clock offsets (TestCampaign: paused
// and cut links, crashed members, offsets within ±MaxSkew).
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
// Every holder records its wall clock under its lease (holders/, one
// record per session) each Interval. A new
// claimer compares its clock with the median of the live holders' records
// and refuses to start, with [ErrClockSkew] and the offset, when it is
// further off than MaxSkew (5s by default). The record of a holder that
// died or was cut off ages until its lease expires, so the check measures
// against live holders only: when a quick look at the records finds this
// clock off, it watches for up to an Interval for the records that live
// holders rewrite, and refuses only on those (TestClockCheckReadsLiveHolders,
// TestKilledHolderFreesNodeAfterTTL).
//
// # Errors
//
// Every etcd request has a timeout, and is tried again on another member,
// within it, while no member can serve it (no leader, a leader change, a
// stopped member, a lost connection); one that gets no answer wraps
// [ErrUnavailable]. The other errors are [ErrNoFreeNode], [ErrNodeLost],
// [ErrClockSkew], [ErrInvalid] and [ErrCorrupt], and launchlog's for the
// launch log.
//
// Pods of a fixed-size Kubernetes StatefulSet can take their node from the
// pod's ordinal instead, without etcd: see package ordinal for when that is
// enough.
package fleet
