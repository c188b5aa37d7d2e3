package segment

import (
	"context"
	"fmt"
)

// A Block is a range of IDs reserved for one tag: First through Last,
// inclusive, with 1 <= First <= Last.
type Block struct {
	First, Last int64
}

// Len returns the number of IDs in b.
func (b Block) Len() int64 { return b.Last - b.First + 1 }

// A BlockStore reserves blocks of IDs for tags, durably. The stores are
// launchlog.Log (a bbolt file), fleet.Log (etcd), and the packages
// segment/pgstore, segment/mysqlstore and segment/redisstore.
//
// A store keeps, per tag, the last ID it reserved (0 before the first
// block). ReserveBlock moves it up by the step in one atomic, durable
// write and returns the block between the old and the new value. A store
// checks tag with CheckTag and step with CheckStep and returns their error
// (wrapped, so that it wraps ErrInvalid), fails with an error wrapping
// ErrExhausted when the block would pass 2^63-1, and returns ctx's error
// (wrapped) when ctx ends before the reservation is known to be durable.
// A reservation whose outcome is unknown (the store did not answer) may be
// lost; it must never be returned twice.
type BlockStore interface {
	// ReserveBlock reserves the next block of about step IDs for tag and
	// returns it once the reservation is durable. A store may round step
	// to its own unit; the block says what was reserved. Blocks of one
	// tag never overlap, and each starts above every block reserved
	// before it, by any process or host sharing the store.
	ReserveBlock(ctx context.Context, tag string, step int64) (Block, error)
}

// Limits of tags and steps, which every store accepts.
const (
	// MaxTagLen is the longest tag, in bytes.
	MaxTagLen = 64
	// MaxStep is the largest step of one block: 2^32. It leaves room to
	// double a step without overflow and keeps a block that a crash loses
	// small next to the 2^63-1 IDs of a tag.
	MaxStep int64 = 1 << 32
)

// CheckTag returns nil if tag is a valid tag: 1 to MaxTagLen bytes of
// ASCII letters, digits, '.', '_', '-' and ':'. These fit every store's
// key or column as they are, without quoting.
func CheckTag(tag string) error {
	if len(tag) < 1 || len(tag) > MaxTagLen {
		return fmt.Errorf("%w: tag %q is %d bytes, want 1 to %d", ErrInvalid, tag, len(tag), MaxTagLen)
	}
	for i := 0; i < len(tag); i++ {
		if !tagByte(tag[i]) {
			return fmt.Errorf("%w: tag %q has byte %q at %d, want ASCII letters, digits, '.', '_', '-' or ':'", ErrInvalid, tag, tag[i], i)
		}
	}
	return nil
}

func tagByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == ':'
}

// CheckStep returns nil if step is a valid step: 1 to MaxStep.
func CheckStep(step int64) error {
	if step < 1 || step > MaxStep {
		return fmt.Errorf("%w: step %d, want 1 to %d", ErrInvalid, step, MaxStep)
	}
	return nil
}

// checkBlock returns an error wrapping ErrBadBlock if b is not a block
// that may follow a block ending at prev (0 for none).
func checkBlock(b Block, prev int64) error {
	switch {
	case b.First < 1 || b.Last < b.First:
		return fmt.Errorf("%w: [%d, %d], want 1 <= First <= Last", ErrBadBlock, b.First, b.Last)
	case b.First <= prev:
		return fmt.Errorf("%w: [%d, %d] does not start above %d, the last ID of the block before", ErrBadBlock, b.First, b.Last, prev)
	}
	return nil
}
