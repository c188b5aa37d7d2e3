package launchlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt trusts its file: a damaged page can make it fault, loop, or
// commit garbage (a page claiming gigabytes of overflow grows the file by
// that much; a page listed as both free and in use is overwritten while
// still in use, which could hand out a counter value twice). So before each
// transaction the log checks the structure bbolt is about to use: the
// meta page it will pick, every page reachable from it, and the freelist.
// The file is small, so reading it whole costs little next to the fsync.
//
// The on-disk format (bbolt's, version 2, in the host's byte order):
//
//	page header  id u64 | flags u16 | count u16 | overflow u32
//	meta         magic u32 | version u32 | page size u32 | flags u32 |
//	             root {page u64, sequence u64} | freelist u64 | high water u64 |
//	             txid u64 | checksum u64 (FNV-64a of the fields before it)
//	branch elem  pos u32 | key size u32 | child page u64
//	leaf elem    flags u32 | pos u32 | key size u32 | value size u32
//
// An element's key starts pos bytes after the element; a leaf's value
// follows its key. A leaf element with flag 1 is a bucket: its value is
// {root page u64, sequence u64}, followed by an inline leaf page when the
// root page is 0.

const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	branchFlag     = 0x01
	leafFlag       = 0x02
	freelistFlag   = 0x10
	bucketElemFlag = 0x01
	headerSize     = 16
	elemSize       = 16
	noFreelist     = ^uint64(0)
	maxDepth       = 64
)

var errStructure = errors.New("bad structure")

// verifyFile reads the locked file f whole and verifies its structure.
// An empty file is one bbolt is about to create.
func verifyFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return verify(data)
}

// verify checks that data is a bbolt file whose current tree and freelist
// are consistent.
func verify(data []byte) error {
	meta, err := pickMeta(data)
	if err != nil {
		return err
	}
	v := verifier{
		data:     data,
		pageSize: uint64(meta.pageSize),
		hwm:      meta.pgid,
		used:     make(map[uint64]bool),
	}
	if v.hwm < 2 || v.hwm > uint64(len(data))/v.pageSize {
		return fmt.Errorf("%w: high water mark %d pages, file holds %d", errStructure, v.hwm, uint64(len(data))/v.pageSize)
	}
	if err := v.tree(meta.root, nil, nil, 0); err != nil {
		return err
	}
	if meta.freelist != noFreelist {
		return v.freelist(meta.freelist)
	}
	return nil
}

type boltMeta struct {
	pageSize                   uint32
	root, freelist, pgid, txid uint64
}

// readMeta decodes the meta page at off, or reports why it is invalid.
func readMeta(data []byte, off uint64) (boltMeta, bool) {
	const size = 64
	if off+headerSize+size > uint64(len(data)) {
		return boltMeta{}, false
	}
	b := data[off+headerSize : off+headerSize+size]
	ne := binary.NativeEndian
	h := fnv.New64a()
	h.Write(b[:56])
	if ne.Uint32(b[0:]) != boltMagic || ne.Uint32(b[4:]) != boltVersion || ne.Uint64(b[56:]) != h.Sum64() {
		return boltMeta{}, false
	}
	m := boltMeta{
		pageSize: ne.Uint32(b[8:]),
		root:     ne.Uint64(b[16:]),
		freelist: ne.Uint64(b[32:]),
		pgid:     ne.Uint64(b[40:]),
		txid:     ne.Uint64(b[48:]),
	}
	if m.pageSize < 512 || m.pageSize > 1<<24 || m.pageSize&(m.pageSize-1) != 0 {
		return boltMeta{}, false
	}
	return m, true
}

// pickMeta returns the meta page bbolt will use: of the two, the valid one
// with the higher transaction id.
func pickMeta(data []byte) (boltMeta, error) {
	m0, ok0 := readMeta(data, 0)
	pageSize := uint64(m0.pageSize)
	if !ok0 {
		// Like bbolt, find the page size from the second meta page.
		for i := range 15 {
			if m, ok := readMeta(data, 1024<<i); ok && uint64(m.pageSize) == 1024<<i {
				pageSize = uint64(m.pageSize)
				break
			}
		}
	}
	if pageSize == 0 {
		return boltMeta{}, fmt.Errorf("%w: no valid meta page", errStructure)
	}
	m1, ok1 := readMeta(data, pageSize)
	ok0 = ok0 && uint64(m0.pageSize) == pageSize
	ok1 = ok1 && uint64(m1.pageSize) == pageSize
	switch {
	case ok0 && (!ok1 || m0.txid >= m1.txid):
		return m0, nil
	case ok1:
		return m1, nil
	}
	return boltMeta{}, fmt.Errorf("%w: no valid meta page", errStructure)
}

type verifier struct {
	data     []byte
	pageSize uint64
	hwm      uint64
	used     map[uint64]bool // pages reachable from the root, overflow included
}

// page returns the bytes of page id and its overflow, marking them used.
func (v *verifier) page(id uint64) ([]byte, error) {
	if id < 2 || id >= v.hwm {
		return nil, fmt.Errorf("%w: page %d outside 2..%d", errStructure, id, v.hwm)
	}
	off := id * v.pageSize
	hdr := v.data[off : off+headerSize]
	ne := binary.NativeEndian
	if got := ne.Uint64(hdr); got != id {
		return nil, fmt.Errorf("%w: page %d says it is page %d", errStructure, id, got)
	}
	overflow := uint64(ne.Uint32(hdr[12:]))
	if overflow >= v.hwm-id {
		return nil, fmt.Errorf("%w: page %d overflows by %d pages past the high water mark %d", errStructure, id, overflow, v.hwm)
	}
	for p := id; p <= id+overflow; p++ {
		if v.used[p] {
			return nil, fmt.Errorf("%w: page %d reached twice", errStructure, p)
		}
		v.used[p] = true
	}
	return v.data[off : off+(overflow+1)*v.pageSize], nil
}

