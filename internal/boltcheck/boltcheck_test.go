package boltcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reviewedBbolt is the bbolt version whose source this package was
// reviewed against: the format constants in internal/common (types.go,
// page.go, meta.go, bucket.go), the page size search and meta choice in
// db.go (getPageSize, mmap, meta), the freelist page in
// internal/freelist, and what tx_check.go demands.
const reviewedBbolt = "v1.5.0"

// TestReviewedBboltVersion fails when go.mod moves bbolt to another
// version, so that the upgrade is a deliberate review: read the files
// named at reviewedBbolt in the new version, compare them with this
// package's constants and walk, fuzz (FuzzVerify), and then update
// reviewedBbolt.
func TestReviewedBboltVersion(t *testing.T) {
	got := requiredVersion(t, "go.etcd.io/bbolt")
	assert.Equal(t, reviewedBbolt, got, "boltcheck was reviewed against bbolt %s; go.mod requires %s: review boltcheck against it (see reviewedBbolt), then update reviewedBbolt", reviewedBbolt, got)
}

// requiredVersion returns the version of module that the module's
// go.mod requires (a test binary's build information lists no
// dependencies).
func requiredVersion(t *testing.T, module string) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for line := range strings.Lines(string(data)) {
				f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
				if len(f) >= 2 && f[0] == module {
					return f[1]
				}
			}
			t.Fatalf("%s/go.mod does not require %s", dir, module)
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test's directory")
		dir = parent
	}
}

// TestAcceptsBboltFiles checks that every file bbolt wrote for the seeds
// passes, and passes bbolt's own check.
func TestAcceptsBboltFiles(t *testing.T) {
	t.Parallel()
	for _, s := range seedFiles(t) {
		t.Run(s.name, func(t *testing.T) {
			assert.NoError(t, Bytes(s.data))
			assert.NoError(t, boltVerdict(t, s.data))
		})
	}
}

func TestFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"empty", nil, ""},
		{"bbolt", seedFiles(t)[1].data, ""},
		{"not bbolt", []byte(strings.Repeat("launch log ", 2000)), "bad structure: no valid meta page"},
	} {
		path := filepath.Join(dir, tt.name)
		require.NoError(t, os.WriteFile(path, tt.data, 0o600))
		f, err := os.Open(path)
		require.NoError(t, err)
		err = File(f)
		require.NoError(t, f.Close())
		if tt.wantErr == "" {
			assert.NoError(t, err, tt.name)
		} else {
			assert.ErrorIs(t, err, ErrStructure, tt.name)
			assert.EqualError(t, err, tt.wantErr, tt.name)
		}
	}
}

// layout locates the parts of a file that the damage in TestRejects
// aims at.
type layout struct {
	data     []byte
	pageSize uint64
	meta     uint64            // offset of the meta page bbolt uses
	root     uint64            // root page of the root bucket
	buckets  map[string]uint64 // offset of each top-level bucket's root page id
	freelist uint64            // offset of the freelist page
}

func locate(t *testing.T, data []byte) layout {
	t.Helper()
	l := layout{data: data, buckets: map[string]uint64{}}
	l.meta, l.pageSize = metaOf(t, data)
	l.root = u64(data, l.meta+headerSize+metaRoot)
	l.freelist = u64(data, l.meta+headerSize+metaFreelist) * l.pageSize
	p := l.root * l.pageSize
	ne := binary.NativeEndian
	require.Equal(t, uint16(leafFlag), ne.Uint16(data[p+8:]), "root page is a leaf")
	for i := range uint64(ne.Uint16(data[p+10:])) {
		e := p + headerSize + i*elemSize
		pos, ksize := uint64(ne.Uint32(data[e+4:])), uint64(ne.Uint32(data[e+8:]))
		l.buckets[string(data[e+pos:e+pos+ksize])] = e + pos + ksize
	}
	return l
}

