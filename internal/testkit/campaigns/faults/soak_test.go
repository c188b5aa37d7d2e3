package faults

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/campaigns/crashkit"
	"github.com/idkit/idkit/traceid"
)

// soakIDs returns how many IDs the soak takes per scheme: IDKIT_SOAK_IDS,
// or a size that keeps the default test run short.
func soakIDs(t *testing.T) int {
	if s := os.Getenv("IDKIT_SOAK_IDS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "IDKIT_SOAK_IDS")
		return n
	}
	if raceEnabled || testing.Short() {
		return 64 * 2_000
	}
	return 64 * 20_000
}

// TestSoak runs 64 goroutines on one generator per scheme, with the real
// clock, and checks every ID for duplicates with bounded memory: each
// goroutine writes its IDs to a file as a sorted run (see writeRun), and a
// k-way merge of the runs compares neighbours.
func TestSoak(t *testing.T) {
	const goroutines = 64
	n := soakIDs(t)
	for _, scheme := range crashkit.Schemes {
		t.Run(scheme, func(t *testing.T) {
			next, err := crashkit.NewNext(scheme, nil, 1, nil)
			require.NoError(t, err)
			dir := t.TempDir()
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- writeRun(filepath.Join(dir, strconv.Itoa(g)), scheme, next, n/goroutines)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			count, dup, err := mergeRuns(dir, goroutines)
			require.NoError(t, err)
			require.Zero(t, dup, "ID issued twice")
			require.Equal(t, goroutines*(n/goroutines), count)
			t.Logf("%s: %d IDs from %d goroutines, no duplicate", scheme, count, goroutines)
		})
	}
}

// writeRun writes n IDs from next to path as a sorted run, failing if
// they do not keep the order that scheme promises for one goroutine. The
// per-core path's IDs are sorted one second at a time: a goroutine's
// TraceIds never go back a second, so memory stays within a second's IDs.
func writeRun(path, scheme string, next func() (int64, error), n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var buf [8]byte
	write := func(ids ...int64) {
		for _, id := range ids {
			binary.BigEndian.PutUint64(buf[:], uint64(id))
			w.Write(buf[:])
		}
	}
	var prev int64
	var second []int64 // the per-core path's IDs of the current second
	for i := range n {
		id, err := next()
		if err != nil {
			return err
		}
		if i > 0 {
			if err := crashkit.InOrder(scheme, []int64{prev, id}); err != nil {
				return err
			}
		}
		prev = id
		if crashkit.Ordered(scheme) {
			write(id)
			continue
		}
		if len(second) > 0 && traceid.ID(id).Second() != traceid.ID(second[0]).Second() {
			slices.Sort(second)
			write(second...)
			second = second[:0]
		}
		second = append(second, id)
	}
	slices.Sort(second)
	write(second...)
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// mergeRuns merges the sorted runs 0..k-1 in dir and returns how many IDs
// they hold and the first ID found twice (0 if none).
func mergeRuns(dir string, k int) (count int, dup int64, err error) {
	h := &runHeap{}
	for i := range k {
		f, err := os.Open(filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			return 0, 0, err
		}
		defer f.Close()
		c := &cursor{r: bufio.NewReaderSize(f, 1<<16)}
		if c.advance() {
			heap.Push(h, c)
		} else if c.err != nil {
			return 0, 0, c.err
		}
	}
	var prev int64
	for h.Len() > 0 {
		c := (*h)[0]
		if count > 0 && c.id == prev && dup == 0 {
			dup = c.id
		}
		prev = c.id
		count++
		if c.advance() {
			heap.Fix(h, 0)
		} else {
			if c.err != nil {
				return count, dup, c.err
			}
			heap.Pop(h)
		}
	}
	return count, dup, nil
}

// cursor reads one sorted run.
type cursor struct {
	r   *bufio.Reader
	id  int64
	err error
}

func (c *cursor) advance() bool {
	var buf [8]byte
	if _, err := io.ReadFull(c.r, buf[:]); err != nil {
		if err != io.EOF {
			c.err = err
		}
		return false
	}
	c.id = int64(binary.BigEndian.Uint64(buf[:]))
	return true
}

type runHeap []*cursor

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return h[i].id < h[j].id }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*cursor)) }
func (h *runHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// TestMergeRunsFindsDuplicate checks the checker: a duplicate across two
// runs is found.
func TestMergeRunsFindsDuplicate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ids := [][]int64{{1, 5, 9}, {2, 5, 10}, {3}}
	for i, run := range ids {
		require.NoError(t, writeRun(filepath.Join(dir, strconv.Itoa(i)), "traceid", from(run), len(run)))
	}
	count, dup, err := mergeRuns(dir, len(ids))
	require.NoError(t, err)
	require.Equal(t, 7, count)
	require.Equal(t, int64(5), dup)

	require.Error(t, writeRun(filepath.Join(dir, "0"), "traceid", from([]int64{1, 5, 3}), 3), "IDs of one goroutine that go back")
}

// TestWriteRunPerCore checks the checker of the per-core path: IDs out of
// order within a second are written sorted, and a duplicate among them is
// found; an ID of an earlier second fails.
func TestWriteRunPerCore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	id := func(second, counter int) int64 {
		v, err := traceid.Compose(traceid.Parts{Second: second, Node: 1, Counter: counter}, 0)
		require.NoError(t, err)
		return int64(v)
	}
	runs := [][]int64{
		{id(7, 300), id(7, 2), id(7, 40), id(8, 9), id(8, 1)},
		{id(7, 5), id(7, 1), id(8, 2), id(8, 9)}, // id(8, 9) twice
	}
	for i, run := range runs {
		require.NoError(t, writeRun(filepath.Join(dir, strconv.Itoa(i)), "traceid-percore", from(run), len(run)))
	}
	count, dup, err := mergeRuns(dir, len(runs))
	require.NoError(t, err)
	require.Equal(t, 9, count)
	require.Equal(t, id(8, 9), dup)

	err = writeRun(filepath.Join(dir, "0"), "traceid-percore", from([]int64{id(8, 1), id(7, 2)}), 2)
	require.ErrorContains(t, err, "back a second")
}

// from returns a next function that hands out ids in turn.
func from(ids []int64) func() (int64, error) {
	k := 0
	return func() (int64, error) {
		k++
		return ids[k-1], nil
	}
}
