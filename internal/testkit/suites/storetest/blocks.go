package storetest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/idkit/idkit/internal/testkit/testenv"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/segment"
)

// OpenBlocks returns a new handle on one block store each time it is
// called, as another process or host would open it. The store need not be
// empty: the suite uses tags of its own, with a random suffix, and its
// subtests run in parallel.
type OpenBlocks func(t *testing.T) segment.BlockStore

// BlockStore runs the segment.BlockStore contract against the store that
// open returns handles on:
//
//   - a new tag's first block starts at 1; one caller's blocks follow each
//     other without gaps or overlap, whatever their steps;
//   - blocks reserved by many goroutines on several handles at once never
//     overlap, each goroutine's ascend, and together they cover 1 to the
//     last ID without gaps;
//   - tags are independent, also tags that are prefixes of each other;
//   - a bad tag or step is refused with an error wrapping
//     segment.ErrInvalid that names the value and the allowed range, and
//     reserves nothing;
//   - a context that has ended is refused with an error wrapping its
//     error, and reserves nothing.
//
// Exhaustion at 2^63-1 is left to each store's own tests, which can seed
// their state cheaply.
func BlockStore(t *testing.T, open OpenBlocks) {
	t.Run("FirstBlocks", func(t *testing.T) { t.Parallel(); testFirstBlocks(t, open) })
	t.Run("Handles", func(t *testing.T) { t.Parallel(); testBlockHandles(t, open) })
	t.Run("Concurrent", func(t *testing.T) { t.Parallel(); testConcurrentBlocks(t, open) })
	t.Run("TagsIndependent", func(t *testing.T) { t.Parallel(); testTagsIndependent(t, open) })
	t.Run("Invalid", func(t *testing.T) { t.Parallel(); testBlocksInvalid(t, open) })
	t.Run("Context", func(t *testing.T) { t.Parallel(); testBlocksContext(t, open) })
}

// Tag returns a tag of its own for one test: prefix and a random suffix.
func Tag(t testing.TB, prefix string) string {
	tag := prefix + "-" + Suffix(t)
	require.NoError(t, segment.CheckTag(tag), "storetest.Tag(%q)", prefix)
	return tag
}

// Suffix returns 12 random hex digits, which make the name of a schema,
// table, key prefix or tag the test's own.
func Suffix(t testing.TB) string {
	var b [6]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return hex.EncodeToString(b[:])
}

// Server returns the address of the test server that the environment
// variable env names, or skips t with one line saying how to set it:
// "no Redis: set IDKIT_REDIS_ADDR=127.0.0.1:6379 to run".
func Server(t testing.TB, env, what, example string) string {
	t.Helper()
	return testenv.Server(t, env, what, example)
}

func reserve(t *testing.T, s segment.BlockStore, tag string, step int64) segment.Block {
	t.Helper()
	b, err := s.ReserveBlock(context.Background(), tag, step)
	require.NoError(t, err, "ReserveBlock(%q, %d)", tag, step)
	require.GreaterOrEqual(t, b.First, int64(1), "block %+v", b)
	require.GreaterOrEqual(t, b.Last, b.First, "block %+v", b)
	return b
}

// requireFollows checks that b continues prev (zero for none) without a
// gap or overlap.
func requireFollows(t *testing.T, prev, b segment.Block, what string) {
	t.Helper()
	require.Equal(t, prev.Last+1, b.First, "%s: block %+v after %+v: want it to start right after", what, b, prev)
}

func testFirstBlocks(t *testing.T, open OpenBlocks) {
	s := open(t)
	tag := Tag(t, "first")
	var prev segment.Block
	for _, step := range []int64{1, 1, 7, 1000, 3, segment.MaxStep, 1} {
		b := reserve(t, s, tag, step)
		requireFollows(t, prev, b, fmt.Sprintf("step %d", step))
		assert.Positive(t, b.Len())
		prev = b
	}
}

func testBlockHandles(t *testing.T, open OpenBlocks) {
	// Handles take turns on one tag, as processes would: each continues
	// where the other stopped.
	tag := Tag(t, "handles")
	handles := []segment.BlockStore{open(t), open(t), open(t)}
	var prev segment.Block
	for i := range 12 {
		b := reserve(t, handles[i%len(handles)], tag, 10)
		requireFollows(t, prev, b, fmt.Sprintf("handle %d", i%len(handles)))
		prev = b
	}
}

