// Package boltcheck checks the structure of a bbolt file before bbolt
// reads it.
//
// bbolt trusts its file: a damaged page can make it fault, loop, or
// commit garbage (a page claiming gigabytes of overflow grows the file by
// that much; a page listed as both free and in use is overwritten while
// still in use, which could hand out a counter value twice). bbolt's own
// Tx.Check cannot guard against that: it runs only after Open has read the
// meta page and loaded the freelist, and its page walk has no guard
// against a cycle. So this package parses the file itself, without bbolt:
// the meta page bbolt will pick, every page reachable from it, and the
// freelist.
//
// File reads those pages with ReadAt, never the file whole: a check reads
// the pages that the meta page reaches and the freelist lists, and holds a
// byte per page below the high water mark and the pages on one path from
// the root, so its cost grows with the high water mark, not with the
// file's size (a sparse tail past it costs nothing). A file whose high
// water mark lies past MaxSize is refused with ErrTooLarge before its tree
// is read.
//
// It holds to what bbolt's Tx.Check demands (each page reached once, keys
// in order within and across pages, no page both reachable and free, none
// below the high water mark neither) and adds precautions that Tx.Check
// does not take: the pages bbolt may read or allocate lie inside the file
// and below the high water mark, elements lie inside their page, inline
// buckets are well formed, and a cycle ends the walk instead of
// recursing forever. The fuzz test FuzzVerify holds this package to
// bbolt's verdict; boltcheck_test.go names the bbolt version whose source
// it was reviewed against.
//
// The on-disk format (bbolt's, version 2, in the host's byte order):
//
//	page header  id u64 | flags u16 | count u16 | overflow u32
//	meta         magic u32 | version u32 | page size u32 | flags u32 |
//	             root {page u64, sequence u64} | freelist u64 | high water u64 |
//	             txid u64 | checksum u64 (FNV-64a of the fields before it)
//	branch elem  pos u32 | key size u32 | child page u64
//	leaf elem    flags u32 | pos u32 | key size u32 | value size u32
//	freelist     count page ids u64 (count 0xFFFF: the first u64 is the count)
//
// An element's key starts pos bytes after the element; a leaf's value
// follows its key. A leaf element with flag 1 is a bucket: its value is
// {root page u64, sequence u64}, followed by an inline leaf page when the
// root page is 0.
package boltcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

var (
	// ErrStructure is the error that every rejection wraps.
	ErrStructure = errors.New("bad structure")
	// ErrTooLarge is the rejection of a file that needs more than
	// MaxSize bytes checked. It wraps ErrStructure.
	ErrTooLarge = fmt.Errorf("%w: too large", ErrStructure)
)

// MaxSize bounds the bytes a check reads: the pages below a file's high
// water mark, where every page bbolt uses or may hand out lies. A launch
// log holds kilobytes to megabytes; 1 GiB leaves room for any of them
// and bounds the time and memory of a check of a damaged one.
const MaxSize = 1 << 30

// Format constants, from bbolt's internal/common (types.go, page.go,
// meta.go, bucket.go).
const (
	magic          = 0xED0CDAED // common.Magic
	version        = 2          // common.Version
	branchFlag     = 0x01       // common.BranchPageFlag
	leafFlag       = 0x02       // common.LeafPageFlag
	metaFlag       = 0x04       // common.MetaPageFlag
	freelistFlag   = 0x10       // common.FreelistPageFlag
	bucketElemFlag = 0x01       // common.BucketLeafFlag
	headerSize     = 16         // common.PageHeaderSize
	elemSize       = 16         // common.BranchPageElementSize, common.LeafPageElementSize
	metaSize       = 64         // the fields of common.Meta, checksum included
	bucketSize     = 16         // common.BucketHeaderSize
	noFreelist     = ^uint64(0) // common.PgidNoFreelist
)

// Limits of this package, not of bbolt.
const (
	minPageSize = 512
	maxPageSize = 1 << 24 // bbolt looks for the second meta page up to here
	maxDepth    = 64      // deeper nesting of pages and buckets is rejected
)