// freeCount returns the offset of the freelist's count and the count.
func (l layout) freeCount() (uint64, uint16) {
	return l.freelist + 10, binary.NativeEndian.Uint16(l.data[l.freelist+10:])
}

func TestRejects(t *testing.T) {
	t.Parallel()
	good := seedFiles(t)[2].data // branches, overflow, nested, freed
	require.NoError(t, Bytes(good))
	ps := int(binary.NativeEndian.Uint32(good[24:]))
	ne := binary.NativeEndian
	tests := []struct {
		name   string
		damage func(l layout) []byte
		want   string
		kind   kind
	}{
		{"empty", func(layout) []byte { return nil }, "no valid meta page", structural},
		{"not bbolt", func(layout) []byte { return []byte(strings.Repeat("launch log ", 2000)) }, "no valid meta page", structural},
		{"one page", func(l layout) []byte { return l.data[:ps] }, "no valid meta page", structural}, // bbolt needs 4 KiB for the first meta page
		{"truncated below the high water mark", func(l layout) []byte { return l.data[:3*ps] }, "high water mark", hazard},
		{"high water mark beyond the file", func(l layout) []byte {
			setMeta(l.data, l.meta, metaHWM, uint64(len(l.data)/ps+1))
			return l.data
		}, "high water mark", hazard},
		{"meta page header", func(l layout) []byte {
			ne.PutUint16(l.data[l.meta^uint64(ps)+8:], 0x06) // the meta page bbolt does not use
			return l.data
		}, "says it is page", structural},
		{"bucket on the page holding it", func(l layout) []byte {
			ne.PutUint64(l.data[l.buckets["big"]:], l.root)
			return l.data
		}, "reached again below itself", hazard},
		{"bucket on a meta page", func(l layout) []byte {
			ne.PutUint64(l.data[l.buckets["big"]:], 1)
			return l.data
		}, "page 1 is a meta page", hazard},
		{"two buckets on one page", func(l layout) []byte {
			copy(l.data[l.buckets["outer"]:], l.data[l.buckets["big"]:][:8])
			return l.data
		}, "reached twice", structural},
		{"bucket on a free page", func(l layout) []byte {
			ne.PutUint64(l.data[l.buckets["big"]:], ne.Uint64(l.data[l.freelist+headerSize:]))
			return l.data
		}, "which is in use", structural},
		{"page free and in use", func(l layout) []byte {
			ne.PutUint64(l.data[l.freelist+headerSize:], ne.Uint64(l.data[l.buckets["big"]:]))
			return l.data
		}, "which is in use", structural},
		{"page free twice", func(l layout) []byte {
			copy(l.data[l.freelist+headerSize+8:], l.data[l.freelist+headerSize:][:8])
			return l.data
		}, "listed twice", structural},
		{"page lost", func(l layout) []byte {
			off, n := l.freeCount()
			ne.PutUint16(l.data[off:], n-1)
			return l.data
		}, "neither reachable nor free", structural},
		{"free page beyond the high water mark", func(l layout) []byte {
			ne.PutUint64(l.data[l.freelist+headerSize:], uint64(len(l.data)/ps+5))
			return l.data
		}, "which is out of range", precaution},
		{"freelist longer than its page", func(l layout) []byte {
			off, _ := l.freeCount()
			ne.PutUint16(l.data[off:], 0xFFFF)
			ne.PutUint64(l.data[l.freelist+headerSize:], 1<<40)
			return l.data
		}, "more than it holds", hazard},
		{"root bucket inline", func(l layout) []byte {
			setMeta(l.data, l.meta, metaRoot, 0)
			return l.data
		}, "root bucket on page 0", precaution},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := tt.damage(locate(t, bytes.Clone(good)))
			err := Bytes(data)
			assert.ErrorIs(t, err, ErrStructure)
			assert.ErrorContains(t, err, tt.want)
			in := inspect(data)
			require.NotEmpty(t, in.findings)
			assert.Equal(t, tt.kind, in.findings[0].kind, "%v", in)
			if tt.kind == hazard {
				assert.False(t, in.safe)
				return
			}
			// What bbolt makes of it: a structural finding is one that
			// bbolt's Open or Tx.Check fails on too.
			verdict := boltVerdict(t, data)
			if in.first(structural) != nil {
				assert.Error(t, verdict, "bbolt accepts it")
			}
			t.Logf("bbolt: %v", verdict)
		})
	}
}

