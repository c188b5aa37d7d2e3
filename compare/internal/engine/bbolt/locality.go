package bbolt

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"

	bolt "go.etcd.io/bbolt"
)

// Load is one bbolt load: every key of a key set inserted in generation
// order into a fresh file, BatchSize inserts per transaction.
type Load struct {
	// FillPercent is the bucket's fill setting during the load.
	FillPercent float64 `json:"fill_percent"`
	// Seconds is the wall time of all inserts and commits.
	Seconds float64 `json:"seconds"`
	// InsertsPerSecond is keys over Seconds.
	InsertsPerSecond float64 `json:"inserts_per_second"`
	// Splits is bbolt's count of node splits (TxStats.Split).
	Splits int64 `json:"splits"`
	// PagesWritten is pages allocated and written by the commits
	// (TxStats.PageCount) plus one meta page per commit.
	PagesWritten int64 `json:"pages_written"`
	// PagesPer1000 is PagesWritten per 1,000 inserts: the headline
	// locality figure.
	PagesPer1000 float64 `json:"pages_written_per_1000"`
	// SplitsPer1000 is Splits per 1,000 inserts.
	SplitsPer1000 float64 `json:"splits_per_1000"`
	// Writes is bbolt's count of write calls (TxStats.Write).
	Writes int64 `json:"writes"`
	// Commits is the number of write transactions.
	Commits int `json:"commits"`
	// LeafPages, BranchPages and Depth describe the final tree.
	LeafPages   int `json:"leaf_pages"`
	BranchPages int `json:"branch_pages"`
	Depth       int `json:"depth"`
	// LeafFill is the used fraction of the leaf pages' bytes.
	LeafFill float64 `json:"leaf_fill"`
	// Keys is the number of keys in the bucket afterwards (fewer than the
	// inserts only if keys repeated).
	Keys int `json:"keys"`
	// DataBytes is the size of the pages the file holds (bbolt's
	// Tx.Size: live and free pages), and BytesPerKey that size over Keys.
	DataBytes   int64   `json:"data_bytes"`
	BytesPerKey float64 `json:"bytes_per_key"`
	// FileBytes is the size of the file on disk, which bbolt grows in
	// steps (doubling, then 16 MiB at a time).
	FileBytes int64 `json:"file_bytes"`
}

var bucketName = []byte("ids")

// Config says how to load keys into bbolt.
type Config struct {
	Dir       string
	Fill      float64
	Batch     int
	Value     []byte
	Sync      bool
	PageSize  int
	OnCommit  func(done int)
	FileLabel string
}

// load inserts keys in order into a new bbolt file in cfg.dir, measures
// the load, and removes the file.
func Run(k engine.KeySet, cfg Config) (Load, error) {
	l := Load{FillPercent: cfg.Fill}
	path := filepath.Join(cfg.Dir, cfg.FileLabel+".db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:  time.Second,
		NoSync:   !cfg.Sync,
		PageSize: cfg.PageSize,
	})
	if err != nil {
		return l, fmt.Errorf("compare: open %s: %w", path, err)
	}
	defer os.Remove(path)
	defer db.Close()

	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket(bucketName)
		return err
	}); err != nil {
		return l, fmt.Errorf("compare: create bucket: %w", err)
	}
	before := db.Stats()

	n := k.N()
	start := time.Now()
	for lo := 0; lo < n; lo += cfg.Batch {
		hi := min(lo+cfg.Batch, n)
		err := db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketName)
			b.FillPercent = cfg.Fill
			for i := lo; i < hi; i++ {
				if err := b.Put(k.At(i), cfg.Value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return l, fmt.Errorf("compare: insert keys %d..%d: %w", lo, hi-1, err)
		}
		l.Commits++
		if cfg.OnCommit != nil {
			cfg.OnCommit(hi)
		}
	}
	elapsed := time.Since(start)
	after := db.Stats()
	diff := after.TxStats.Sub(&before.TxStats)

	l.Seconds = elapsed.Seconds()
	if elapsed > 0 {
		l.InsertsPerSecond = float64(n) / elapsed.Seconds()
	}
	l.Splits = diff.GetSplit()
	l.PagesWritten = diff.GetPageCount() + int64(l.Commits)
	l.Writes = diff.GetWrite()
	if n > 0 {
		l.PagesPer1000 = float64(l.PagesWritten) * 1000 / float64(n)
		l.SplitsPer1000 = float64(l.Splits) * 1000 / float64(n)
	}

	if err := db.View(func(tx *bolt.Tx) error {
		s := tx.Bucket(bucketName).Stats()
		l.LeafPages = s.LeafPageN
		l.BranchPages = s.BranchPageN
		l.Depth = s.Depth
		l.Keys = s.KeyN
		l.DataBytes = tx.Size()
		if s.LeafAlloc > 0 {
			l.LeafFill = float64(s.LeafInuse) / float64(s.LeafAlloc)
		}
		return nil
	}); err != nil {
		return l, fmt.Errorf("compare: bucket stats: %w", err)
	}
	if err := db.Close(); err != nil {
		return l, fmt.Errorf("compare: close %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return l, fmt.Errorf("compare: %w", err)
	}
	l.FileBytes = fi.Size()
	if l.Keys > 0 {
		l.BytesPerKey = float64(l.DataBytes) / float64(l.Keys)
	}
	return l, nil
}