// File checks the structure of the locked file f as Bytes does, reading
// only the pages the check needs. An empty file is one bbolt is about to
// create, and passes. An error reading f is returned wrapped.
func File(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	c := checker{r: f, size: uint64(fi.Size())}
	return c.verdict()
}

// Bytes checks that data is a bbolt file whose current tree and freelist
// are consistent. The error wraps ErrStructure and names the first
// problem found.
func Bytes(data []byte) error {
	c := checker{data: data, size: uint64(len(data))}
	return c.verdict()
}

// verdict checks the file and returns the first finding, or the error
// that ended the walk.
func (c *checker) verdict() error {
	c.check()
	switch {
	case c.readErr != nil:
		return c.readErr
	case len(c.findings) > 0:
		return c.findings[0].err
	}
	return nil
}

// kind classifies a finding by what bbolt would make of it.
type kind uint8

const (
	// structural: bbolt's Open or Tx.Check fails on the file as well.
	structural kind = iota + 1
	// precaution: bbolt may open the file and pass Tx.Check, but the
	// finding is unsafe or is damage that Tx.Check does not look for.
	precaution
	// hazard: the walk cannot go past the finding (a cycle, a page or
	// element beyond the file), so the checker cannot vouch for the rest
	// of the file; bbolt might fault, recurse forever or allocate without
	// bound on it.
	hazard
)

type finding struct {
	kind kind
	err  error
}

// errStop ends a walk that collects all findings at one it cannot walk
// past.
var errStop = errors.New("walk stopped")

// pageState says how the walk reached a page.
type pageState uint8

const (
	unseen       pageState = iota
	metaPage               // page 0 or 1
	nodePage               // the first page of a branch or leaf
	overflow               // a later page of a branch, leaf or freelist
	freelistHead           // the first page of the freelist
	listed                 // listed free by the freelist
)

// span is a page and its overflow, on the path from the root.
type span struct{ first, last uint64 }

// checker walks one file. With all set it records every finding it can
// reach instead of stopping at the first one (for the tests, which compare
// its findings with bbolt's verdict).
type checker struct {
	r        io.ReaderAt // the file, or
	data     []byte      // the file in memory
	size     uint64      // bytes in the file
	all      bool
	findings []finding
	readErr  error // a failed read, which ends the walk

	pageSize uint64
	pages    uint64 // whole pages in the file
	hwm      uint64 // the meta page's high water mark
	root     uint64 // root page of the root bucket
	freelist uint64 // freelist page, or noFreelist
	metas    [2][headerSize + metaSize]byte
	state    []pageState // by page id, up to the high water mark (MaxSize with all)
	path     []span      // pages from the root to the page being walked
	bufs     [][]byte    // by depth, the page being walked there
}

// report records a finding and returns the error that ends the walk: the
// finding itself unless all findings are wanted; then nil, or errStop for
// a hazard.
func (c *checker) report(k kind, format string, args ...any) error {
	return c.record(k, fmt.Errorf("%w: "+format, append([]any{ErrStructure}, args...)...))
}

// tooLarge records that what the file asks for takes n bytes, more than
// MaxSize, and ends the walk.
func (c *checker) tooLarge(n uint64, format string, args ...any) error {
	err := fmt.Errorf("%w: "+format+", %d bytes, more than MaxSize (%d bytes)", append(append([]any{ErrTooLarge}, args...), n, MaxSize)...)
	return c.record(hazard, err)
}

// record records finding err of kind k and returns the error that ends
// the walk, as report does.
func (c *checker) record(k kind, err error) error {
	c.findings = append(c.findings, finding{k, err})
	switch {
	case !c.all:
		return err
	case k == hazard:
		return errStop
	}
	return nil
}

// fail records a finding that the walk cannot go past, and ends the
// walk.
func (c *checker) fail(k kind, format string, args ...any) error {
	if err := c.report(k, format, args...); err != nil {
		return err
	}
	return errStop
}