func testConcurrentBlocks(t *testing.T, open OpenBlocks) {
	const handles, workers, each = 3, 2, 10
	tag := Tag(t, "concurrent")
	got := make([][]segment.Block, handles*workers)
	var wg sync.WaitGroup
	for h := range handles {
		s := open(t)
		for w := range workers {
			i := h*workers + w
			wg.Go(func() {
				for n := range each {
					b, err := s.ReserveBlock(context.Background(), tag, int64(1+(i+n)%5*100))
					if !assert.NoError(t, err, "worker %d", i) {
						return
					}
					got[i] = append(got[i], b)
				}
			})
		}
	}
	wg.Wait()
	var all []segment.Block
	for i, blocks := range got {
		require.Len(t, blocks, each, "worker %d", i)
		for j := 1; j < len(blocks); j++ {
			assert.Greater(t, blocks[j].First, blocks[j-1].Last, "worker %d: blocks do not ascend", i)
		}
		all = append(all, blocks...)
	}
	slices.SortFunc(all, func(a, b segment.Block) int { return cmp.Compare(a.First, b.First) })
	var prev segment.Block
	for _, b := range all {
		require.GreaterOrEqual(t, b.Last, b.First)
		requireFollows(t, prev, b, "all workers' blocks in order")
		prev = b
	}
}

func testTagsIndependent(t *testing.T, open OpenBlocks) {
	s := open(t)
	base := Tag(t, "tags")
	// Tags that are prefixes of each other, or differ only in case or in
	// a separator, are distinct sequences.
	tags := []string{base, base + "1", base + ":1", base + ".1", base + "_1", base + "-1", strings.ToUpper(base)}
	long := base + strings.Repeat("x", segment.MaxTagLen-len(base))
	tags = append(tags, long)
	last := make(map[string]segment.Block)
	for round := range 3 {
		for i, tag := range tags {
			step := int64(10 * (i + 1))
			b := reserve(t, s, tag, step)
			requireFollows(t, last[tag], b, fmt.Sprintf("round %d, tag %q", round, tag))
			last[tag] = b
		}
	}
}

func testBlocksInvalid(t *testing.T, open OpenBlocks) {
	s := open(t)
	ctx := context.Background()
	tag := Tag(t, "invalid")
	for _, bad := range []string{
		"", strings.Repeat("t", segment.MaxTagLen+1), tag + " x", tag + "/x", tag + "\x00",
		tag + "ä", "'; DROP TABLE x; --", tag + "*", tag + "\n",
	} {
		_, err := s.ReserveBlock(ctx, bad, 10)
		if assert.Error(t, err, "tag %q", bad) {
			assert.ErrorIs(t, err, segment.ErrInvalid, "tag %q", bad)
			assert.ErrorContains(t, err, fmt.Sprintf("%q", bad), "the error quotes the tag")
		}
	}
	for _, step := range []int64{0, -1, -1 << 63, segment.MaxStep + 1, 1<<63 - 1} {
		_, err := s.ReserveBlock(ctx, tag, step)
		if assert.Error(t, err, "step %d", step) {
			assert.ErrorIs(t, err, segment.ErrInvalid, "step %d", step)
			assert.ErrorContains(t, err, fmt.Sprint(step), "the error names the step")
			assert.ErrorContains(t, err, fmt.Sprint(segment.MaxStep), "the error names the allowed range")
		}
	}
	// Nothing was reserved by the calls refused.
	requireFollows(t, segment.Block{}, reserve(t, s, tag, 5), "after refused calls")
}

func testBlocksContext(t *testing.T, open OpenBlocks) {
	s := open(t)
	tag := Tag(t, "ctx")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.ReserveBlock(canceled, tag, 10)
	assert.ErrorIs(t, err, context.Canceled, "a cancelled context")

	expired, cancel := context.WithTimeout(context.Background(), -1)
	defer cancel()
	_, err = s.ReserveBlock(expired, tag, 10)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "an expired context")

	// Nothing was reserved by the calls refused.
	requireFollows(t, segment.Block{}, reserve(t, s, tag, 5), "after refused calls")
}
