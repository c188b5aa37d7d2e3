// Package store declares, once, what idkit's generators need from a
// store: high-water marks (traceid, snowflake, flake128), one live holder
// of a mark at a time whose writes are fenced (Holder, Held), a node held
// for a time (NodeClaim), and generator ids (decimalid). The schemes take
// these types as they are, so that one store serves them all.
// launchlog.Log (a bbolt file) and fleet.Log (etcd) implement HighWater
// and Generators; launchlog.Log is a Holder; fleet.Claim is a NodeClaim.
// segment.BlockStore is the third such interface, declared with its Block
// in package segment.
//
// Every call takes a context: a store returns the context's error,
// wrapped, when it ends before the write is known to be durable. A write
// whose outcome is unknown may have been applied; callers treat it as
// applied where that is the safe side (a mark moved, a generator id
// used).
package store

import (
	"context"
	"time"
)

// HighWater persists, per key, a time that only ever moves forward. A
// generator leases units of time ahead in it, and a new generator for the
// same key starts after the mark, so that no run reuses a unit an earlier
// run may have issued IDs in, even if the clock was stepped back while the
// process was down.
type HighWater interface {
	// HighWater returns the mark stored for key, or the zero time if there
	// is none.
	HighWater(ctx context.Context, key string) (time.Time, error)
	// AdvanceHighWater moves the mark for key to t unless it is already
	// later, durably, and returns the mark now stored.
	AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error)
}

// Holder is a HighWater store that lets one live holder at a time hold a
// key, so that two processes configured with the same node cannot both
// issue under it. launchlog.Log is one: every process of a host that
// reaches its file, by any name, sees the others' holds through OS locks
// that die with their process.
//
// A generator whose store is a Holder holds its mark's key from its start
// until Close, and keeps its marks through the Held, whose writes the
// store fences; a Reserve call holds the key for the call. A second holder
// of the key fails at once. A wrapper of a Holder (one that counts its
// calls, say) passes Hold on, or the generators on it hold nothing, and
// wraps the Held too: a generator reads and writes its marks through the
// Held, not the store.
type Holder interface {
	HighWater
	// Hold takes key for the caller until the Held is closed, or fails
	// with an error of kind idkit.ErrHeld that names the live holder. ctx
	// bounds a wait for the key, where the store waits at all.
	Hold(ctx context.Context, key string) (Held, error)
}

// Held is a key held in a Holder: its marks, and those of the keys below
// it (key + "/..."), read and written through the hold. Every write
// through it is fenced: a hold carries a token that each new hold of the
// key supersedes, and a write whose token is no longer the key's fails
// with an error of kind idkit.ErrNodeLost. So a holder that got past the
// store's lock, or whose lock was lost, stops at the marks it wrote
// itself, and the new holder, which reads the marks after it took the
// key, starts above them.
type Held interface {
	HighWater
	// Close releases the key. The hold's writes fail after it.
	Close() error
}

// Revocable is a node that can be lost under its holder: a Held that
// tells, without a write of its own, once it is (launchlog's holds do,
// once their file is removed or replaced under them), and every Claim. A
// generator checks it as it checks a NodeClaim: Check before it enters a
// new unit of time, and Done to stop before its next ID once it is lost.
type Revocable interface {
	// Check returns nil while the node is held until t as far as is known
	// now, and an error of kind idkit.ErrNodeLost once it is lost; a lost
	// node stays lost.
	Check(t time.Time) error
	// Done is closed once the node is known lost.
	Done() <-chan struct{}
}

// Mark is one high-water mark of an AdvanceHighWaters call.
type Mark struct {
	Key string
	At  time.Time
}

// BatchAdvancer is a HighWater that moves several marks in one atomic,
// durable write, as AdvanceHighWater moves one: all of them or none. A
// Reserve call moves its node's position and lease mark with it where its
// store offers it (a launchlog hold does).
type BatchAdvancer interface {
	// AdvanceHighWaters moves each mark forward as AdvanceHighWater does
	// and returns the marks now stored, in the order given.
	AdvanceHighWaters(ctx context.Context, marks []Mark) ([]time.Time, error)
}

// NodeClaim is a node number held for a limited time, such as a claim in
// etcd (fleet.Claim implements it). A traceid or snowflake generator on a
// claim keeps its high-water marks in the claim, whose writes are fenced
// by it: a write fails once the claim is lost, and a mark written by
// another holder never raises this one's limit. So a later holder of the
// node starts above every unit of time (a second, a tick) an earlier one
// could issue in, whatever their clocks read.
//
// The generator checks the claim where it already reads the precise clock
// (a new unit, a wait, after every store call, every ID while the clock is
// behind), never per ID, and enters a unit only if the claim holds until
// the unit ends (plus clock.CoarseLag), so that no ID is handed out after
// the claim's deadline. Once the claim is lost the generator fails with an
// error of kind idkit.ErrNodeLost.
type NodeClaim interface {
	// Node returns the claimed node number.
	Node() int
	// Check returns nil if the claim holds until t, as far as is known
	// now, and an error once it is lost; a lost claim stays lost. t may be
	// later than now: a claim that will not hold until t is lost at once.
	Check(t time.Time) error
	// HighWater keeps the node's marks, every write fenced by the claim.
	HighWater
}

// MarkLeaser is a NodeClaim that says how far ahead of the clock the
// generator on it should lease its marks: fleet's claims do, so that a
// large fleet can bound the writes its store carries. A traceid or
// snowflake generator whose Options.Lease is zero takes it (zero: its own
// default).
type MarkLeaser interface {
	MarkLease() time.Duration
}

// Generators hands out generator ids for a launch: every call returns an
// id in 0 to 99999 that no earlier call for that launch returned,
// anywhere in the system, and persists that fact before it returns.
type Generators interface {
	NextGenerator(ctx context.Context, launch int) (int, error)
}

// Launch is one entry of the log: one start of a system, which all of its
// processes share.
type Launch struct {
	ID        int       `json:"id"`         // 1..=MaxLaunch, in order of Begin
	StartedAt time.Time `json:"started_at"` // when Begin ran, in UTC; never before the previous launch
	Ticket    string    `json:"ticket"`     // the release ticket, if any
	By        string    `json:"by"`         // who started the launch
	Note      string    `json:"note"`       // free text
}

// Info describes a launch that Begin is to record.
type Info struct {
	Ticket string // the release ticket in the issue tracker
	By     string // who starts the launch
	Note   string // free text
}

// LaunchLog is a whole launch log: launches, generator ids and high-water
// marks. launchlog.Log (a bbolt file) and fleet.Log (etcd) implement it,
// and segment.BlockStore as well.
type LaunchLog interface {
	// Begin records a new launch and returns it with the next launch id.
	Begin(ctx context.Context, info Info) (Launch, error)
	// Get returns launch id, or an error of kind idkit.ErrInvalid if the
	// log has none.
	Get(ctx context.Context, id int) (Launch, error)
	// Current returns the latest launch.
	Current(ctx context.Context) (Launch, error)
	// List returns every launch, oldest first.
	List(ctx context.Context) ([]Launch, error)
	HighWater
	Generators
}

// Claim is a node claim that its holder closes, and that says when it is
// lost: fleet.Claim is one. A server takes a claim again once it is lost.
type Claim interface {
	NodeClaim
	// Done is closed once the claim is lost.
	Done() <-chan struct{}
	// Close releases the claim.
	Close() error
}