// read fills b from offset off of the file, where off+len(b) <= size. A
// failed or short read ends the walk.
func (c *checker) read(b []byte, off uint64) error {
	if c.data != nil {
		copy(b, c.data[off:])
		return nil
	}
	n, err := c.r.ReadAt(b, int64(off))
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	c.readErr = fmt.Errorf("boltcheck: read %d bytes at offset %d: %w", len(b), off, err)
	return errStop
}

// load returns the n bytes at off, the page walked at depth, of which the
// first have are already in its buffer: read into the buffer, or a slice
// of the file in memory.
func (c *checker) load(depth int, off, n, have uint64) ([]byte, error) {
	if c.data != nil {
		return c.data[off : off+n], nil
	}
	b := c.buf(depth, n)
	return b, c.read(b[have:], off+have)
}

// buf returns n bytes to read a page into at depth, keeping the bytes
// already there: the walk holds at most one page per depth, the pages
// from the root to the one being walked.
func (c *checker) buf(depth int, n uint64) []byte {
	for len(c.bufs) <= depth {
		c.bufs = append(c.bufs, nil)
	}
	b := c.bufs[depth]
	if uint64(cap(b)) < n {
		b = append(make([]byte, 0, n), b...)
	}
	c.bufs[depth] = b[:n]
	return c.bufs[depth]
}

// check runs the walk: meta page, tree, freelist, and then the pages that
// none of them reached.
func (c *checker) check() {
	if err := c.meta(); err != nil {
		return
	}
	// Only a walk that collects every finding goes on past the high
	// water mark; page keeps it below MaxSize.
	n := c.hwm
	if c.all {
		n = min(c.pages, MaxSize/c.pageSize)
	}
	c.state = make([]pageState, n)
	c.path = make([]span, 0, 8)
	c.state[0], c.state[1] = metaPage, metaPage
	if err := c.rootBucket(); err != nil {
		return
	}
	if err := c.freelistPage(); err != nil {
		return
	}
	_ = c.unaccounted()
}

// metaFields holds the fields of a meta page that the walk uses.
type metaFields struct{ pageSize, root, freelist, hwm, txid uint64 }

// readMeta reads the page header and meta at off into b and decodes them
// if bbolt would accept them: magic, version and checksum right. Like
// bbolt, it does not look at the fields' values here.
func (c *checker) readMeta(off uint64, b *[headerSize + metaSize]byte) (m metaFields, ok bool, err error) {
	if off+headerSize+metaSize > c.size {
		return m, false, nil
	}
	if err := c.read(b[:], off); err != nil {
		return m, false, err
	}
	m, ok = decodeMeta(b[headerSize:])
	return m, ok, nil
}

// decodeMeta decodes the meta b if bbolt would accept it.
func decodeMeta(b []byte) (m metaFields, ok bool) {
	ne := binary.NativeEndian
	h := fnv.New64a()
	h.Write(b[:56])
	if ne.Uint32(b[0:]) != magic || ne.Uint32(b[4:]) != version || ne.Uint64(b[56:]) != h.Sum64() {
		return m, false
	}
	m.pageSize = uint64(ne.Uint32(b[8:]))
	m.root = ne.Uint64(b[16:])
	m.freelist = ne.Uint64(b[32:])
	m.hwm = ne.Uint64(b[40:])
	m.txid = ne.Uint64(b[48:])
	return m, true
}

// findPageSize finds the page size as bbolt's Open does (DB.getPageSize):
// from the first meta page if the file holds 4 KiB and it is valid, else
// from the first valid meta page at 1 KiB, 2 KiB, ... 16 MiB that lies
// more than 1 KiB before the end of the file.
func (c *checker) findPageSize() (uint64, bool, error) {
	b := &c.metas[0]
	if c.size >= 0x1000 {
		if m, ok, err := c.readMeta(0, b); ok || err != nil {
			return m.pageSize, ok, err
		}
	}
	for i := range 15 {
		pos := uint64(1024) << i
		if pos+1024 >= c.size {
			break
		}
		if m, ok, err := c.readMeta(pos, b); ok || err != nil {
			return m.pageSize, ok, err
		}
	}
	return 0, false, nil
}