// tree verifies the B+tree rooted at page id, whose keys lie in [lo, hi)
// (nil bounds are open).
func (v *verifier) tree(id uint64, lo, hi []byte, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: tree deeper than %d", errStructure, maxDepth)
	}
	p, err := v.page(id)
	if err != nil {
		return err
	}
	return v.node(p, id, lo, hi, depth)
}

// node verifies the branch or leaf page p (a page, or an inline page of a
// bucket when id is 0).
func (v *verifier) node(p []byte, id uint64, lo, hi []byte, depth int) error {
	if len(p) < headerSize {
		return fmt.Errorf("%w: page %d shorter than its header", errStructure, id)
	}
	ne := binary.NativeEndian
	flags, count := ne.Uint16(p[8:]), uint64(ne.Uint16(p[10:]))
	if flags != leafFlag && (flags != branchFlag || id == 0) {
		return fmt.Errorf("%w: page %d has flags %#x", errStructure, id, flags)
	}
	if headerSize+count*elemSize > uint64(len(p)) {
		return fmt.Errorf("%w: page %d: %d elements overflow it", errStructure, id, count)
	}
	if flags == branchFlag && count == 0 {
		return fmt.Errorf("%w: page %d: empty branch", errStructure, id)
	}
	prev := lo
	for i := range count {
		e := headerSize + i*elemSize
		el := p[e : e+elemSize]
		var pos, ksize, vsize uint64
		if flags == branchFlag {
			pos, ksize = uint64(ne.Uint32(el)), uint64(ne.Uint32(el[4:]))
		} else {
			if f := ne.Uint32(el); f&^bucketElemFlag != 0 {
				return fmt.Errorf("%w: page %d element %d has flags %#x", errStructure, id, i, f)
			}
			pos, ksize, vsize = uint64(ne.Uint32(el[4:])), uint64(ne.Uint32(el[8:])), uint64(ne.Uint32(el[12:]))
		}
		start := e + pos
		if ksize == 0 || start+ksize+vsize > uint64(len(p)) {
			return fmt.Errorf("%w: page %d element %d lies outside the page", errStructure, id, i)
		}
		key := p[start : start+ksize]
		if (i > 0 || prev != nil) && bytes.Compare(key, prev) < 0 || i > 0 && bytes.Equal(key, prev) ||
			hi != nil && bytes.Compare(key, hi) >= 0 {
			return fmt.Errorf("%w: page %d element %d out of order", errStructure, id, i)
		}
		prev = key
		if flags == branchFlag {
			childLo := key
			if i == 0 {
				childLo = lo
			}
			childHi := hi
			if i+1 < count {
				n := headerSize + (i+1)*elemSize
				npos, nksize := uint64(ne.Uint32(p[n:])), uint64(ne.Uint32(p[n+4:]))
				if n+npos+nksize > uint64(len(p)) {
					return fmt.Errorf("%w: page %d element %d lies outside the page", errStructure, id, i+1)
				}
				childHi = p[n+npos : n+npos+nksize]
			}
			if err := v.tree(ne.Uint64(el[8:]), childLo, childHi, depth+1); err != nil {
				return err
			}
			continue
		}
		if ne.Uint32(el)&bucketElemFlag == 0 {
			continue
		}
		val := p[start+ksize : start+ksize+vsize]
		if len(val) < 16 {
			return fmt.Errorf("%w: page %d element %d: bucket header of %d bytes", errStructure, id, i, len(val))
		}
		var err error
		if root := ne.Uint64(val); root == 0 {
			err = v.node(val[16:], 0, nil, nil, depth+1)
		} else {
			err = v.tree(root, nil, nil, depth+1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// freelist verifies the freelist page: every free page is below the high
// water mark, listed once, and not in use.
func (v *verifier) freelist(id uint64) error {
	p, err := v.page(id)
	if err != nil {
		return err
	}
	ne := binary.NativeEndian
	if flags := ne.Uint16(p[8:]); flags != freelistFlag {
		return fmt.Errorf("%w: freelist page %d has flags %#x", errStructure, id, flags)
	}
	start, count := uint64(headerSize), uint64(ne.Uint16(p[10:]))
	if count == 0xFFFF {
		if len(p) < headerSize+8 {
			return fmt.Errorf("%w: freelist page %d too short", errStructure, id)
		}
		start, count = headerSize+8, ne.Uint64(p[headerSize:])
	}
	if count > (uint64(len(p))-start)/8 {
		return fmt.Errorf("%w: freelist page %d lists %d pages, more than it holds", errStructure, id, count)
	}
	free := make(map[uint64]bool, count)
	for i := range count {
		f := ne.Uint64(p[start+i*8:])
		if f < 2 || f >= v.hwm || v.used[f] || free[f] {
			return fmt.Errorf("%w: freelist page %d lists page %d, which is in use or out of range", errStructure, id, f)
		}
		free[f] = true
	}
	return nil
}