// allocated returns the bytes that f allocates on the heap, counting
// every goroutine's: its callers do not run in parallel.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestFileSparse checks that File reads only what the meta page reaches:
// a launch log grown sparsely to 8 GiB passes, and checking it, sound or
// with a page that claims overflow deep into the sparse tail, allocates a
// tiny fraction of what the file holds.
func TestFileSparse(t *testing.T) {
	// Not parallel: allocated counts the allocations of parallel tests.
	const size = 8 << 30
	good := seedFiles(t)[4].data // launch log
	l := locate(t, bytes.Clone(good))
	huge := bytes.Clone(good)
	binary.NativeEndian.PutUint32(huge[l.root*l.pageSize+12:], uint32(size/l.pageSize/2))
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"sound", good, ""},
		{"overflow into the sparse tail", huge, "past the high water mark"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tempFile(t, tt.data, size)
			var err error
			n := allocated(func() { err = File(f) })
			if tt.want == "" {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrStructure)
				require.ErrorContains(t, err, tt.want)
			}
			assert.Less(t, n, uint64(1<<20), "bytes allocated to check a file of %d bytes", size)
			t.Logf("%d bytes allocated", n)
		})
	}
}

// TestTooLarge checks that a file whose high water mark lies past MaxSize
// is refused with an error naming the limit, and that one at MaxSize is
// checked.
func TestTooLarge(t *testing.T) {
	t.Parallel()
	good := seedFiles(t)[4].data // launch log
	meta, ps := metaOf(t, good)
	for _, tt := range []struct {
		name string
		hwm  uint64
		want string
	}{
		{"at MaxSize", MaxSize / ps, "pages neither reachable nor free"},
		{"past MaxSize", MaxSize/ps + 1, fmt.Sprintf(
			"bad structure: too large: high water mark %d pages of %d bytes, %d bytes, more than MaxSize (1073741824 bytes)",
			MaxSize/ps+1, ps, MaxSize+ps)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := bytes.Clone(good)
			setMeta(data, meta, metaHWM, tt.hwm)
			err := File(tempFile(t, data, int64(tt.hwm*ps)))
			require.ErrorIs(t, err, ErrStructure)
			assert.ErrorContains(t, err, tt.want)
			assert.Equal(t, tt.hwm*ps > MaxSize, errors.Is(err, ErrTooLarge), "%v", err)
		})
	}

	// Only a walk that collects every finding reads past the high water
	// mark; it stops where a page would take it past MaxSize.
	t.Run("overflow past MaxSize", func(t *testing.T) {
		t.Parallel()
		data := bytes.Clone(good)
		l := locate(t, data)
		binary.NativeEndian.PutUint32(data[l.root*l.pageSize+12:], uint32(MaxSize/ps))
		c := checker{r: tempFile(t, data, 2*MaxSize), size: 2 * MaxSize, all: true}
		c.check()
		require.NotEmpty(t, c.findings)
		last := c.findings[len(c.findings)-1]
		assert.Equal(t, hazard, last.kind)
		assert.ErrorIs(t, last.err, ErrTooLarge)
		assert.ErrorContains(t, last.err, "more than MaxSize (1073741824 bytes)")
	})
}

// TestFileReadError checks that File returns an error reading the file
// as that, not as damage.
func TestFileReadError(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bolt.db")
	require.NoError(t, os.WriteFile(path, seedFiles(t)[1].data, 0o600))
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	err = File(f)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrStructure)
	assert.ErrorContains(t, err, "boltcheck: read ")
}