// meta picks the meta page bbolt will use (of the two at pages 0 and 1,
// the valid one with the higher transaction id, page 0 on a tie) and
// checks its page size and high water mark against the file, so that the
// walk reads the tree and freelist that bbolt is about to read.
func (c *checker) meta() error {
	ps, ok, err := c.findPageSize()
	if err != nil {
		return err
	}
	if !ok {
		// bbolt's Open fails too, before it reads a page.
		return c.fail(structural, "no valid meta page")
	}
	if ps < minPageSize || ps > maxPageSize || ps&(ps-1) != 0 {
		return c.fail(hazard, "page size %d, want a power of two in %d..=%d", ps, minPageSize, maxPageSize)
	}
	c.pageSize, c.pages = ps, c.size/ps
	if c.pages < 2 {
		return c.fail(structural, "file holds %d pages of %d bytes, want at least 2", c.pages, ps)
	}
	m0, ok0, err := c.readMeta(0, &c.metas[0])
	if err != nil {
		return err
	}
	m1, ok1, err := c.readMeta(ps, &c.metas[1])
	if err != nil {
		return err
	}
	m := m0
	switch {
	case ok0 && (!ok1 || m0.txid >= m1.txid):
	case ok1:
		m = m1
	default:
		return c.fail(structural, "no valid meta page")
	}
	if m.pageSize != ps {
		if err := c.report(precaution, "meta page says pages of %d bytes, the file has pages of %d", m.pageSize, ps); err != nil {
			return err
		}
	}
	if m.hwm < 2 || m.hwm > c.pages {
		// bbolt would allocate pages from the high water mark on: beyond
		// the end of the file, or over the meta pages.
		return c.fail(hazard, "high water mark %d pages, file holds %d", m.hwm, c.pages)
	}
	if m.hwm*ps > MaxSize {
		return c.tooLarge(m.hwm*ps, "high water mark %d pages of %d bytes", m.hwm, ps)
	}
	c.hwm, c.root, c.freelist = m.hwm, m.root, m.freelist
	return c.metaHeaders()
}

// metaHeaders checks the page headers of both meta pages, valid or not:
// bbolt does not read them, but Tx.Check fails on a header that does
// not name its page as a meta page.
func (c *checker) metaHeaders() error {
	ne := binary.NativeEndian
	for id := range uint64(2) {
		got, flags := ne.Uint64(c.metas[id][0:]), ne.Uint16(c.metas[id][8:])
		k := structural // Tx.Check's tx.page asserts the id and one known type
		switch {
		case got == id && flags == metaFlag:
			continue
		case got == id && (flags == branchFlag || flags == leafFlag || flags == freelistFlag):
			k = precaution
		}
		if err := c.report(k, "meta page %d says it is page %d with flags %#x", id, got, flags); err != nil {
			return err
		}
	}
	return nil
}

