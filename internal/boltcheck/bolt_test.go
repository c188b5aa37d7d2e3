package boltcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
)

// This file holds the helpers that the tests share: files that bbolt
// writes, bbolt's own verdict on a file, and a full inspection that
// classifies every finding.

// boltFile returns the bytes of a file that bbolt wrote with the given
// page size (0: the OS page size), one transaction per step.
func boltFile(tb testing.TB, pageSize int, noFreelistSync bool, steps ...func(*bbolt.Tx) error) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "bolt.db")
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{PageSize: pageSize, NoFreelistSync: noFreelistSync, Timeout: time.Second})
	require.NoError(tb, err)
	for _, step := range steps {
		require.NoError(tb, db.Update(step))
	}
	require.NoError(tb, db.Close())
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	return data
}

// tempFile writes data to a file, grows it to size bytes if that is
// larger (sparsely: the hole costs no disk), and returns it open for
// reading.
func tempFile(tb testing.TB, data []byte, size int64) *os.File {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "check.db")
	require.NoError(tb, os.WriteFile(path, data, 0o600))
	if size > int64(len(data)) {
		require.NoError(tb, os.Truncate(path, size))
	}
	f, err := os.Open(path)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = f.Close() })
	return f
}

// fill returns a step that puts n keys of the given value size into
// the bucket at path (created as needed), keys prefixed with name.
func fill(name string, n, valueSize int, path ...string) func(*bbolt.Tx) error {
	return func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(path[0]))
		if err != nil {
			return err
		}
		for _, p := range path[1:] {
			if b, err = b.CreateBucketIfNotExists([]byte(p)); err != nil {
				return err
			}
		}
		for i := range n {
			v := bytes.Repeat([]byte{byte(i)}, valueSize)
			if err := b.Put(fmt.Appendf(nil, "%s-%05d", name, i), v); err != nil {
				return err
			}
		}
		return nil
	}
}

// drop returns a step that deletes every k-th key of the bucket at path.
func drop(k int, path ...string) func(*bbolt.Tx) error {
	return func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte(path[0]))
		for _, p := range path[1:] {
			b = b.Bucket([]byte(p))
		}
		var keys [][]byte
		i := 0
		err := b.ForEach(func(key, v []byte) error {
			if v != nil && i%k == 0 {
				keys = append(keys, bytes.Clone(key))
			}
			i++
			return nil
		})
		for _, key := range keys {
			if err == nil {
				err = b.Delete(key)
			}
		}
		return err
	}
}

// seedFile is a file bbolt wrote, for the tests and the fuzz seeds.
type seedFile struct {
	name string
	data []byte
}

// seedFiles returns files that bbolt wrote, together covering inline
// and nested buckets, branch and overflow pages, a freelist with pages
// on it, an unsynced freelist, and a launch log's shape.
func seedFiles(tb testing.TB) []seedFile {
	return []seedFile{
		{"new", boltFile(tb, 1024, false)},
		{"inline buckets", boltFile(tb, 1024, false, fill("a", 3, 8, "small"), fill("b", 2, 4, "tiny"))},
		{"branches, overflow, nested, freed", boltFile(tb, 1024, false,
			fill("k", 120, 40, "big"),
			fill("o", 2, 3000, "big"),
			fill("n", 60, 20, "outer", "inner"),
			fill("s", 2, 8, "outer", "small"),
			drop(3, "big"),
		)},
		{"unsynced freelist", boltFile(tb, 1024, true, fill("k", 60, 40, "big"), drop(2, "big"))},
		{"launch log", boltFile(tb, 0, false,
			fill("launch", 40, 200, "launches"),
			fill("gen", 5, 8, "generators"),
			fill("mark", 5, 12, "highwater"),
			drop(7, "launches"),
		)},
	}
}

// damaged returns variants of a file bbolt wrote: bytes flipped, a page
// cleared, truncated, its newer meta page damaged.
func damaged(data []byte, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 7))
	ps := int(binary.NativeEndian.Uint32(data[24:]))
	var out [][]byte
	for range 3 {
		d := bytes.Clone(data)
		for range 1 + r.IntN(4) {
			d[2*ps+r.IntN(len(d)-2*ps)] ^= byte(1 + r.IntN(255))
		}
		out = append(out, d)
	}
	d := bytes.Clone(data)
	clear(d[len(d)-ps:])
	out = append(out, d, data[:len(data)-ps], data[:ps+100])
	d = bytes.Clone(data)
	d[ps+headerSize+48] ^= 1 // meta 1's txid: its checksum fails
	out = append(out, d)
	return out
}

