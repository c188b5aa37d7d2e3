package snowflake

import (
	"fmt"
	"strings"
)

// ClockPolicy says what a Generator does when the wall clock is found to
// have stepped back, that is, to read a tick earlier than one it read
// before. Whatever the policy, the generator's logical tick never moves
// backwards, so no ID is ever issued twice; the policies differ in whether
// IDs keep coming and how far their timestamps may run ahead of the clock.
//
// The zero value is ClockHybrid. The types implement encoding.TextMarshaler
// and TextUnmarshaler, so that flag.TextVar can set them.
type ClockPolicy int

const (
	// ClockHybrid waits while the clock is less than Options.MaxWait
	// (default 5 ms) behind, continues on the last tick while it is less
	// than Options.MaxContinue (default 100 ms) behind, and fails with
	// ErrClockBackwards beyond.
	ClockHybrid ClockPolicy = iota
	// ClockReject fails with ErrClockBackwards until the clock is back
	// where it was (Twitter's "Refusing to generate id").
	ClockReject
	// ClockWait sleeps until the clock is back where it was if it is at
	// most Options.MaxWait (default 10 ms, ShardingSphere's
	// max-tolerate-time-difference) behind, and fails with ErrClockBackwards
	// beyond.
	ClockWait
	// ClockContinue keeps issuing IDs on the last tick while the clock is
	// at most Options.MaxContinue behind (zero means no limit), and fails
	// with ErrClockBackwards beyond. When the tick runs out, the
	// ExhaustPolicy applies.
	ClockContinue
)

// ExhaustPolicy says what a Generator does when the current tick's
// sequence runs out. The zero value is ExhaustWait.
type ExhaustPolicy int

const (
	// ExhaustWait waits until the clock reaches the next tick (the classic
	// tilNextMillis).
	ExhaustWait ExhaustPolicy = iota
	// ExhaustBorrow moves on to the next tick at once while that tick is at
	// most Options.MaxLead ahead of the clock, and waits beyond (as Baidu's
	// uid-generator borrows future seconds).
	ExhaustBorrow
	// ExhaustError fails with ErrExhausted.
	ExhaustError
)

// SequenceStart says where each tick's sequence starts. The zero value is
// StartZero.
type SequenceStart int

const (
	// StartZero starts every tick at 0.
	StartZero SequenceStart = iota
	// StartRandom starts every tick at a random 0 to 9 (capped by the
	// sequence's maximum), so that IDs taken modulo a small number spread
	// evenly even when few are issued per tick (the seed's CustomUUID).
	StartRandom
)

var (
	clockPolicyNames   = []string{"hybrid", "reject", "wait", "continue"}
	exhaustPolicyNames = []string{"wait", "borrow", "error"}
	sequenceStartNames = []string{"zero", "random"}
)

// String returns the policy's name.
func (p ClockPolicy) String() string {
	return enumString("ClockPolicy", clockPolicyNames, int(p))
}

// String returns the policy's name.
func (p ExhaustPolicy) String() string {
	return enumString("ExhaustPolicy", exhaustPolicyNames, int(p))
}

// String returns the start's name.
func (s SequenceStart) String() string {
	return enumString("SequenceStart", sequenceStartNames, int(s))
}

// MarshalText implements encoding.TextMarshaler.
func (p ClockPolicy) MarshalText() ([]byte, error) {
	return enumMarshal("ClockPolicy", clockPolicyNames, int(p))
}

// MarshalText implements encoding.TextMarshaler.
func (p ExhaustPolicy) MarshalText() ([]byte, error) {
	return enumMarshal("ExhaustPolicy", exhaustPolicyNames, int(p))
}

// MarshalText implements encoding.TextMarshaler.
func (s SequenceStart) MarshalText() ([]byte, error) {
	return enumMarshal("SequenceStart", sequenceStartNames, int(s))
}

// UnmarshalText accepts a policy's name, ignoring case: hybrid, reject,
// wait or continue.
func (p *ClockPolicy) UnmarshalText(b []byte) error {
	return enumUnmarshal("ClockPolicy", clockPolicyNames, b, (*int)(p))
}

// UnmarshalText accepts a policy's name, ignoring case: wait, borrow or
// error.
func (p *ExhaustPolicy) UnmarshalText(b []byte) error {
	return enumUnmarshal("ExhaustPolicy", exhaustPolicyNames, b, (*int)(p))
}

// UnmarshalText accepts zero or random, ignoring case.
func (s *SequenceStart) UnmarshalText(b []byte) error {
	return enumUnmarshal("SequenceStart", sequenceStartNames, b, (*int)(s))
}

func enumString(typ string, names []string, v int) string {
	if v < 0 || v >= len(names) {
		return fmt.Sprintf("%s(%d)", typ, v)
	}
	return names[v]
}

func enumMarshal(typ string, names []string, v int) ([]byte, error) {
	if v < 0 || v >= len(names) {
		return nil, fmt.Errorf("%w: %s(%d), want 0 to %d", ErrInvalid, typ, v, len(names)-1)
	}
	return []byte(names[v]), nil
}

func enumUnmarshal(typ string, names []string, b []byte, v *int) error {
	for i, n := range names {
		if strings.EqualFold(n, string(b)) {
			*v = i
			return nil
		}
	}
	return fmt.Errorf("%w: %s %q, want one of %s", ErrInvalid, typ, b, strings.Join(names, ", "))
}