// page loads page id and its overflow as the page walked at depth, and
// marks them reached as state. It checks that they lie in the file, below
// the high water mark and within MaxSize, that the page's header names
// it, and that no page is reached twice: a page shared by two parents
// would be written twice, and a page below itself is a cycle on which
// bbolt's own walk recurses forever. With ok false the page is not to be
// read, and the walk goes on without it.
func (c *checker) page(id uint64, state pageState, depth int) (p []byte, ok bool, err error) {
	if id < 2 {
		// bbolt would read the meta page as this page, and follow
		// whatever its bytes say.
		return nil, false, c.report(hazard, "page %d is a meta page, want 2..%d", id, c.hwm)
	}
	if id >= c.pages {
		return nil, false, c.report(hazard, "page %d beyond the end of the file, %d pages", id, c.pages)
	}
	if id >= c.hwm {
		k := structural // Tx.Check: out of bounds
		if id == c.hwm || state == freelistHead {
			// Tx.Check lets page hwm pass, and does not look at the
			// freelist page's bounds; bbolt would allocate them while in
			// use.
			k = precaution
		}
		if err := c.report(k, "page %d at or above the high water mark %d", id, c.hwm); err != nil {
			return nil, false, err
		}
	}
	off := id * c.pageSize
	if p, err = c.load(depth, off, c.pageSize, 0); err != nil {
		return nil, false, err
	}
	ne := binary.NativeEndian
	if got := ne.Uint64(p); got != id {
		if err := c.report(structural, "page %d says it is page %d", id, got); err != nil {
			return nil, false, err
		}
	}
	last := id + uint64(ne.Uint32(p[12:]))
	if last >= c.pages {
		return nil, false, c.report(hazard, "page %d overflows by %d pages past the end of the file, %d pages", id, last-id, c.pages)
	}
	if last >= c.hwm && id < c.hwm {
		// Tx.Check does not look at the overflow's bounds.
		if err := c.report(precaution, "page %d overflows by %d pages past the high water mark %d", id, last-id, c.hwm); err != nil {
			return nil, false, err
		}
	}
	if end := (last + 1) * c.pageSize; end > MaxSize {
		// Only past the high water mark, which lies within MaxSize.
		return nil, false, c.tooLarge(end, "page %d with %d overflow pages ends", id, last-id)
	}
	for q := id; q <= last; q++ {
		if c.state[q] == unseen {
			continue
		}
		for _, s := range c.path {
			if s.first <= q && q <= s.last {
				return nil, false, c.report(hazard, "page %d reached again below itself", q)
			}
		}
		k := structural
		if q != id || c.state[q] != state {
			// The walk read page q as something else, and goes on
			// without reading page id as this: bbolt would, and could
			// follow its bytes past the file (a freelist whose overflow
			// reaches into the tree, say).
			k = hazard
		}
		return nil, false, c.report(k, "page %d reached twice", q)
	}
	c.state[id] = state
	for q := id + 1; q <= last; q++ {
		c.state[q] = overflow
	}
	if last > id {
		if p, err = c.load(depth, off, (last+1-id)*c.pageSize, c.pageSize); err != nil {
			return nil, false, err
		}
	}
	return p, true, nil
}

// rootBucket checks the tree of the root bucket, whose keys are the
// names of the top-level buckets.
func (c *checker) rootBucket() error {
	if c.root == 0 {
		// Tx.Check skips an inline root bucket, but bbolt would then read
		// the meta page as the root.
		return c.report(precaution, "root bucket on page 0")
	}
	_, err := c.tree(c.root, nil, nil, 0)
	return err
}

// tree checks the branch or leaf page id and everything below it: the
// keys of the subtree lie in [lo, hi) (nil bounds are open), as bbolt's
// Tx.Check demands. It returns the greatest key in the subtree, or nil if
// the subtree holds none or could not be read.
func (c *checker) tree(id uint64, lo, hi []byte, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, c.report(hazard, "pages and buckets nested deeper than %d", maxDepth)
	}
	p, ok, err := c.page(id, nodePage, depth)
	if !ok {
		return nil, err
	}
	c.path = append(c.path, span{id, id + uint64(len(p))/c.pageSize - 1})
	defer func() { c.path = c.path[:len(c.path)-1] }()

	ne := binary.NativeEndian
	switch flags := ne.Uint16(p[8:]); flags {
	case branchFlag:
		return c.branch(p, id, lo, hi, depth)
	case leafFlag:
		return c.leaf(p, id, lo, hi, depth)
	default:
		// A hazard: bbolt's page check lets a meta or freelist page
		// through, and it would then read that page's bytes as elements
		// and follow them as page ids, beyond the file.
		return nil, c.report(hazard, "page %d has flags %#x, want a branch or leaf page", id, flags)
	}
}

// elements returns the number of elements of page p, after checking
// that they fit in it. bbolt would read elements past the page.
func (c *checker) elements(p []byte, id uint64, k kind) (uint64, error) {
	count := uint64(binary.NativeEndian.Uint16(p[10:]))
	if headerSize+count*elemSize > uint64(len(p)) {
		return 0, c.report(k, "page %d: %d elements overflow it", id, count)
	}
	return count, nil
}

