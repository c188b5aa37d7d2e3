package pebble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Engine loads each key set into a fresh Pebble store (CockroachDB's
// LSM tree, pure Go, embedded) in a directory of the run's, and removes it
// after the load. An LSM tree writes every insert twice at once, to its
// log and its memtable, then flushes full memtables as sorted tables into
// level 0 and merges them down the levels: keys that arrive in order make
// tables that overlap nothing below them, which a compaction moves down a
// level without rewriting them, while keys in no order overlap every table
// below and are rewritten at each level they pass.
//
// The store has Pebble's defaults (pebbleOptions): a 4 MiB memtable, a
// level-0 compaction at 4 sublevels, 64 MiB in Lbase, one compaction at a
// time. After each batch that filled a memtable the load waits until the
// flush and every compaction it caused have ended (settle), as a store
// whose compactions keep up with its writers: the tree then depends on
// the keys alone, not on how the writer and the compactions interleaved
// on a busy machine, so its counts repeat from run to run as the
// B-trees' do. A writer that outruns the compactions leaves them fewer,
// larger merges, and random keys less write amplification than settled
// (BENCHMARKS.md has both); keys in order write the same either way.
type Engine struct {
	dir  string
	sync bool
}

// Open returns the Pebble engine of a run, whose trees go in dir (in
// memory unless sync is set); it never fails.
func Open(dir string, sync bool) (engine.Engine, error) { return &Engine{dir: dir, sync: sync}, nil }

// The bloom filter of every level, and how long and how often settle
// waits for the background work to end.
const (
	pebbleBloomBits     = 10
	pebbleSettleBound   = 10 * time.Minute
	pebbleSettleRecheck = time.Millisecond
)

// pebbleOptions are the options of every store the engine opens: Pebble's
// defaults, with a bloom filter of pebbleBloomBits bits per key on every
// level (as CockroachDB sets it: the lookups' figures count the tables it
// rules out), no compression (the run's payload is one pattern, which any
// compressor removes, leaving the keys alone to compare), and no
// compactions triggered by reads (the reads measured must not change the
// tree). With sync the store is a directory on disk whose every commit is
// synced; without, it lives in Pebble's in-memory file system, as the
// bbolt loads skip fsync: the loads then measure the tree and not the
// shared disk, nor the system calls of Pebble's small reads and writes,
// which took half of a load's time on the project's 2-core machine. The
// bytes and blocks counted are the same either way. events hears every
// flush and compaction end.
func pebbleOptions(sync bool, events *pebbleEvents) *pebble.Options {
	o := &pebble.Options{Logger: pebbleLogger{}, EventListener: events.listener()}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(pebbleBloomBits)
		o.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	o.Experimental.ReadSamplingMultiplier = -1
	if !sync {
		o.FS = heldMemFS{vfs.NewMem()}
	}
	return o
}

// heldMemFS is Pebble's in-memory file system whose new files hold their
// writes (heldFile). An in-memory file grows its one slice by a quarter
// at each write past its end, which copied every table about four times
// over: an eighth of the CPU time of the default run's Pebble loads.
type heldMemFS struct{ vfs.FS }

func (fs heldMemFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil {
		return nil, err
	}
	return &heldFile{File: f}, nil
}

// heldBufs are the buffers of heldFiles, reused from file to file.
var heldBufs = sync.Pool{New: func() any { return new([]byte) }}

// heldFile holds the writes to an in-memory file in a buffer that
// doubles when full, and writes them to the file at once when it is
// closed or read through. Syncs need not write them: no other reader
// opens a file Pebble still writes, and an in-memory file's syncs do
// nothing.
type heldFile struct {
	vfs.File
	held *[]byte
}

func (f *heldFile) Write(p []byte) (int, error) {
	if f.held == nil {
		f.held = heldBufs.Get().(*[]byte)
	}
	b := *f.held
	if len(b)+len(p) > cap(b) {
		b = append(make([]byte, 0, 2*cap(b)+len(p)), b...)
	}
	*f.held = append(b, p...)
	return len(p), nil
}

// release writes the held writes to the file.
func (f *heldFile) release() error {
	if f.held == nil {
		return nil
	}
	_, err := f.File.Write(*f.held)
	*f.held = (*f.held)[:0]
	heldBufs.Put(f.held)
	f.held = nil
	return err
}

func (f *heldFile) Close() error { return errors.Join(f.release(), f.File.Close()) }

func (f *heldFile) Read(p []byte) (int, error) {
	if err := f.release(); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f *heldFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.release(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *heldFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.release(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *heldFile) Stat() (vfs.FileInfo, error) {
	if err := f.release(); err != nil {
		return nil, err
	}
	return f.File.Stat()
}

func (e *Engine) Info() engine.Info {
	return engine.Info{
		Name: engine.Pebble, Version: "Pebble" + engine.Driver("github.com/cockroachdb/pebble/v2"),
		Settings: fmt.Sprintf("Pebble's defaults (4 MiB memtable, Lbase 64 MiB, one compaction at a time) with bloom filters of %d bits/key on every level and no compression; settled after each flush; %s",
			pebbleBloomBits, map[bool]string{true: "on disk, fsync on", false: "in memory (vfs.NewMem), as fsync is off"}[e.sync]),
	}
}

func (e *Engine) Close(context.Context) error { return nil }

// pebbleLogger keeps Pebble's log lines ("Found 0 WALs") out of the
// run's output; errors reach the load through pebbleEvents.
type pebbleLogger struct{}

func (pebbleLogger) Infof(string, ...any)  {}
func (pebbleLogger) Errorf(string, ...any) {}
func (pebbleLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("compare: pebble: "+format, args...))
}

// pebbleEvents wakes a load that waits for the tree to settle at each
// flush or compaction end and each load of table statistics, and keeps
// Pebble's first background error.
type pebbleEvents struct {
	wake chan struct{}
	mu   sync.Mutex
	err  error
}

func newPebbleEvents() *pebbleEvents { return &pebbleEvents{wake: make(chan struct{}, 1)} }

func (ev *pebbleEvents) listener() *pebble.EventListener {
	poke := func() {
		select {
		case ev.wake <- struct{}{}:
		default:
		}
	}
	return &pebble.EventListener{
		FlushEnd:         func(pebble.FlushInfo) { poke() },
		CompactionEnd:    func(pebble.CompactionInfo) { poke() },
		TableStatsLoaded: func(pebble.TableStatsInfo) { poke() },
		BackgroundError: func(err error) {
			ev.mu.Lock()
			if ev.err == nil {
				ev.err = err
			}
			ev.mu.Unlock()
			poke()
		},
	}
}

func (ev *pebbleEvents) failed() error {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.err
}

// lsm is one open store and what the load knows of its background work.
type lsm struct {
	db      *pebble.DB
	events  *pebbleEvents
	flushes int64        // flushes settled so far
	least   [2][]byte    // the least key and the (d+1)th least, from readAll
	rows    int64        // rows readAll read
	read    func() error // waits for readAll's read to end
}

// settle waits until no flush or compaction runs or waits to run, and,
// with stats, until Pebble has read the statistics of every table (it
// schedules the compactions that drop deleted data from them). A
// compaction that ends schedules the next a moment after it leaves the
// counts, so a quiet tree is confirmed once more, with the same count of
// compactions, after schedule has made Pebble pick what it would.
func (s *lsm) settle(ctx context.Context, stats bool) error {
	bound := time.NewTimer(pebbleSettleBound)
	defer bound.Stop()
	type counts struct{ flushes, compactions int64 }
	var confirm *counts
	for {
		if err := s.events.failed(); err != nil {
			return fmt.Errorf("background work: %w", err)
		}
		m := s.db.Metrics()
		quiet := m.Flush.NumInProgress == 0 && m.Compact.NumInProgress == 0
		if quiet {
			waiting, _ := s.db.GetWaitingCompaction()
			quiet = !waiting
		}
		if quiet && stats {
			loaded, err := s.statsLoaded()
			if err != nil {
				return err
			}
			quiet = loaded
		}
		now := counts{m.Flush.Count, m.Compact.Count}
		switch {
		case !quiet:
			confirm = nil
		case confirm != nil && *confirm == now:
			s.flushes = m.Flush.Count
			return nil
		default:
			confirm = &now
			if err := s.schedule(); err != nil {
				return err
			}
			continue
		}
		recheck := time.NewTimer(pebbleSettleRecheck)
		select {
		case <-ctx.Done():
			recheck.Stop()
			return ctx.Err()
		case <-bound.C:
			recheck.Stop()
			return fmt.Errorf("flushes and compactions still running after %v", pebbleSettleBound)
		case <-s.events.wake:
		case <-recheck.C:
		}
		recheck.Stop()
	}
}

// schedule makes Pebble pick the compaction the tree needs now and start
// it, or queue it when another still holds the one compaction slot, as a
// compaction that ends does a moment after it leaves the counts: closing
// the store's only snapshot does so at once.
func (s *lsm) schedule() error {
	return s.db.NewSnapshot().Close()
}

// statsLoaded says whether Pebble has read the statistics of every table
// of the tree (a table without them reports no entries).
func (s *lsm) statsLoaded() (bool, error) {
	levels, err := s.db.SSTables()
	if err != nil {
		return false, err
	}
	for _, l := range levels {
		for _, t := range l {
			if t.TableStats.NumEntries+t.TableStats.NumDeletions == 0 {
				return false, nil
			}
		}
	}
	return true, nil
}

// busy says whether the last commit started background work: a flush
// running or done since the last settle, or a compaction.
func (s *lsm) busy() bool {
	m := s.db.Metrics()
	return m.Flush.NumInProgress > 0 || m.Flush.Count != s.flushes || m.Compact.NumInProgress > 0
}

// lsmWrites are the bytes a store has written: to its log, and to tables
// by flushes and by compactions, and those moved down a level unwritten.
type lsmWrites struct {
	wal, flushed, compacted, moved uint64
}

func writesOf(m *pebble.Metrics) lsmWrites {
	w := lsmWrites{wal: m.WAL.BytesWritten}
	for _, l := range m.Levels {
		w.flushed += l.TableBytesFlushed
		w.compacted += l.TableBytesCompacted
		w.moved += l.TableBytesMoved
	}
	return w
}

func (w lsmWrites) sub(v lsmWrites) lsmWrites {
	return lsmWrites{w.wal - v.wal, w.flushed - v.flushed, w.compacted - v.compacted, w.moved - v.moved}
}

// total is every byte written to the disk: the log, flushes and
// compactions.
func (w lsmWrites) total() uint64 { return w.wal + w.flushed + w.compacted }

// liveBytes is the size of the tree's tables.
func liveBytes(m *pebble.Metrics) int64 {
	var n int64
	for _, l := range m.Levels {
		n += l.TablesSize
	}
	return n
}

// blockAccesses is the count of block cache lookups, hits and misses: the
// blocks (index, filter, data) that reads touched.
func blockAccesses(m *pebble.Metrics) int64 { return m.BlockCache.Hits + m.BlockCache.Misses }

func (e *Engine) Load(ctx context.Context, l engine.Load) (engine.Figures, error) {
	out := engine.Figures{Engine: engine.Pebble, ColumnType: fmt.Sprintf("%d-byte key", l.Keys.Len), Metrics: map[string]float64{}}
	dir := filepath.Join(e.dir, l.Table+".pebble")
	fail := func(what string, err error) (engine.Figures, error) {
		return out, fmt.Errorf("compare: pebble: %s %s: %w", what, dir, err)
	}
	events := newPebbleEvents()
	db, err := pebble.Open(dir, pebbleOptions(e.sync, events))
	if err != nil {
		return fail("open", err)
	}
	defer os.RemoveAll(dir)
	open := true
	defer func() {
		if open {
			db.Close()
		}
	}()
	s := &lsm{db: db, events: events}
	write := pebble.NoSync
	if e.sync {
		write = pebble.Sync
	}
	n := l.Keys.N()
	start := time.Now()
	insert := func(lo, hi int) error {
		b := db.NewBatch()
		for i := lo; i < hi; i++ {
			if err := b.Set(l.Keys.At(i), l.Value, nil); err != nil {
				b.Close()
				return err
			}
		}
		if err := b.Commit(write); err != nil {
			b.Close()
			return err
		}
		if err := b.Close(); err != nil {
			return err
		}
		if s.busy() {
			return s.settle(ctx, false)
		}
		return ctx.Err()
	}
	if _, err := l.Batches(insert, nil); err != nil {
		return fail("load", err)
	}
	if err := db.Flush(); err != nil {
		return fail("flush", err)
	}
	if err := s.settle(ctx, false); err != nil {
		return fail("settle", err)
	}
	spent := time.Since(start)
	m := db.Metrics()
	w := writesOf(m)
	m2 := out.Metrics
	m2["inserts_per_second"] = engine.Rate(n, spent)
	m2["bytes_in"] = float64(w.wal)
	m2["bytes_flushed"] = float64(w.flushed)
	m2["bytes_compacted"] = float64(w.compacted)
	m2["bytes_moved"] = float64(w.moved)
	if w.wal > 0 {
		m2["write_amp"] = float64(w.flushed+w.compacted) / float64(w.wal)
		m2["moved_per_byte_in"] = float64(w.moved) / float64(w.wal)
	}
	live := liveBytes(m)
	m2["table_bytes"] = float64(live)
	m2["bytes_per_key"] = engine.PerKey(float64(live), n)
	if rows := float64(n) * float64(l.Keys.Len+len(l.Value)); rows > 0 {
		m2["space_amp"] = float64(live) / rows
	}
	m2["read_amp"] = float64(m.ReadAmp())
	m2["tables"] = float64(m.Total().TablesCount)
	if err := e.reads(ctx, s, l, m2); err != nil {
		return fail("reads", err)
	}
	// Every row is read back while the expiry compacts the tree, and
	// before the store closes.
	s.readAll(n / engine.ExpireShare)
	defer s.read()
	if err := e.expire(ctx, s, l, write, m2); err != nil {
		return fail("expiry", err)
	}
	if err := s.read(); err != nil {
		return fail("read every row", err)
	}
	m2["rows"] = float64(s.rows)
	open = false
	if err := db.Close(); err != nil {
		return fail("close", err)
	}
	return out, nil
}

// reads measures the blocks a point lookup (Get)
// touches and the tables its bloom filters rule out, over keys spread
// over the table and over its newest 1%, and the blocks a range scan
// through the key that reads the newest 1% touches.
func (e *Engine) reads(ctx context.Context, s *lsm, l engine.Load, m map[string]float64) error {
	n := l.Keys.N()
	spread, newest := engine.LookupKeys(n)
	for _, q := range []struct {
		key  string
		keys []int
	}{{"lookup", spread}, {"lookup_newest", newest}} {
		before := s.db.Metrics()
		for _, i := range q.keys {
			v, closer, err := s.db.Get(l.Keys.At(i))
			if err != nil {
				return fmt.Errorf("point lookup of key %d: %w", i, err)
			}
			ok := bytes.Equal(v, l.Value)
			if err := closer.Close(); err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("point lookup of key %d read another value", i)
			}
		}
		after := s.db.Metrics()
		k := float64(len(q.keys))
		m[q.key+"_blocks"] = float64(blockAccesses(after)-blockAccesses(before)) / k
		m[q.key+"_filter_hits"] = float64(after.Filter.Hits-before.Filter.Hits) / k
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	lowest := engine.LowestNewest(l)
	blocks, rows, _, err := scanBlocks(s.db, l.Keys.At(lowest), nil)
	if err != nil {
		return fmt.Errorf("range scan of the newest rows: %w", err)
	}
	m["newest_scan_blocks"] = float64(blocks)
	m["newest_scan_rows"] = float64(rows) / float64(n-engine.NewestStart(n))
	return nil
}

// readAll starts reading every row of the tree as it is now in key
// order, on a goroutine of its own so that the tree may change meanwhile,
// and sets s.read to wait for the end of the read. The read counts the
// rows in s.rows, and keeps the least key and the (d+1)th least in
// s.least: with as many rows as keys loaded (no key twice), the d least
// keys lie from the one up to the other.
func (s *lsm) readAll(d int) {
	it, err := s.db.NewIter(nil)
	done := make(chan struct{})
	s.read = sync.OnceValue(func() error {
		<-done
		return err
	})
	s.rows, s.least = 0, [2][]byte{}
	go func() {
		defer close(done)
		if err != nil {
			return
		}
		for ok := it.First(); ok; ok = it.Next() {
			switch s.rows {
			case 0:
				s.least[0] = slices.Clone(it.Key())
			case int64(d):
				s.least[1] = slices.Clone(it.Key())
			}
			s.rows++
		}
		err = it.Close()
	}()
}

// scanBlocks reads every row from lower up to upper (nil: the end) and
// returns the blocks it touched, the rows it returned, and the deleted
// entries it stepped over (tombstones and the rows they hide).
func scanBlocks(db *pebble.DB, lower, upper []byte) (blocks, rows, skipped int64, err error) {
	before := db.Metrics()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return 0, 0, 0, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		rows++
	}
	st := it.Stats().InternalStats
	if err := it.Close(); err != nil {
		return 0, 0, 0, err
	}
	after := db.Metrics()
	return blockAccesses(after) - blockAccesses(before), rows, int64(st.PointCount) - rows + int64(st.PointsCoveredByRangeTombstones), nil
}

// 1 / expireShare of the rows

// expire deletes the oldest tenth of the rows the way the keys allow and
// measures what reclaiming their space costs, from a tree compacted into
// its last level, where a store that has run a while keeps its oldest
// rows (that compaction is not counted). Keys that sort rows by age
// (l.byAge: they lead with time, or count up from one sequence) delete
// the tenth with the least keys by one range deletion, which an
// application issues from a time alone; other keys delete the first
// tenth in generation order row by row, in batches. The store then
// flushes and settles (its own compactions, among them the delete-only
// ones that drop whole tables under a range deletion); when its tables
// have not shrunk by reclaimedShare of the expired share by then, as
// when tombstones wait in upper levels for more writes to push them down,
// a manual compaction of the expired keys' range reclaims the space. The
// figures are the bytes written and the time from the deletion to
// reclaimed, and the blocks and deleted entries a scan over the expired
// keys' range meets before the manual compaction.
func (e *Engine) expire(ctx context.Context, s *lsm, l engine.Load, write *pebble.WriteOptions, m map[string]float64) error {
	n := l.Keys.N()
	d := n / engine.ExpireShare
	if d == 0 {
		return nil
	}
	// The oldest rows of a store that has run a while lie in its last
	// level: the tree is compacted there first, outside the figures.
	if err := s.db.Compact(ctx, []byte{}, bytes.Repeat([]byte{0xff}, l.Keys.Len+1), false); err != nil {
		return fmt.Errorf("compact the tree into its last level: %w", err)
	}
	if err := s.settle(ctx, true); err != nil {
		return err
	}
	if err := s.read(); err != nil { // s.rows and s.least
		return fmt.Errorf("read every row: %w", err)
	}
	before := s.db.Metrics()
	w0, live0 := writesOf(before), liveBytes(before)
	var lower, upper []byte // the expired keys' range, upper exclusive
	start := time.Now()
	if l.ByAge {
		lower, upper = s.least[0], s.least[1]
		if s.rows != int64(n) { // a key loaded twice: the tree holds fewer
			sorted := engine.SortedKeys(l)
			lower, upper = sorted[0], sorted[d]
		}
		if err := s.db.DeleteRange(lower, upper, write); err != nil {
			return fmt.Errorf("range deletion: %w", err)
		}
		m["expiry_range"] = 1
	} else {
		lower, upper = l.Keys.At(0), l.Keys.At(0)
		for lo := 0; lo < d; lo += l.Batch {
			b := s.db.NewBatch()
			for i := lo; i < min(lo+l.Batch, d); i++ {
				k := l.Keys.At(i)
				if bytes.Compare(k, lower) < 0 {
					lower = k
				}
				if bytes.Compare(k, upper) > 0 {
					upper = k
				}
				if err := b.Delete(k, nil); err != nil {
					b.Close()
					return err
				}
			}
			if err := errors.Join(b.Commit(write), b.Close()); err != nil {
				return fmt.Errorf("delete rows: %w", err)
			}
			if s.busy() {
				if err := s.settle(ctx, true); err != nil {
					return err
				}
			}
		}
		upper = append(slices.Clone(upper), 0) // past the greatest expired key
		m["expiry_range"] = 0
	}
	if err := s.db.Flush(); err != nil {
		return err
	}
	if err := s.settle(ctx, true); err != nil {
		return err
	}
	expiredBytes := float64(live0) * float64(d) / float64(n)
	reclaimed := func() (bool, *pebble.Metrics) {
		mm := s.db.Metrics()
		return float64(live0-liveBytes(mm)) >= engine.ReclaimedShare*expiredBytes, mm
	}
	blocks, _, skipped, err := scanBlocks(s.db, lower, upper)
	if err != nil {
		return fmt.Errorf("scan of the expired range: %w", err)
	}
	m["expiry_scan_blocks"] = float64(blocks)
	m["expiry_scan_skipped"] = float64(skipped)
	m["expiry_manual"] = 0
	done, after := reclaimed()
	m["expiry_reclaimed_auto"] = float64(live0-liveBytes(after)) / expiredBytes
	if !done {
		m["expiry_manual"] = 1
		if err := s.db.Compact(ctx, lower, upper, false); err != nil {
			return fmt.Errorf("manual compaction: %w", err)
		}
		if err := s.settle(ctx, true); err != nil {
			return err
		}
		done, after = reclaimed()
	}
	spent := time.Since(start)
	if !done {
		return fmt.Errorf("the tables hold %s after deleting %d of %d rows from %s and compacting the range", engine.BytesText(liveBytes(after)), d, n, engine.BytesText(live0))
	}
	w := writesOf(after).sub(w0)
	m["expiry_rows"] = float64(d)
	m["expiry_bytes"] = float64(w.total())
	m["expiry_bytes_per_row"] = float64(w.total()) / float64(d)
	m["expiry_seconds"] = spent.Seconds()
	m["expiry_reclaimed"] = float64(live0-liveBytes(after)) / expiredBytes
	// Over the rows' life every tenth expires as this one did: the bytes
	// it wrote, over its rows' share of the log, add to the load's
	// amplification.
	if in := m["bytes_in"]; in > 0 {
		m["lifetime_write_amp"] = m["write_amp"] + float64(w.total())*float64(n)/float64(d)/in
	}
	return nil
}
