package boltcheck

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzVerify holds the checker's verdict to bbolt's own. It is seeded
// with files that bbolt wrote and damaged variants of them; `go test`
// runs the seeds, .ci/fuzz fuzzes.
//
// For every input:
//
//   - Bytes reports the first finding of a walk that collects them all,
//     so the tests below speak for Bytes.
//   - If the checker accepts the file, bbolt opens it and Tx.Check
//     reports nothing. A failure here (or bbolt panicking, faulting or
//     hanging) is a file the checker let through to a bbolt that cannot
//     handle it.
//   - If the checker rejects it with a structural finding, and the walk
//     reached everything bbolt would read, bbolt's Open or Tx.Check fails
//     too: the checker does not reject what bbolt considers sound.
//
// The deliberate exceptions, where bbolt may pass a file the checker
// rejects, are the findings of kind precaution: damage that Tx.Check does
// not look for but that would make bbolt allocate a page still in use or
// beyond the file (a page at the high water mark, overflow past it, a free
// page out of range or that is the freelist or an overflow page itself), a
// root bucket on page 0, an empty branch, branch keys out of order behind
// an empty subtree, element flags or empty keys bbolt never writes, a
// page size the meta page disagrees with, a meta page whose header names
// another page type, and anything wrong inside an
// inline bucket (Tx.Check skips inline buckets). And files with a hazard
// (a cycle, a page or element beyond the file, a page in the tree that is
// not a branch or leaf, a meta page as the freelist, a freelist longer
// than its page, a page whose overflow covers a page the walk read as
// another, a high water mark beyond the file) are not handed to
// bbolt at all: bbolt could fault, recurse forever or grow the file on
// them.
func FuzzVerify(f *testing.F) {
	for i, s := range seedFiles(f) {
		f.Add(s.data)
		for _, d := range damaged(s.data, uint64(i)) {
			f.Add(d)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := inspect(data)
		err := Bytes(data)
		if len(in.findings) == 0 {
			require.NoError(t, err)
			require.NoError(t, boltVerdict(t, data), "boltcheck accepts the file, bbolt does not")
			return
		}
		require.ErrorIs(t, err, ErrStructure)
		require.EqualError(t, err, in.findings[0].err.Error(), "Bytes stops at the first finding")
		if in.safe && in.first(structural) != nil {
			require.Error(t, boltVerdict(t, data), "boltcheck rejects the file as bbolt would, but bbolt accepts it:%v", in)
		}
	})
}