// branchElem returns the key and child page of element i of branch page
// p, after checking that the key lies in the page.
func (c *checker) branchElem(p []byte, id, i uint64) (key []byte, child uint64, err error) {
	ne := binary.NativeEndian
	e := headerSize + i*elemSize
	pos, ksize := uint64(ne.Uint32(p[e:])), uint64(ne.Uint32(p[e+4:]))
	if e+pos+ksize > uint64(len(p)) {
		return nil, 0, c.report(hazard, "page %d element %d lies outside the page", id, i)
	}
	return p[e+pos : e+pos+ksize], ne.Uint64(p[e+8:]), nil
}

// branch checks branch page p: each element's key in order, its child's
// subtree within the key and the next one, and every child reached.
func (c *checker) branch(p []byte, id uint64, lo, hi []byte, depth int) (max []byte, err error) {
	count, err := c.elements(p, id, hazard)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, c.report(precaution, "page %d: empty branch", id)
	}
	// Like Tx.Check, each key must exceed the greatest key below the one
	// before; that keys also exceed the key before is a precaution (they
	// need not when a subtree is empty).
	var prev []byte
	for i := range count {
		key, child, err := c.branchElem(p, id, i)
		if err != nil {
			return nil, err
		}
		if err := c.keyOrder(structural, id, i, key, max, lo, hi); err != nil {
			return nil, err
		}
		if i > 0 && bytes.Compare(key, prev) <= 0 {
			if err := c.report(precaution, "page %d element %d: branch keys out of order", id, i); err != nil {
				return nil, err
			}
		}
		next := hi
		if i+1 < count {
			if next, _, err = c.branchElem(p, id, i+1); err != nil {
				return nil, err
			}
		}
		if max, err = c.tree(child, key, next, depth+1); err != nil {
			return nil, err
		}
		prev = key
	}
	return max, nil
}

// keyOrder checks key, element i of page id, as Tx.Check does: the
// first key not below lo, each key above prev (the key before on a leaf,
// the greatest key below the element before on a branch), and every key
// below hi. bbolt's searches rely on it.
func (c *checker) keyOrder(k kind, id, i uint64, key, prev, lo, hi []byte) error {
	if i == 0 {
		prev = lo
	}
	if i == 0 && prev != nil && bytes.Compare(prev, key) > 0 ||
		i > 0 && bytes.Compare(prev, key) >= 0 ||
		hi != nil && bytes.Compare(key, hi) >= 0 {
		return c.report(k, "page %d element %d out of order", id, i)
	}
	return nil
}

// leaf checks leaf page p (a page, or the inline page of a bucket when
// id is 0): its keys in order within [lo, hi), its elements within the
// page, and the buckets its elements hold.
func (c *checker) leaf(p []byte, id uint64, lo, hi []byte, depth int) (max []byte, err error) {
	// Tx.Check does not read inline pages, nor does bbolt before a
	// transaction opens the bucket: all they could hold is a precaution.
	k, bounds := structural, hazard
	if id == 0 {
		k, bounds = precaution, precaution
	}
	count, err := c.elements(p, id, bounds)
	if err != nil || count == 0 {
		return nil, err
	}
	ne := binary.NativeEndian
	var prev []byte
	for i := range count {
		e := headerSize + i*elemSize
		flags := ne.Uint32(p[e:])
		pos, ksize, vsize := uint64(ne.Uint32(p[e+4:])), uint64(ne.Uint32(p[e+8:])), uint64(ne.Uint32(p[e+12:]))
		start := e + pos
		if start+ksize+vsize > uint64(len(p)) {
			return nil, c.report(bounds, "page %d element %d lies outside the page", id, i)
		}
		key, val := p[start:start+ksize], p[start+ksize:start+ksize+vsize]
		if err := c.keyOrder(k, id, i, key, prev, lo, hi); err != nil {
			return nil, err
		}
		prev = key
		if err := c.leafElem(id, i, flags, key, val, depth); err != nil {
			return nil, err
		}
	}
	return prev, nil
}