// boltVerdict opens a copy of data with bbolt, read-only (a write would
// change the file), and runs Tx.Check, which loads the freelist. It
// returns nil if both pass, and an error if bbolt fails, panics or takes
// more than 10 seconds.
func boltVerdict(tb testing.TB, data []byte) error {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "verdict.db")
	require.NoError(tb, os.WriteFile(path, data, 0o600))
	done := make(chan error, 1)
	go func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		var db *bbolt.DB
		defer func() {
			if r := recover(); r != nil {
				if db != nil {
					func() {
						defer func() { _ = recover() }()
						_ = db.Close()
					}()
				}
				done <- fmt.Errorf("bbolt panicked: %v", r)
			}
		}()
		var err error
		db, err = bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			done <- fmt.Errorf("bbolt.Open: %w", err)
			return
		}
		err = db.View(func(tx *bbolt.Tx) error {
			var errs []error
			for err := range tx.Check() {
				errs = append(errs, err)
			}
			return errors.Join(errs...)
		})
		if cerr := db.Close(); err == nil && cerr != nil {
			err = cerr
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		return errors.New("bbolt did not finish within 10s")
	}
}

// inspection is the result of a walk that collects every finding.
type inspection struct {
	findings []finding
	// safe says that bbolt may be handed the file: the walk reached
	// everything bbolt would read, found nothing on which bbolt could
	// fault or recurse forever, and bbolt will not rebuild the freelist
	// (bbolt does that in a goroutine of its own, where a panic on a
	// damaged page would end the process).
	safe bool
}

// inspect walks data as File walks a file, reading each page into a
// buffer (Bytes slices data instead), and collects every finding.
func inspect(data []byte) inspection {
	c := checker{r: bytes.NewReader(data), size: uint64(len(data)), all: true}
	c.check()
	in := inspection{findings: c.findings, safe: true}
	for _, f := range c.findings {
		if f.kind == hazard {
			in.safe = false
		}
	}
	if c.freelist == noFreelist && len(c.findings) > 0 {
		in.safe = false
	}
	return in
}

// first returns the first finding of kind k, or nil.
func (in inspection) first(k kind) error {
	for _, f := range in.findings {
		if f.kind == k {
			return f.err
		}
	}
	return nil
}

func (in inspection) String() string {
	var b strings.Builder
	for _, f := range in.findings {
		fmt.Fprintf(&b, "\n\t%s: %v", [...]string{"?", "structural", "precaution", "hazard"}[f.kind], f.err)
	}
	return b.String()
}

// Helpers that damage a file at a named place.

// meta returns the offset of the meta page bbolt uses, and the page size.
func metaOf(tb testing.TB, data []byte) (off, pageSize uint64) {
	tb.Helper()
	c := checker{r: bytes.NewReader(data), size: uint64(len(data))}
	ps, ok, err := c.findPageSize()
	require.NoError(tb, err)
	require.True(tb, ok)
	m0, _, err := c.readMeta(0, &c.metas[0])
	require.NoError(tb, err)
	m1, ok1, err := c.readMeta(ps, &c.metas[1])
	require.NoError(tb, err)
	if ok1 && m1.txid > m0.txid {
		return ps, ps
	}
	return 0, ps
}

// setMeta sets the u64 at offset field of the meta page at off and
// updates its checksum.
func setMeta(data []byte, off, field, v uint64) {
	b := data[off+headerSize : off+headerSize+metaSize]
	binary.NativeEndian.PutUint64(b[field:], v)
	h := fnv.New64a()
	h.Write(b[:56])
	binary.NativeEndian.PutUint64(b[56:], h.Sum64())
}

// Field offsets in a meta page, after the page header.
const (
	metaRoot     = 16
	metaFreelist = 32
	metaHWM      = 40
)

func u64(data []byte, off uint64) uint64 { return binary.NativeEndian.Uint64(data[off:]) }
