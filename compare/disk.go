package compare

import (
	"fmt"
	"math"
	"os"

	"github.com/idkit/idkit/compare/internal/engine"
)

// Disk is what a run needs of the local disk, estimated from its options
// and each scheme's design before the run starts. Every load's file
// (bbolt, or SQLite with its WAL) is deleted when the load ends, so the
// run holds one at a time: Peak is the largest. Written counts every byte
// the loads write to those files, most of which never reaches the device
// when fsync is off, since the file is gone before the kernel flushes it.
type Disk struct {
	Peak    int64
	Written int64
}

// String says the estimate in the words the progress line uses.
func (d Disk) String() string {
	return fmt.Sprintf("about %s of disk at once (the largest load's file; each is deleted after its load), %s written in all",
		engine.BytesText(d.Peak), engine.BytesText(d.Written))
}

// bboltGrowStep is the size by which bbolt grows a file past 16 MiB
// (bolt.DefaultAllocSize); below it the file doubles.
const bboltGrowStep = 16 << 20

// EstimateDisk returns what a run with opts needs of the local disk. The
// model counts leaf pages from the key, value and element sizes and the
// fill a load reaches: the bucket's fill setting for keys in order, and
// what random inserts leave (about two thirds at fill 0.5, three eighths
// at 0.9) for keys in no order. A load of keys in order writes each leaf
// about once; a load of random keys rewrites, at each commit, every leaf
// its batch touches. Checked against measured runs in the tests: within
// a factor of two.
func EstimateDisk(opts Options) (Disk, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Disk{}, err
	}
	page := o.PageSize
	if page == 0 {
		page = os.Getpagesize()
	}
	runs := 1
	if o.Writers > 1 {
		runs = 2
	}
	var d Disk
	for _, s := range o.Schemes {
		random := !s.Design().Ordered
		entry := float64(s.KeyLen + o.ValueSize + 16) // bbolt's leaf element header is 16 bytes
		for _, fill := range o.Fills {
			eff := fill
			if random {
				eff = 0.68
				if fill > 0.5 {
					eff = 0.37
				}
			}
			leaves := float64(o.N) * entry / float64(page) / eff
			d.Written += int64(runs) * int64(pagesWritten(leaves, o.N, o.BatchSize, random)*float64(page))
			d.Peak = max(d.Peak, bboltFileSize(int64(leaves*1.15*float64(page))))
		}
		if !o.NoSQLite {
			// SQLite's pages end about 88% full whatever the order; each
			// checkpoint interval writes the pages it touched to the WAL,
			// and the checkpoint writes them again into the file.
			leaves := float64(o.N) * entry / float64(page) / 0.88
			frames := pagesWritten(leaves, o.N, o.CheckpointEvery, random)
			d.Written += int64(runs) * int64(2*frames*float64(page))
			wal := float64(min(o.CheckpointEvery, o.N)) * float64(page) * 1.2
			if !random {
				wal = float64(o.CheckpointEvery) * entry * 2
			}
			d.Peak = max(d.Peak, int64(leaves*1.1*float64(page)+wal))
		}
	}
	return d, nil
}

// pagesWritten estimates the pages a load of n keys in commits of batch
// writes into a tree that ends with leaves leaf pages.
func pagesWritten(leaves float64, n, batch int, random bool) float64 {
	commits := math.Ceil(float64(n) / float64(batch))
	if !random {
		return leaves*1.1 + commits*2
	}
	// The tree grows evenly; a batch of b random keys over L leaves
	// touches L(1 - e^(-b/L)) of them, each rewritten with its share of
	// branch pages.
	var sum float64
	for i := 1.0; i <= commits; i++ {
		l := max(1, leaves*i/commits)
		sum += l * (1 - math.Exp(-float64(batch)/l))
	}
	return sum*1.2 + commits*2
}

// bboltFileSize is the size bbolt gives a file that must hold need bytes.
func bboltFileSize(need int64) int64 {
	if need <= bboltGrowStep {
		size := int64(32 << 10)
		for size < need {
			size *= 2
		}
		return size
	}
	return (need + bboltGrowStep - 1) / bboltGrowStep * bboltGrowStep
}