// leafElem checks what bbolt itself never writes into element i of leaf
// page id (flags other than the bucket flag, an empty key, a bucket
// inside an inline bucket) and checks the bucket the element holds.
func (c *checker) leafElem(id, i uint64, flags uint32, key, val []byte, depth int) error {
	if flags&^bucketElemFlag != 0 {
		if err := c.report(precaution, "page %d element %d has flags %#x", id, i, flags); err != nil {
			return err
		}
	}
	if len(key) == 0 {
		if err := c.report(precaution, "page %d element %d has an empty key", id, i); err != nil {
			return err
		}
	}
	if flags&bucketElemFlag == 0 {
		return nil
	}
	if id == 0 {
		return c.report(precaution, "inline bucket holds bucket %x", key)
	}
	return c.bucket(id, i, val, depth)
}

// bucket checks the bucket that element i of page id holds: its header,
// and its tree, on its own root page or inline after the header.
func (c *checker) bucket(id, i uint64, val []byte, depth int) error {
	if len(val) < bucketSize {
		// bbolt would read the header past the value.
		return c.report(hazard, "page %d element %d: bucket header of %d bytes", id, i, len(val))
	}
	root := binary.NativeEndian.Uint64(val)
	if root != 0 {
		_, err := c.tree(root, nil, nil, depth+1)
		return err
	}
	inline := val[bucketSize:]
	if len(inline) < headerSize {
		return c.report(precaution, "page %d element %d: inline bucket of %d bytes", id, i, len(inline))
	}
	if flags := binary.NativeEndian.Uint16(inline[8:]); flags != leafFlag {
		return c.report(precaution, "page %d element %d: inline bucket has flags %#x", id, i, flags)
	}
	_, err := c.leaf(inline, 0, nil, nil, depth+1)
	return err
}

// freelistPage checks the freelist page: every free page is listed once,
// lies below the high water mark, and is not in use, so that bbolt never
// hands out a page that still holds data.
func (c *checker) freelistPage() error {
	if c.freelist == noFreelist {
		return nil // bbolt rebuilds the freelist from the tree
	}
	p, ok, err := c.page(c.freelist, freelistHead, 0)
	if !ok {
		return err
	}
	ne := binary.NativeEndian
	if flags := ne.Uint16(p[8:]); flags != freelistFlag {
		return c.report(structural, "freelist page %d has flags %#x", c.freelist, flags)
	}
	start, count := uint64(headerSize), uint64(ne.Uint16(p[10:]))
	if count == 0xFFFF {
		if len(p) < headerSize+8 {
			return c.report(hazard, "freelist page %d too short", c.freelist)
		}
		start, count = headerSize+8, ne.Uint64(p[headerSize:])
	}
	if count > (uint64(len(p))-start)/8 {
		return c.report(hazard, "freelist page %d lists %d pages, more than it holds", c.freelist, count)
	}
	for i := range count {
		if err := c.free(ne.Uint64(p[start+i*8:])); err != nil {
			return err
		}
	}
	return nil
}

// free checks page f, listed free.
func (c *checker) free(f uint64) error {
	const msg = "freelist page %d lists page %d, which is %s"
	switch {
	case f < 2 || f >= c.hwm:
		// Tx.Check ignores it; bbolt would allocate it.
		return c.report(precaution, msg, c.freelist, f, "out of range")
	case c.state[f] == listed:
		return c.report(structural, msg, c.freelist, f, "listed twice")
	case c.state[f] == nodePage:
		return c.report(structural, msg, c.freelist, f, "in use")
	case c.state[f] != unseen:
		// An overflow page or the freelist itself: Tx.Check does not
		// look, but bbolt would allocate it while in use.
		return c.report(precaution, msg, c.freelist, f, "in use")
	}
	c.state[f] = listed
	return nil
}

// unaccounted checks that every page below the high water mark is in
// use or free, as Tx.Check does: a page lost to both would mean the tree
// or the freelist lost track of it.
func (c *checker) unaccounted() error {
	if c.freelist == noFreelist {
		return nil // bbolt frees every page the tree does not reach
	}
	var n, first uint64
	for q := uint64(2); q < c.hwm; q++ {
		if c.state[q] == unseen {
			if n == 0 {
				first = q
			}
			n++
		}
	}
	if n > 0 {
		return c.report(structural, "%d pages neither reachable nor free, the first page %d", n, first)
	}
	return nil
}
